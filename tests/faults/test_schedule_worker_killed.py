"""Schedules with a real task worker (issue 31, item 6): the worker's clock fires a schedule
whose slot has come; a worker killed in the middle of a firing, after its run was stored,
is started again once by a later tick, which finds that run: one run, one evaluation; and a
worker killed after taking a firing from the queue, before starting it, is noticed by the
clock and the firing started again once.

A real `manage.py db_worker` runs on the test database; the firing pauses just after its run
is committed (jobs/faults.py, ``schedule_firing.stored``), or just after the worker took it
(``schedule_firing.taken``), and the test kills the worker there with SIGKILL. The test's own ticks take their ``now`` from the test (no sleeping for time to
pass)."""

import signal
from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation import services
from evaluation.models import Evaluation, FiringStatus, Run, Schedule, ScheduleFiring, SearchRun
from evaluation.services import schedule_runs
from evaluation.services import schedules as schedule_service
from evaluation.services import search as search_service
from jobs.faults import PAUSE_AT, PAUSE_MARKER
from jobs.models import STALE_AFTER_SECONDS, Job, JobStatus
from tests.api.conftest import build_world, user_maker
from tests.faults.conftest import output, process_env, start, stop, wait_for
from tests.search_servers import EngineServer

WORKER = ["manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.1"]
LIVE_QRELS = b"1 0 d3 3\n2 0 d2 3\n"


@pytest.fixture
def database_tasks(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


@pytest.fixture
def world(django_user_model, media_root):
    """tests/api/conftest.py's small instance, committed (the worker process reads it)."""
    return build_world(user_maker(django_user_model))


@pytest.fixture
def engine(outbound_allows_loopback, settings):
    settings.SEARCH_BACKOFF_SECONDS = 0.0
    with EngineServer("elasticsearch") as server:
        yield server


def schedule_of(engine, world) -> Schedule:
    Schedule.objects.all().delete()  # the world's own, out of these ticks
    qrels = services.import_qrels(source=LIVE_QRELS, filename="live.qrels", name="live")
    endpoint = search_service.create_search_endpoint(
        name="es", kind="elasticsearch", url=engine.url, max_retries=0
    )
    return schedule_service.create_schedule(
        user=world.users["lead"],
        name="nightly",
        endpoint=endpoint.pk,
        qrels=qrels.pk,
        campaign=world.campaign.pk,
        cron_expression="0 3 * * *",
        k=10,
    )


def child_env(settings, **extra):
    return process_env(
        settings,
        TASKS_BACKEND="django_tasks_db.DatabaseBackend",
        OUTBOUND_ALLOW="127.0.0.1",
        CLOCK_TICK_SECONDS="1",
        **extra,
    )


def kill_worker_at(pause: str, settings, tmp_path, *, what: str) -> None:
    """Start a worker (no clock) that pauses at ``pause`` (jobs/faults.py), and SIGKILL it
    there."""
    marker = tmp_path / "paused"
    env = child_env(settings, **{PAUSE_AT: pause, PAUSE_MARKER: str(marker)})
    worker = start([*WORKER, "--no-clock"], env, tmp_path / "worker.log")
    try:
        wait_for(marker.exists, seconds=90, what=what, process=worker)
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
    finally:
        stop(worker)


@pytest.mark.django_db(transaction=True)
def test_the_workers_clock_fires_a_schedule_whose_slot_has_come(
    database_tasks, settings, media_root, engine, world, tmp_path
):
    schedule = schedule_of(engine, world)
    # Its slot came while no worker ran: the worker's clock catches up at once, once.
    Schedule.objects.filter(pk=schedule.pk).update(
        next_run_at=timezone.now() - timedelta(days=3, minutes=5)
    )
    worker = start(WORKER, child_env(settings), tmp_path / "worker.log")
    try:
        wait_for(
            lambda: ScheduleFiring.objects.filter(status=FiringStatus.SUCCEEDED).exists(),
            seconds=90,
            what="the clock to fire the schedule and the worker to run it",
            process=worker,
        )
    finally:
        stop(worker)
    firing = ScheduleFiring.objects.get()
    assert firing.missed == 3 and firing.mean == pytest.approx(1.0), output(worker)
    assert Schedule.objects.get(pk=schedule.pk).next_run_at > timezone.now()


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_firing_is_retried_once_and_the_run_is_not_stored_twice(
    database_tasks, settings, media_root, engine, world, tmp_path
):
    schedule = schedule_of(engine, world)
    slot = schedule.next_run_at
    tick = schedule_runs.tick(now=slot)  # the test's clock: the slot has come
    (firing,) = tick.fired
    job = Job.objects.get(pk=firing.job_id)

    # 1. A worker takes the firing, stores its run, and is killed before scoring it.
    kill_worker_at("schedule_firing.stored", settings, tmp_path, what="the firing to pause")
    job.refresh_from_db()
    firing.refresh_from_db()
    assert job.status == JobStatus.RUNNING and firing.status == FiringStatus.QUEUED
    assert SearchRun.objects.get().job_id == job.pk, "the run was stored before the kill"
    assert not Evaluation.objects.filter(run__search__isnull=False).exists()

    # 2. A tick while the job could still be alive leaves it; one after it went silent
    #    for JOB_STALE_AFTER_SECONDS starts it again.
    assert not schedule_runs.tick(now=timezone.now()).retried
    later = timezone.now() + timedelta(seconds=STALE_AFTER_SECONDS + 60)
    assert [f.pk for f in schedule_runs.tick(now=later).retried] == [firing.pk]

    # 3. A worker runs the second attempt: it finds the stored run and scores it.
    worker = start([*WORKER, "--batch"], child_env(settings), tmp_path / "worker-again.log")
    try:
        worker.wait(120)
    finally:
        stop(worker)
    assert worker.returncode == 0, output(worker)
    job.refresh_from_db()
    firing.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2), (job.step, output(worker))
    assert firing.status == FiringStatus.SUCCEEDED and firing.mean == pytest.approx(1.0)
    assert (
        SearchRun.objects.count() == 1 and Run.objects.filter(system__name="nightly").count() == 1
    )
    assert Evaluation.objects.filter(run=firing.run).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_after_taking_a_firing_before_starting_it_is_noticed_by_the_clock(
    database_tasks, settings, media_root, engine, world, tmp_path
):
    """The worker takes the firing's task from the queue and is killed before the job starts
    (jobs stay 'queued', the queue row is no longer waiting, so no worker would take it
    again): a tick after JOB_STALE_AFTER_SECONDS starts it again once and the firing says
    what happened; the run is stored once."""
    schedule = schedule_of(engine, world)
    (firing,) = schedule_runs.tick(now=schedule.next_run_at).fired
    job = Job.objects.get(pk=firing.job_id)

    kill_worker_at(
        "schedule_firing.taken", settings, tmp_path, what="the worker to take the firing"
    )
    job.refresh_from_db()
    firing.refresh_from_db()
    assert (job.status, firing.status) == (JobStatus.QUEUED, FiringStatus.QUEUED)
    assert not SearchRun.objects.exists(), "killed before it asked the engine"

    assert not schedule_runs.tick(now=timezone.now()).retried, "it may be starting still"
    later = timezone.now() + timedelta(seconds=STALE_AFTER_SECONDS + 60)
    assert [f.pk for f in schedule_runs.tick(now=later).retried] == [firing.pk]
    firing.refresh_from_db()
    assert "stopped before starting it); started again as attempt 2" in firing.recovery

    worker = start([*WORKER, "--batch"], child_env(settings), tmp_path / "worker-again.log")
    try:
        worker.wait(120)
    finally:
        stop(worker)
    assert worker.returncode == 0, output(worker)
    job.refresh_from_db()
    firing.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2), (job.step, output(worker))
    assert firing.status == FiringStatus.SUCCEEDED and firing.mean == pytest.approx(1.0)
    assert SearchRun.objects.count() == 1 and Evaluation.objects.filter(run=firing.run).count() == 1
    assert "stopped before starting it" in firing.recovery, "the note stays after success"
