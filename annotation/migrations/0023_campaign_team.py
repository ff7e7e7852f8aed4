import django.db.models.deletion
from django.db import migrations, models

import accounts.services.teams


def into_default_team(apps, schema_editor):
    Team = apps.get_model("accounts", "Team")
    team, _ = Team.objects.get_or_create(slug="default", defaults={"name": "Default team"})
    apps.get_model("annotation", "Campaign").objects.update(team=team)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_teams"),
        ("annotation", "0022_certified_design_redraws"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="team",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="accounts.team"),
        ),
        migrations.RunPython(into_default_team, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="campaign",
            name="team",
            field=models.ForeignKey(default=accounts.services.teams.default_team_pk, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="accounts.team"),
        ),
    ]
