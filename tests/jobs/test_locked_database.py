"""The task worker and the jobs it runs outlive a locked database (issue 27, finding 8): on
SQLite, a write held longer than the busy timeout made `manage.py db_worker` exit ("database
is locked" from the BEGIN of its loop) and could leave a job "running" for good.

Real locks: another connection holds SQLite's write lock (tests/jobs/locks.py) while the
worker, or a job, tries to write with a short busy timeout.
"""

import logging

import pytest
from django.core.management import call_command
from django.db import OperationalError
from django.tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from annotation.tasks import reorder_pool_task
from jobs.management.commands.db_worker import Backoff
from jobs.models import Job, JobStatus
from jobs.services import MESSAGES, running
from tests.jobs.locks import write_lock_held

WORKER = ["--batch", "--no-startup-delay", "--interval", "0"]  # -v 0 would mute its warnings


@pytest.fixture
def database_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


def test_the_backoff_doubles_up_to_its_last_pause_and_starts_again_after_quiet():
    now = [0.0]
    backoff = Backoff(first=0.5, last=4.0, clock=lambda: now[0])
    pauses = []
    for _ in range(6):
        pauses.append(backoff.next_pause())
        now[0] += 1
    assert pauses == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    now[0] += 10  # longer than the last pause without a failure
    assert backoff.next_pause() == 0.5


@pytest.mark.django_db(transaction=True)
def test_the_worker_waits_out_a_locked_database_and_then_runs_the_queued_task(
    database_tasks, short_busy_timeout, caplog
):
    queued = reorder_pool_task.enqueue(campaign_id=1)  # no such campaign: returns at once
    # Locked for ten times the worker's busy timeout: the library's worker exits on the first
    # "database is locked"; ours pauses and tries again until the lock is gone.
    with caplog.at_level(logging.WARNING, logger="django_tasks_db"), write_lock_held(seconds=2):
        call_command("db_worker", *WORKER)
    result = DBTaskResult.objects.get(pk=queued.id)
    assert result.status == TaskResultStatus.SUCCESSFUL
    assert any("the database is locked" in r.getMessage() for r in caplog.records), (
        "the worker met the lock (else this test proves nothing): make the lock longer"
    )


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_work_meets_a_locked_database_fails_cleanly_and_can_be_retried(
    short_busy_timeout,
):
    job = Job.objects.create(kind="test", title="Locked", task="annotation.tasks.x")
    # The lock is still held when running() records the failure: it waits for the lock to go
    # (jobs.services.patiently) rather than leave the job "running".
    with (
        pytest.raises(OperationalError, match="locked"),
        running(job.pk),
        write_lock_held(seconds=1.0),
    ):
        Job.objects.filter(pk=job.pk).update(title="Changed by the work")
    job.refresh_from_db()
    assert (job.status, job.retryable, job.can_retry) == (JobStatus.FAILED, True, True)
    assert job.step == MESSAGES["database_busy"]
    assert job.title == "Locked", "the work's write was not stored"


@pytest.mark.django_db(transaction=True)
def test_progress_that_meets_a_locked_database_does_not_stop_the_work(short_busy_timeout):
    job = Job.objects.create(kind="test", title="Busy", task="annotation.tasks.x")
    with running(job.pk) as progress:
        with write_lock_held():
            progress.step("Reading", done=1)  # not recorded: the lock is held
        progress.step("Storing", done=2)
    job.refresh_from_db()
    assert (job.status, job.step) == (JobStatus.SUCCEEDED, "Done")
