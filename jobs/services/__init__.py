"""Start jobs, report their progress, record how they ended, and start again the work a
crash or a killed worker interrupted."""

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.core.files.storage import default_storage
from django.db import DatabaseError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.tasks import Task, TaskResultStatus
from django.utils import timezone
from django.utils.module_loading import import_string
from django_tasks_db.models import DBTaskResult

from common.database import is_database_locked
from jobs.models import HEARTBEAT_SECONDS, STALE_AFTER_SECONDS, Job, JobStatus

logger = logging.getLogger(__name__)

# A refused file's errors kept on its job: a reader lists at most 50 (evaluation.trec's
# MAX_ERRORS) and, when it stopped at its cap, a last line saying where.
MAX_ERRORS_SHOWN = 51
STAGING = "staging"

MESSAGES = {
    "crashed": "Failed unexpectedly; the error was logged. Try again, or tell an admin.",
    "database_busy": "The database stayed busy with another write for longer than this job "
    "could wait (database is locked); nothing was stored. Try again.",
    "worker_lost": "The worker running this job stopped before it finished; nothing was "
    "stored. Try again.",
    "worker_lost_before_start": "The worker that took this job stopped before starting it; "
    "nothing was done. Try again.",
    "queued_again": "Queued again (attempt {attempt}).",
    "not_retryable_running": "This job is still running: wait for it to finish.",
    "not_retryable_queued": "This job is waiting for a worker already.",
    "not_retryable_succeeded": "This job succeeded; there is nothing to try again.",
    "not_retryable_cancelled": "This job was cancelled; start the work again from its page.",
    "not_retryable_refused": "This job was refused for a reason trying again will not change "
    "(see its errors): fix the input and start a new one.",
    "not_retryable_unknown": "This job cannot be started again: it predates retries.",
    "upload_gone": "The uploaded file of this job is no longer stored: upload it again.",
    "storage_unavailable": "The file store is unavailable, so the upload was not kept and "
    "nothing was started. Try again in a moment.",
}


class StorageUnavailable(Exception):
    """The file store refused or dropped the write of an upload: nothing was stored and no
    job started, so the same request may simply be sent again (config/storage.py answers
    503 for it, on pages and in the API)."""


class JobFailed(Exception):
    """A failure to show the user as it is (a bad file, a refused import): not a crash.

    ``errors`` are the lines to list (file:line: problem), ``total`` how many there were;
    ``result`` a way on (``url`` and ``label``: the job's page shows it as a button)."""

    status = JobStatus.FAILED  # how the job ends

    def __init__(
        self,
        message: str,
        *,
        errors: list[str] | None = None,
        total: int | None = None,
        result: dict | None = None,
    ):
        super().__init__(message)
        self.errors = errors or []
        self.total = total if total is not None else len(self.errors)
        self.result = result or {}

    @classmethod
    def not_imported(cls, filename: str, error) -> "JobFailed":
        """A file the reader refused (a TrecFormatError: its ``errors``, each naming the
        file, the line and the problem, and their ``total``), as every import job says it."""
        return cls(
            f"{filename} was not imported.",
            errors=[str(line) for line in error.errors],
            total=error.total,
        )


class JobCancelled(JobFailed):
    """The work stopped because its user cancelled it (between its steps): the job ends
    cancelled, with the message saying what was done, and is not tried again."""

    status = JobStatus.CANCELLED


class JobNotRetryable(Exception):
    """retry_job refused: the message says why (shown as it is)."""


# --- a locked database ---------------------------------------------------------------------
# On SQLite one connection writes at a time; another waits up to the busy timeout (settings:
# SQLITE_TIMEOUT), then fails with "database is locked". PostgreSQL never says it (writers
# wait on row locks). The job's own bookkeeping must outlast such a wait: a job is never left
# "running" or "queued" because recording its state met a long write.

# Seconds to pause after each "database is locked" before trying again (each attempt has
# already waited the busy timeout): two minutes of pauses in all, then the error is raised.
LOCKED_RETRY_DELAYS = (1, 2, 4, 8, 16, 32, 64)


def patiently(write: Callable[[], object], *, what: str, delays=LOCKED_RETRY_DELAYS):
    """``write()``, tried again after each "database is locked", waiting ``delays`` between
    attempts; other errors, and the last lock, are raised. Outside a transaction only: a
    failed statement inside one has spoilt it (the caller's transaction must be retried)."""
    for delay in delays:
        try:
            return write()
        except OperationalError as error:
            if connection.in_atomic_block or not is_database_locked(error):
                raise
            logger.warning("%s: the database is locked; trying again in %s s", what, delay)
            time.sleep(delay)
    return write()


def start_job(*, kind: str, title: str, user, task: Task, total: int = 1, **params) -> Job:
    """Create the job row and enqueue ``task(job_id=…, **params)`` once the row is committed
    (a queued task must never point at a row that was rolled back). The task and its
    arguments (plain JSON) are kept on the row so retry_job can enqueue them again; a
    ``staged`` argument names an upload the job reads, kept until the job is over."""
    job = Job.objects.create(
        kind=kind, title=title, created_by=user, total=total, task=task.module_path, params=params
    )
    transaction.on_commit(lambda: _enqueue(job, task, params))
    return job


def _enqueue(job: Job, task: Task, params: dict) -> None:
    """Enqueue the job's task; while it waits in a queue (the database queue's backend),
    keep the queue row's id on the job (recover_stalled_jobs). A backend that ran it at
    once (the immediate backend) has nothing left to find."""
    result = task.enqueue(job_id=job.pk, **params)
    if result.status == TaskResultStatus.READY:
        Job.objects.filter(pk=job.pk, attempt=job.attempt).update(task_result_id=str(result.id))


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
        try:
            Job.objects.filter(pk=self.job.pk).update(**fields)
        except OperationalError as error:
            # Progress is for the eye: a database busy with another write does not stop the
            # work (inside the work's own transaction the error is the work's to handle).
            if connection.in_atomic_block or not is_database_locked(error):
                raise
            logger.warning("job %s: progress not recorded, the database is locked", self.job.pk)


class _Heartbeat(threading.Thread):
    """Refreshes a running job's ``updated_at`` every ``interval`` seconds from its own
    database connection, so a long step (one big file read) does not look like a dead
    worker, and a worker that really died stops beating (Job.stalled)."""

    def __init__(self, job: Job, interval: float):
        super().__init__(name=f"job-{job.pk}-heartbeat", daemon=True)
        self.job = job
        self.interval = interval
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.interval):
                try:
                    Job.objects.filter(
                        pk=self.job.pk, attempt=self.job.attempt, status=JobStatus.RUNNING
                    ).update(updated_at=timezone.now())
                except DatabaseError:  # the database is away for a moment: beat again later
                    logger.warning("job %s: heartbeat failed", self.job.pk, exc_info=True)
        finally:
            connection.close()  # this thread's own connection


@contextmanager
def running(job_id: int) -> Iterator[Progress]:
    """Run a job's work: marks it running, then succeeded (with the result the work put in
    ``progress.result``), failed (with the errors of a JobFailed, or a generic message for
    an unexpected crash, which is logged and re-raised so the task backend sees it) or
    cancelled (a JobCancelled: its user stopped the work).

    A crash leaves the job retryable and keeps its staged upload; success and a JobFailed
    (a refused input, which trying again would not change) delete it. Only the job's current
    attempt records an outcome: a worker thought dead that finishes after the job was
    started again changes nothing."""
    job = Job.objects.get(pk=job_id)
    patiently(
        lambda: Job.objects.filter(pk=job.pk, attempt=job.attempt).update(
            status=JobStatus.RUNNING, updated_at=timezone.now()
        ),
        what=f"job {job_id}",
    )
    progress = Progress(job)
    # Inside a transaction (tests running tasks in place) nobody else sees the row anyway.
    heartbeat = None if connection.in_atomic_block else _Heartbeat(job, HEARTBEAT_SECONDS)
    if heartbeat is not None:
        heartbeat.start()
    try:
        yield progress
    except JobFailed as failure:
        if _finish(
            job,
            failure.status,
            step=str(failure),
            errors=failure.errors[:MAX_ERRORS_SHOWN],
            error_total=failure.total,
            **({"result": failure.result} if failure.result else {}),
        ):
            drop_staged(job.params.get("staged", ""))
    except Exception as error:
        if is_database_locked(error):
            # Not a bug: another write held the database longer than the busy timeout. The
            # work's transaction was rolled back, so trying again is safe.
            logger.warning("job %s (%s): the database stayed locked", job.pk, job.kind)
            _finish(job, JobStatus.FAILED, step=MESSAGES["database_busy"], retryable=True)
        else:
            logger.exception("job %s (%s) crashed", job.pk, job.kind)
            _finish(job, JobStatus.FAILED, step=MESSAGES["crashed"], retryable=True)
        raise
    else:
        # Done is every step done: a task need not count its last step itself.
        finished = {"step": "Done", "result": progress.result, "done": F("total")}
        if _finish(job, JobStatus.SUCCEEDED, **finished):
            drop_staged(job.params.get("staged", ""))
    finally:
        if heartbeat is not None:
            heartbeat.stopped.set()


def _finish(job: Job, status: JobStatus, **fields) -> bool:
    """Record the outcome of ``job``'s attempt; False if the job was started again since.
    Waits out a locked database (patiently): the outcome must not be lost to it."""

    def record() -> int:
        now = timezone.now()
        return Job.objects.filter(pk=job.pk, attempt=job.attempt).update(
            status=status, finished_at=now, updated_at=now, **fields
        )

    return bool(patiently(record, what=f"job {job.pk}"))


def end_queued_job(*, job_id: int, step: str) -> bool:
    """Mark cancelled, not to be tried again, a job no worker has started (its user cancelled
    the work before it began), with ``step`` saying so. False when a worker started it (or it
    had finished): then only the work can stop itself. The task may still wait in its
    queue; a worker that takes it later must find in the work's own record that it was
    cancelled and do nothing (jobs know only their row)."""
    now = timezone.now()
    return bool(
        Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
            status=JobStatus.CANCELLED,
            step=step,
            finished_at=now,
            updated_at=now,
            retryable=False,
        )
    )


# --- starting again ----------------------------------------------------------------------


def retry_job(*, job: Job) -> Job:
    """Start ``job``'s task again with the same arguments: a job that crashed, or whose
    worker died (failed by recover_stalled_jobs, or still marked running but stalled). Its
    staged upload is read again; the work itself makes sure nothing is stored twice (a run
    import refuses a file already stored). Raises JobNotRetryable with the reason."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if not job.can_retry:
            raise JobNotRetryable(_why_not(job))
        staged = job.params.get("staged")
        if staged and not default_storage.exists(staged):
            raise JobNotRetryable(MESSAGES["upload_gone"])
        task = import_string(job.task)
        if not isinstance(task, Task):
            raise JobNotRetryable(MESSAGES["not_retryable_unknown"])
        job.attempt += 1
        job.status = JobStatus.QUEUED
        job.step = MESSAGES["queued_again"].format(attempt=job.attempt)
        job.done = 0
        job.errors = []
        job.error_total = 0
        job.result = {}
        job.retryable = False
        job.finished_at = None
        job.save()
        params = dict(job.params)
        transaction.on_commit(lambda: _enqueue(job, task, params))
    return job


def _why_not(job: Job) -> str:
    if not job.task:
        return MESSAGES["not_retryable_unknown"]
    return {
        JobStatus.QUEUED: MESSAGES["not_retryable_queued"],
        JobStatus.RUNNING: MESSAGES["not_retryable_running"],
        JobStatus.SUCCEEDED: MESSAGES["not_retryable_succeeded"],
        JobStatus.CANCELLED: MESSAGES["not_retryable_cancelled"],
    }.get(job.status, MESSAGES["not_retryable_refused"])


def recover_stalled_jobs(*, older_than: timedelta | None = None) -> list[Job]:
    """Mark failed (and retryable) the jobs whose worker was lost ``older_than`` ago (default
    STALE_AFTER_SECONDS): fail_lost_jobs. Returns them."""
    if older_than is None:
        older_than = timedelta(seconds=STALE_AFTER_SECONDS)
    return fail_lost_jobs(cutoff=timezone.now() - older_than)


def fail_lost_jobs(*, cutoff: datetime, among: list[int] | None = None) -> list[Job]:
    """Mark failed (and retryable) the running jobs not updated since ``cutoff``: their
    worker died, as a live one beats every HEARTBEAT_SECONDS. Also the queued jobs that a
    worker of the database queue took before ``cutoff`` and never started (it died in
    between, or the task failed before its first step): their queue row is no longer
    waiting, so no worker would ever take them again. ``among``: only these jobs' ids (the
    schedules' clock looks after its firings' jobs). Returns them."""
    recovered = _recover_taken_never_started(cutoff, among)
    running = Job.objects.filter(status=JobStatus.RUNNING, updated_at__lt=cutoff)
    if among is not None:
        running = running.filter(pk__in=among)
    for job in running:
        # Same conditions again: a job that beat or finished meanwhile is left alone.
        if Job.objects.filter(
            pk=job.pk, attempt=job.attempt, status=JobStatus.RUNNING, updated_at__lt=cutoff
        ).update(
            status=JobStatus.FAILED,
            step=MESSAGES["worker_lost"],
            retryable=True,
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        ):
            job.refresh_from_db()
            recovered.append(job)
    return recovered


def _recover_taken_never_started(cutoff, among: list[int] | None) -> list[Job]:
    waiting = Job.objects.filter(status=JobStatus.QUEUED, updated_at__lt=cutoff)
    if among is not None:
        waiting = waiting.filter(pk__in=among)
    queued = dict(waiting.exclude(task_result_id="").values_list("task_result_id", "pk"))
    if not queued:
        return []
    taken = DBTaskResult.objects.filter(pk__in=list(queued), started_at__lt=cutoff).exclude(
        status=TaskResultStatus.READY
    )
    recovered = []
    for result_id in taken.values_list("pk", flat=True):
        pk = queued[str(result_id)]
        # Same conditions again: a job its worker started meanwhile is left alone.
        if Job.objects.filter(
            pk=pk, status=JobStatus.QUEUED, task_result_id=str(result_id), updated_at__lt=cutoff
        ).update(
            status=JobStatus.FAILED,
            step=MESSAGES["worker_lost_before_start"],
            retryable=True,
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        ):
            recovered.append(Job.objects.get(pk=pk))
    return recovered


# --- staged uploads ----------------------------------------------------------------------


def stage_upload(upload, *, prefix: str) -> str:
    """Keep an uploaded file in storage until its job has read it; returns the name.
    Raises StorageUnavailable when the store fails (an object store refuses or drops the
    upload; a full disk): S3 never keeps half of an object, and on a local disk the sweeper
    (sweep_staged_files) removes whatever a failed write left."""
    try:
        return default_storage.save(f"{STAGING}/{prefix}/{upload.name}", upload)
    except Exception as error:  # botocore's, OSError: whatever the store's client raises
        logger.warning("staging %s failed: %r", upload.name, error)
        raise StorageUnavailable(MESSAGES["storage_unavailable"]) from error


def drop_staged(name: str) -> None:
    if name:
        default_storage.delete(name)


def walk_storage(top: str) -> Iterator[str]:
    """Every file name under ``top`` in the default storage (none if it does not exist)."""
    try:
        folders, files = default_storage.listdir(top)
    except FileNotFoundError:
        return
    for name in files:
        yield f"{top}/{name}"
    for folder in folders:
        yield from walk_storage(f"{top}/{folder}")


def written_before(name: str, cutoff: datetime) -> bool:
    """Whether the stored file ``name`` was last written before ``cutoff`` (and exists)."""
    try:
        return default_storage.get_modified_time(name) < cutoff
    except FileNotFoundError:
        return False


def sweep_staged_files(*, older_than: timedelta) -> list[str]:
    """Delete staged uploads no job will read again (their job succeeded, was refused, or
    never committed), written more than ``older_than`` ago (a request stages its file
    just before committing its job). Returns the names deleted."""
    waiting = Q(status__in=[JobStatus.QUEUED, JobStatus.RUNNING]) | Q(
        status=JobStatus.FAILED, retryable=True
    )
    needed = {
        params.get("staged")
        for params in Job.objects.filter(waiting).values_list("params", flat=True)
        if isinstance(params, dict)
    }
    cutoff = timezone.now() - older_than
    deleted = []
    for name in walk_storage(STAGING):
        if name not in needed and written_before(name, cutoff):
            default_storage.delete(name)
            deleted.append(name)
    return deleted
