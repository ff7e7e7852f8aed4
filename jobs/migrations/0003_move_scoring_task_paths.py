"""The tasks of evaluation/scoring_tasks.py moved into evaluation/tasks.py (one tasks module).
Jobs store their task's import path (Job.task, to start a job again) and so do the database
queue's rows (django_tasks_db's task_path, to run it): both are rewritten so work queued or
failed before the upgrade still runs and can still be retried."""

from django.db import migrations
from django.db.models import Value
from django.db.models.functions import Replace

OLD = "evaluation.scoring_tasks."
NEW = "evaluation.tasks."


def move(apps, schema_editor, *, old=OLD, new=NEW):
    Job = apps.get_model("jobs", "Job")
    Job.objects.filter(task__startswith=old).update(task=Replace("task", Value(old), Value(new)))
    try:
        DBTaskResult = apps.get_model("django_tasks_database", "DBTaskResult")
    except LookupError:  # the database queue is not installed
        return
    DBTaskResult.objects.filter(task_path__startswith=old).update(
        task_path=Replace("task_path", Value(old), Value(new))
    )


def move_back(apps, schema_editor):
    move(apps, schema_editor, old=NEW + "import_and_score_task", new=OLD + "import_and_score_task")
    move(apps, schema_editor, old=NEW + "score_runs_task", new=OLD + "score_runs_task")


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0002_retry"),
        ("django_tasks_database", "0021_conditional_partial_index_ordering"),
    ]

    operations = [migrations.RunPython(move, move_back)]
