"""Start jobs, report their progress, and record how they ended."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from jobs.models import Job, JobStatus

logger = logging.getLogger(__name__)

MAX_ERRORS_SHOWN = 50


class JobFailed(Exception):
    """A failure to show the user as it is (a bad file, a refused import): not a crash.

    ``errors`` are the lines to list (file:line: problem), ``total`` how many there were."""

    def __init__(self, message: str, *, errors: list[str] | None = None, total: int | None = None):
        super().__init__(message)
        self.errors = errors or []
        self.total = total if total is not None else len(self.errors)


def start_job(*, kind: str, title: str, user, task, total: int = 1, **params) -> Job:
    """Create the job row and enqueue ``task(job_id=…, **params)`` once the row is committed
    (a queued task must never point at a row that was rolled back)."""
    job = Job.objects.create(kind=kind, title=title, created_by=user, total=total)
    transaction.on_commit(lambda: task.enqueue(job_id=job.pk, **params))
    return job


class Progress:
    """Handed to the work: ``progress.step("Scoring", done=2)`` updates the job row at once
    (outside any transaction of the work, so the progress bar sees it)."""

    def __init__(self, job: Job):
        self.job = job
        self.result: dict = {}

    def step(self, text: str, *, done: int | None = None, total: int | None = None) -> None:
        fields = {"step": text, "updated_at": timezone.now()}
        if done is not None:
            fields["done"] = done
        if total is not None:
            fields["total"] = total
        Job.objects.filter(pk=self.job.pk).update(**fields)


@contextmanager
def running(job_id: int) -> Iterator[Progress]:
    """Run a job's work: marks it running, then succeeded (with the result the work put in
    ``progress.result``) or failed (with the errors of a JobFailed, or a generic message for
    an unexpected crash, which is logged and re-raised so the task backend sees it)."""
    job = Job.objects.get(pk=job_id)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, updated_at=timezone.now())
    progress = Progress(job)
    try:
        yield progress
    except JobFailed as failure:
        _finish(
            job,
            JobStatus.FAILED,
            step=str(failure),
            errors=failure.errors[:MAX_ERRORS_SHOWN],
            error_total=failure.total,
        )
    except Exception:
        logger.exception("job %s (%s) crashed", job.pk, job.kind)
        _finish(
            job,
            JobStatus.FAILED,
            step="Failed unexpectedly; the error was logged. Try again, or tell an admin.",
        )
        raise
    else:
        _finish(job, JobStatus.SUCCEEDED, step="Done", result=progress.result)


def _finish(job: Job, status: JobStatus, **fields) -> None:
    now = timezone.now()
    Job.objects.filter(pk=job.pk).update(status=status, finished_at=now, updated_at=now, **fields)


def stage_upload(upload, *, prefix: str) -> str:
    """Keep an uploaded file in storage until its job has read it; returns the name."""
    return default_storage.save(f"staging/{prefix}/{upload.name}", upload)


def drop_staged(name: str) -> None:
    if name:
        default_storage.delete(name)
