"""A machine judge's stored key is kept encrypted (common/secrets.py): existing keys are
sealed, the plain column is removed."""

from django.db import migrations, models


def seal_keys(apps, schema_editor):
    from common.secrets import seal

    MachineJudge = apps.get_model("annotation", "MachineJudge")
    for machine in MachineJudge.objects.exclude(api_key=""):
        machine.api_key_sealed = seal(machine.api_key)
        machine.save(update_fields=["api_key_sealed"])


def unseal_keys(apps, schema_editor):
    from common.secrets import SecretError, unseal

    MachineJudge = apps.get_model("annotation", "MachineJudge")
    for machine in MachineJudge.objects.exclude(api_key_sealed=""):
        try:
            machine.api_key = unseal(machine.api_key_sealed)[:500]
        except SecretError:
            machine.api_key = ""
        machine.save(update_fields=["api_key"])


class Migration(migrations.Migration):
    dependencies = [("annotation", "0017_pool_ordering_bandit_across_topics")]

    operations = [
        migrations.AddField(
            model_name="machinejudge",
            name="api_key_sealed",
            field=models.TextField(
                blank=True,
                help_text="The stored key, encrypted (common/secrets.py); never shown back.",
            ),
        ),
        migrations.RunPython(seal_keys, unseal_keys),
        migrations.RemoveField(model_name="machinejudge", name="api_key"),
        migrations.AlterField(
            model_name="machineanswer",
            name="failure",
            field=models.CharField(
                blank=True,
                help_text="timeout, connection, rate_limited, server_error, unreachable, "
                "refused, bad_response, not_a_grade, no_text",
                max_length=20,
            ),
        ),
    ]
