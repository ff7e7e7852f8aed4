import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def create_default_team(apps, schema_editor):
    """The default team: everything made so far goes there (the apps' migrations that add
    their ``team`` fields), and the roles users hold as groups are their roles there."""
    Team = apps.get_model("accounts", "Team")
    Team.objects.get_or_create(slug="default", defaults={"name": "Default team"})


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_oidc_identities"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Team",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, unique=True)),
                ("slug", models.SlugField(unique=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.CreateModel(
            name="Membership",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("role", models.CharField(choices=[("judge", "Judge"), ("lead", "Lead"), ("engineer", "Engineer")], max_length=20)),
                ("from_sso", models.BooleanField(default=False)),
                ("team", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="accounts.team")),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["team__name", "user__username", "role"],
                "constraints": [models.UniqueConstraint(fields=("team", "user", "role"), name="accounts_membership_unique")],
            },
        ),
        migrations.RunPython(create_default_team, migrations.RunPython.noop),
    ]
