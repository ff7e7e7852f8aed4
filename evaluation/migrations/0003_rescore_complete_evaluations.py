"""Evaluations scored with `-c` (complete) before the fix of its summary num_rel (it now
counts the relevant judgments of every qrels topic, as trec_eval does) hold the old figure.
They are derived data: delete them, and the dashboards score those runs again on demand."""

from django.db import migrations


def forget_complete_evaluations(apps, schema_editor):
    Evaluation = apps.get_model("evaluation", "Evaluation")
    Evaluation.objects.filter(options__complete=True).delete()


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0002_evaluation_intervals")]

    operations = [migrations.RunPython(forget_complete_evaluations, migrations.RunPython.noop)]
