"""A firing that fails as a whole raises an alert (issue 31): the endpoint down (every query
failed), the run not scored, two attempts lost. The alert shows on the schedule's page and
the leaderboard, goes to the webhook (signed, event ``schedule.failure``) and by e-mail, and
a run of failures in a row is one alert counting them, as one drop is one alert. And the
clock's side of a lost worker: a firing taken from the queue by a worker that died before
starting it is started again once, and says so. The clock is turned by hand (``tick``)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from evaluation.models import (
    AlertKind,
    DeliveryStatus,
    FiringStatus,
    Run,
    ScheduleAlert,
    ScheduleFiring,
    SearchRun,
)
from evaluation.schedules import webhooks
from evaluation.services import schedule_runs
from jobs.models import Job, JobStatus
from tests.api import test_schedules as base
from tests.api.test_schedules import SECRET, START, make_schedule, turn
from tests.search_servers import Status

pytestmark = pytest.mark.django_db

# test_schedules.py's fixtures: a loopback engine, a webhook receiver, the live qrels, and
# the world's own schedule kept out of these ticks.
engine = base.engine
receiver = base.receiver
live_qrels = base.live_qrels
_worlds_schedule_paused = base._worlds_schedule_paused

DAY = timedelta(days=1)
FIRST = START + timedelta(hours=1)  # the schedule's first slot, 03:00


def engine_down(engine):
    """Every query of the world's campaign answered with a 500, for one firing (the
    endpoint is not tried again: max_retries=0)."""
    engine.plan("cheap", Status(500))
    engine.plan("sourdough", Status(500))


def test_a_firing_whose_every_query_failed_raises_an_alert_sent_by_webhook_and_email(
    engine, world, live_qrels, run_jobs, receiver
):
    make_schedule(
        engine,
        world,
        live_qrels,
        webhook_url=receiver.url,
        webhook_secret=SECRET,
        emails="oncall@example.org",
    )
    engine_down(engine)
    turn(run_jobs, FIRST)
    firing = ScheduleFiring.objects.get()
    assert firing.status == FiringStatus.FAILED and "Every query failed" in firing.message
    alert = ScheduleAlert.objects.get()
    assert (alert.kind, alert.firing, alert.failures) == (AlertKind.FAILURE, firing, 1)
    assert alert.message == firing.message and alert.previous is None
    assert (alert.webhook_status, alert.email_status) == (DeliveryStatus.SENT, DeliveryStatus.SENT)

    (delivery,) = receiver.received
    headers = {name.lower(): value for name, value in delivery.headers.items()}
    assert headers["x-qrelsmith-event"] == "schedule.failure"
    assert webhooks.verify(
        SECRET,
        body=delivery.body,
        timestamp=headers["x-qrelsmith-timestamp"],
        signed=headers["x-qrelsmith-signature"],
    ), "signed as a drop's alert is"
    sent = json.loads(delivery.body)
    assert sent["event"] == "schedule.failure" and sent["failures"] == 1
    assert "Every query failed" in sent["message"] and sent["run"] is None
    assert sent["schedule"]["name"] == "Nightly es" and sent["job"] == firing.job_id

    (email,) = mail.outbox
    assert email.subject.startswith("[Qrelsmith] Schedule Nightly es failed: Every query failed")
    assert "Every query failed" in email.body and "not sent again" in email.body


def test_failures_in_a_row_are_one_alert_and_a_success_ends_the_run(
    engine, world, live_qrels, run_jobs, receiver
):
    make_schedule(
        engine,
        world,
        live_qrels,
        webhook_url=receiver.url,
        webhook_secret=SECRET,
        emails="oncall@example.org",
    )
    for day in range(3):
        engine_down(engine)
        turn(run_jobs, FIRST + day * DAY)
    assert ScheduleFiring.objects.filter(status=FiringStatus.FAILED).count() == 3
    alert = ScheduleAlert.objects.get()
    assert alert.failures == 3 and alert.firing.slot == FIRST, "one alert, counting them"
    assert len(receiver.received) == 1 and len(mail.outbox) == 1, "told once, not every night"

    turn(run_jobs, FIRST + 3 * DAY)
    assert ScheduleFiring.objects.order_by("-slot").first().status == FiringStatus.SUCCEEDED
    assert ScheduleAlert.objects.count() == 1, "a success after failures is not a drop"

    engine_down(engine)
    turn(run_jobs, FIRST + 4 * DAY)
    latest = ScheduleAlert.objects.order_by("-created_at", "-pk").first()
    assert ScheduleAlert.objects.count() == 2 and latest.failures == 1, "a new run of failures"
    assert latest.firing.slot == FIRST + 4 * DAY
    assert len(receiver.received) == 2 and len(mail.outbox) == 2


def test_a_run_that_cannot_be_scored_is_a_failed_firing_with_an_alert(
    engine, world, live_qrels, run_jobs
):
    """Qrels that judge none of the query set's topics: the run is made, the score is not."""
    from evaluation import services

    elsewhere = services.import_qrels(source=b"99 0 d3 3\n", filename="x.qrels", name="other")
    make_schedule(engine, world, live_qrels, qrels=elsewhere.pk)
    turn(run_jobs, FIRST)
    firing = ScheduleFiring.objects.get()
    assert firing.status == FiringStatus.FAILED and firing.run is not None, firing.message
    assert "could not be scored against other" in firing.message
    alert = ScheduleAlert.objects.get()
    assert alert.kind == AlertKind.FAILURE and alert.message == firing.message
    assert alert.webhook_status == DeliveryStatus.NONE, "no webhook set: nothing pending"


def test_the_banner_says_what_failed_on_the_schedule_page_and_the_leaderboard(
    engine, world, live_qrels, run_jobs, client, settings
):
    settings.WEBHOOK_MAX_RETRIES = 0
    schedule = make_schedule(
        engine, world, live_qrels, webhook_url="http://localhost:9/hook", webhook_secret=SECRET
    )
    engine_down(engine)
    turn(run_jobs, FIRST)
    engine_down(engine)
    turn(run_jobs, FIRST + DAY)
    client.force_login(world.users["lead"])
    html = client.get(schedule.get_absolute_url()).content.decode()
    assert 'data-testid="schedule-failure-alert"' in html and "Firing failed" in html
    assert "Every query failed" in html and "and the 1 firing after it" in html
    # Nothing listens on port 9: the failed delivery is shown with the alert.
    assert "Failed (1 attempt)" in html and "the connection failed" in html
    assert "2 failed firings in a row" in html
    board = client.get(f"/evaluation/leaderboard/?qrels={live_qrels.pk}").content.decode()
    assert "Firing failed" in board and "Every query failed" in board
    alert = ScheduleAlert.objects.get()
    assert client.post(f"/evaluation/schedules/alerts/{alert.pk}/acknowledge/").status_code == 302
    html = client.get(schedule.get_absolute_url()).content.decode()
    assert 'data-testid="schedule-alert-banner"' not in html


def test_the_api_and_the_command_line_show_a_failure_alert(
    engine, world, live_qrels, run_jobs, api
):
    import io

    from django.core.management import call_command

    make_schedule(engine, world, live_qrels)
    engine_down(engine)
    turn(run_jobs, FIRST)
    answer = api(world.users["lead"]).get("/api/v1/schedule-alerts/?open=true")
    (shown,) = answer.json()["results"]
    assert (shown["kind"], shown["failures"], shown["previous"]) == ("failure", 1, None)
    assert "Every query failed" in shown["message"]
    out = io.StringIO()
    call_command("search_schedule", "alerts", "--open", stdout=out)
    assert "\tNightly es\tfailed (1 in a row)\tEvery query failed" in out.getvalue()


def _taken_and_left(job: Job, *, when) -> None:
    """What the database queue shows when a worker took ``job``'s task at ``when`` and died
    before starting it: the queue row no longer waiting, the job still queued."""
    from django_tasks_db.models import DBTaskResult

    row = DBTaskResult.objects.create(
        status="RUNNING",
        started_at=when,
        args_kwargs={"args": [], "kwargs": {"job_id": job.pk}},
        task_path=job.task,
        backend_name="default",
        run_after=when,
    )
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.QUEUED, task_result_id=str(row.pk), updated_at=when
    )


def test_a_firing_taken_by_a_worker_that_died_before_starting_it_is_started_again_once(
    engine, world, live_qrels, run_jobs
):
    make_schedule(engine, world, live_qrels)
    # The slot comes; the job is queued but no worker runs it here.
    (firing,) = schedule_runs.tick(now=FIRST).fired
    job = Job.objects.get(pk=firing.job_id)
    _taken_and_left(job, when=FIRST + timedelta(seconds=5))

    soon = turn(run_jobs, FIRST + timedelta(minutes=1))
    assert not soon.retried, "a worker that took it a minute ago may still start it"
    later = turn(run_jobs, FIRST + timedelta(hours=1))
    assert [f.pk for f in later.retried] == [firing.pk]
    firing.refresh_from_db()
    job.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2), job.step
    assert firing.status == FiringStatus.SUCCEEDED and firing.mean == pytest.approx(1.0)
    assert "the worker that took it from the queue stopped before starting it" in firing.recovery
    assert "started again as attempt 2" in firing.recovery
    assert SearchRun.objects.count() == 1 and Run.objects.filter(search__isnull=False).count() == 1
    assert not ScheduleAlert.objects.exists()

    # Lost again before starting its second attempt: failed, and that raises an alert.
    _taken_and_left(job, when=FIRST + timedelta(hours=2))
    ScheduleFiring.objects.filter(pk=firing.pk).update(status=FiringStatus.QUEUED)
    last = turn(run_jobs, FIRST + timedelta(hours=3))
    assert [f.pk for f in last.given_up] == [firing.pk] and not last.retried
    firing.refresh_from_db()
    assert firing.status == FiringStatus.FAILED and "Tried twice" in firing.message
    assert "stopped before starting it" in firing.message
    assert ScheduleAlert.objects.get().kind == AlertKind.FAILURE


def test_the_generic_recovery_still_finds_every_lost_job(engine, world, live_qrels):
    """recover_jobs' path (jobs.services.recover_stalled_jobs) is the clock's, unrestricted."""
    from jobs.services import recover_stalled_jobs

    make_schedule(engine, world, live_qrels)
    (firing,) = schedule_runs.tick(now=FIRST).fired
    job = Job.objects.get(pk=firing.job_id)
    _taken_and_left(job, when=timezone.now() - timedelta(hours=1))
    assert [lost.pk for lost in recover_stalled_jobs()] == [job.pk]
