from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from accounts.services.roles import Role
from evaluation import tasks
from jobs.models import Job, JobStatus
from jobs.services import start_job
from tests.jobs.locks import short_busy_timeout  # noqa: F401 (a fixture)

RUN = b"1 Q0 d1 1 3.0 bm25\n1 Q0 d2 2 2.0 bm25\n2 Q0 d4 1 5.5 bm25\n"


@pytest.fixture
def engineer(django_user_model):
    user = django_user_model.objects.create_user("eng")
    user.groups.add(Group.objects.get(name=Role.ENGINEER))
    return user


@pytest.fixture
def start_import(engineer, media_root, django_capture_on_commit_callbacks):
    """``start_import(data=RUN, run=True)``: stage a run file and start the import job as the
    API does; with ``run``, the task runs at once (immediate backend), else it stays queued."""

    def start(data: bytes = RUN, *, run: bool = True, filename: str = "bm25.run") -> Job:
        staged = default_storage.save(f"staging/runs/{filename}", ContentFile(data))
        with django_capture_on_commit_callbacks(execute=run):
            job = start_job(
                kind="evaluation.import_run",
                title=f"Import run {filename}",
                user=engineer,
                task=tasks.import_run_task,
                staged=staged,
                filename=filename,
                system="bm25",
                name="",
                description="",
            )
        job.refresh_from_db()
        return job

    return start


def make_stalled(job: Job, *, seconds: int = 3600) -> Job:
    """What a worker killed mid-job leaves: running, not heard from for ``seconds``."""
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, updated_at=timezone.now() - timedelta(seconds=seconds)
    )
    job.refresh_from_db()
    return job
