import django.db.models.deletion
from django.db import migrations, models

import accounts.services.teams

OWNED = ("qrelsversion", "system", "searchendpoint")


def into_default_team(apps, schema_editor):
    Team = apps.get_model("accounts", "Team")
    team, _ = Team.objects.get_or_create(slug="default", defaults={"name": "Default team"})
    for name in OWNED:
        apps.get_model("evaluation", name).objects.update(team=team)


def team_field(null=False):
    if null:
        return models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="accounts.team")
    return models.ForeignKey(default=accounts.services.teams.default_team_pk, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="accounts.team")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_teams"),
        ("evaluation", "0010_schedule_failure_alerts_edits_and_recovery"),
    ]

    operations = [
        *(migrations.AddField(model_name=name, name="team", field=team_field(null=True)) for name in OWNED),
        migrations.RunPython(into_default_team, migrations.RunPython.noop),
        *(migrations.AlterField(model_name=name, name="team", field=team_field()) for name in OWNED),
        migrations.AddField(
            model_name="qrelsversion",
            name="shared_with",
            field=models.ManyToManyField(blank=True, related_name="+", to="accounts.team"),
        ),
        migrations.AlterField(model_name="system", name="name", field=models.CharField(max_length=100)),
        migrations.AlterField(model_name="searchendpoint", name="name", field=models.CharField(max_length=100)),
        migrations.AddConstraint(
            model_name="system",
            constraint=models.UniqueConstraint(fields=("team", "name"), name="system_name_unique_in_team"),
        ),
        migrations.AddConstraint(
            model_name="searchendpoint",
            constraint=models.UniqueConstraint(fields=("team", "name"), name="search_endpoint_unique_in_team"),
        ),
    ]
