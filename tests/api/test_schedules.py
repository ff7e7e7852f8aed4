"""Schedules with Django: the clock turned by hand (``tick(now=...)``, no sleeping), catching up
once after downtime, a firing's run and evaluation, the alert a drop raises, its webhook (a
real receiver on loopback verifies the signature; 5xx and timeouts are tried again and
shown) and its e-mail (Django's locmem outbox, and a real SMTP server on loopback), against
a loopback search engine (tests/search_servers.py)."""

from __future__ import annotations

import copy
import json
import socket
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.core.exceptions import ValidationError

from evaluation import services
from evaluation.models import (
    DeliveryStatus,
    Evaluation,
    FiringStatus,
    Run,
    Schedule,
    ScheduleAlert,
    ScheduleFiring,
    SearchEndpoint,
    SearchRun,
)
from evaluation.schedules import webhooks
from evaluation.services import alerts, schedule_runs
from evaluation.services import schedules as service
from evaluation.services import search as search_service
from jobs.models import Job, JobStatus
from tests.search_servers import EngineServer
from tests.webhook_receiver import Pause, WebhookReceiver

pytestmark = pytest.mark.django_db

# The engine's answers make these perfect: d3 is "Cheap flights", d2 "Sourdough".
LIVE_QRELS = b"1 0 d3 3\n2 0 d2 3\n"
WORSE = '{"query": {"multi_match": {"query": "{{query}} heat pump air", "fields": ["title", "text"]}}, "size": {{k}}}'
START = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
SECRET = "a-shared-secret-of-some-length"


@pytest.fixture
def world(module_world, db):
    """One world for the module (tests/api/conftest.py, ``module_world``): each test's
    schedules, endpoints, firings and alerts are rolled back to it when the test ends, and
    each test has its own copy of the objects (deleting the world's schedule clears its id)."""
    return copy.deepcopy(module_world)


@pytest.fixture(autouse=True)
def _worlds_schedule_paused(request):
    """The world's own schedule (tests/api/conftest.py) stays out of these clocks' ticks and
    counts (its firing and alert go with it)."""
    if "world" in request.fixturenames:
        request.getfixturevalue("world").schedule.delete()


@pytest.fixture
def engine(outbound_allows_loopback, settings):
    settings.SEARCH_BACKOFF_SECONDS = 0.0
    settings.WEBHOOK_BACKOFF_SECONDS = 0.0
    settings.TIME_ZONE = "UTC"
    with EngineServer("elasticsearch") as server:
        yield server


@pytest.fixture
def receiver(outbound_allows_loopback):
    with WebhookReceiver() as server:
        yield server


@pytest.fixture
def live_qrels(world):
    return services.import_qrels(source=LIVE_QRELS, filename="live.qrels", name="live")


def make_schedule(engine, world, live_qrels, **changes) -> Schedule:
    endpoint = SearchEndpoint.objects.filter(name="es").first()
    endpoint = endpoint or search_service.create_search_endpoint(
        name="es", kind="elasticsearch", url=engine.url, max_retries=0
    )
    values = {
        "user": world.users["lead"],
        "name": "Nightly es",
        "endpoint": endpoint.pk,
        "qrels": live_qrels.pk,
        "campaign": world.campaign.pk,
        "cron_expression": "0 3 * * *",
        "k": 10,
        "measure_specs": ["nDCG@10", "P@5"],
        "threshold": 0.05,
        "now": START,
    }
    values.update(changes)
    return service.create_schedule(**values)


def smtp_mailer(port: int) -> dict:
    """settings.MAILERS as config/settings.py makes it from EMAIL_HOST and EMAIL_PORT."""
    options = {"host": "127.0.0.1", "port": port, "timeout": 2}
    return {
        "default": {"BACKEND": "django.core.mail.backends.smtp.EmailBackend", "OPTIONS": options}
    }


def turn(run_jobs, when):
    """One tick of the clock at ``when``; the jobs it queued run in place."""
    with run_jobs():
        return schedule_runs.tick(now=when)


def test_a_schedule_waits_for_its_first_slot_and_fires_on_time(engine, world, live_qrels, run_jobs):
    schedule = make_schedule(engine, world, live_qrels)
    assert schedule.next_run_at == START.replace(hour=3)
    assert schedule.alert_measure == "ndcg_cut_10" and schedule.query_set == "campaign Robust"
    assert not turn(run_jobs, START + timedelta(minutes=59)).fired, "not yet 03:00"
    tick = turn(run_jobs, START + timedelta(hours=1))
    assert len(tick.fired) == 1
    firing = ScheduleFiring.objects.get()
    assert (firing.status, firing.slot, firing.missed) == (
        FiringStatus.SUCCEEDED,
        START + timedelta(hours=1),
        0,
    ), firing.message
    assert firing.mean == pytest.approx(1.0) and firing.run.system.name == "Nightly es"
    assert firing.evaluation.qrels == live_qrels and "nDCG@10 1.0000" in firing.message
    assert SearchRun.objects.get().job_id == firing.job_id
    schedule.refresh_from_db()
    assert schedule.next_run_at == START + timedelta(days=1, hours=1)
    assert not turn(run_jobs, START + timedelta(hours=2)).fired, "the slot fired already"


def test_after_downtime_it_catches_up_once_not_once_per_missed_slot(
    engine, world, live_qrels, run_jobs
):
    make_schedule(engine, world, live_qrels)
    week_later = START + timedelta(days=7, hours=5)
    tick = turn(run_jobs, week_later)
    assert len(tick.fired) == 1
    firing = ScheduleFiring.objects.get()
    assert firing.slot == START + timedelta(days=7, hours=1), "the latest slot that has come"
    assert firing.missed == 7, "the seven earlier slots are counted, not fired"
    assert Run.objects.filter(search__isnull=False).count() == 1
    assert Schedule.objects.get().next_run_at == START + timedelta(days=8, hours=1)


def test_two_clocks_ticking_at_once_fire_a_slot_once(engine, world, live_qrels, run_jobs):
    schedule = make_schedule(engine, world, live_qrels)
    stale = Schedule.objects.get(pk=schedule.pk)  # what a second clock read before the first
    turn(run_jobs, START + timedelta(hours=1))
    with run_jobs():
        assert schedule_runs._fire(stale, START + timedelta(hours=1)) is None
    assert ScheduleFiring.objects.count() == 1


def test_a_paused_schedule_does_not_fire_nor_catch_up_when_resumed(
    engine, world, live_qrels, run_jobs
):
    schedule = make_schedule(engine, world, live_qrels)
    service.update_schedule(schedule=schedule, paused=True, now=START)
    assert not turn(run_jobs, START + timedelta(days=3)).fired
    service.update_schedule(schedule=schedule, paused=False, now=START + timedelta(days=3))
    assert schedule.next_run_at == START + timedelta(days=3, hours=1)


def test_a_drop_raises_an_alert_with_a_signed_webhook_and_an_email(
    engine, world, live_qrels, run_jobs, receiver
):
    schedule = make_schedule(
        engine,
        world,
        live_qrels,
        webhook_url=receiver.url,
        webhook_secret=SECRET,
        emails="oncall@example.org, lea@example.org",
    )
    turn(run_jobs, START + timedelta(hours=1))
    assert not ScheduleAlert.objects.exists() and not receiver.received, "nothing to compare"
    search_service.update_search_endpoint(endpoint=schedule.endpoint, template=WORSE)
    turn(run_jobs, START + timedelta(days=1, hours=1))
    firing = ScheduleFiring.objects.order_by("-slot").first()
    assert firing.mean < 0.8, firing.message
    alert = ScheduleAlert.objects.get()
    assert alert.firing == firing and alert.previous == pytest.approx(1.0)
    assert alert.reasons == ["threshold", "interval"]
    assert (alert.webhook_status, alert.webhook_attempts) == (DeliveryStatus.SENT, 1)
    assert alert.email_status == DeliveryStatus.SENT

    (delivery,) = receiver.received
    headers = {name.lower(): value for name, value in delivery.headers.items()}
    assert webhooks.verify(
        SECRET,
        body=delivery.body,
        timestamp=headers["x-qrelsmith-timestamp"],
        signed=headers["x-qrelsmith-signature"],
    ), "the receiver verifies the signature over the exact body"
    assert not webhooks.verify(
        "another-secret-entirely",
        body=delivery.body,
        timestamp=headers["x-qrelsmith-timestamp"],
        signed=headers["x-qrelsmith-signature"],
    )
    assert not webhooks.verify(
        SECRET,
        body=delivery.body.replace(b"Nightly", b"Nightlx"),
        timestamp=headers["x-qrelsmith-timestamp"],
        signed=headers["x-qrelsmith-signature"],
    ), "a body changed on the way fails"
    sent = json.loads(delivery.body)
    assert sent["event"] == "schedule.alert" and sent["measure"] == "nDCG@10"
    assert sent["previous"] == pytest.approx(1.0) and sent["current"] == pytest.approx(firing.mean)
    assert sent["schedule"]["name"] == "Nightly es" and sent["run"]["id"] == firing.run_id

    (email,) = mail.outbox
    assert email.to == ["oncall@example.org", "lea@example.org"]
    assert email.subject.startswith("[Qrelsmith] nDCG@10 dropped on Nightly es: 1.0000 →")
    assert "fell by more than the threshold of 0.0500" in email.body


def test_no_alert_when_the_measure_holds_or_rises(engine, world, live_qrels, run_jobs):
    schedule = make_schedule(engine, world, live_qrels)
    search_service.update_search_endpoint(endpoint=schedule.endpoint, template=WORSE)
    turn(run_jobs, START + timedelta(hours=1))
    search_service.update_search_endpoint(
        endpoint=schedule.endpoint,
        template=search_service.defaults_for("elasticsearch")["template"],
    )
    turn(run_jobs, START + timedelta(days=1, hours=1))
    turn(run_jobs, START + timedelta(days=2, hours=1))
    assert ScheduleFiring.objects.filter(status=FiringStatus.SUCCEEDED).count() == 3
    assert not ScheduleAlert.objects.exists()


@pytest.mark.parametrize(
    ("plan", "status", "attempts", "error"),
    [
        ((500, 503), DeliveryStatus.SENT, 3, ""),
        (
            (500, 502, 503, 500),
            DeliveryStatus.FAILED,
            4,
            "the receiver failed (HTTP 500) (after 4 attempts)",
        ),
        ((404,), DeliveryStatus.FAILED, 1, "the receiver refused the delivery (HTTP 404)"),
        (
            (Pause(3.0), Pause(3.0), Pause(3.0), Pause(3.0)),
            DeliveryStatus.FAILED,
            4,
            "no answer within 1 s (after 4 attempts)",
        ),
    ],
    ids=["5xx-then-sent", "5xx-to-the-end", "4xx-at-once", "timeouts"],
)
def test_webhook_failures_are_tried_again_and_kept(
    engine, world, live_qrels, run_jobs, receiver, settings, plan, status, attempts, error
):
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    settings.WEBHOOK_MAX_RETRIES = 3
    schedule = make_schedule(
        engine, world, live_qrels, webhook_url=receiver.url, webhook_secret=SECRET
    )
    turn(run_jobs, START + timedelta(hours=1))
    search_service.update_search_endpoint(endpoint=schedule.endpoint, template=WORSE)
    receiver.plan(*plan)
    turn(run_jobs, START + timedelta(days=1, hours=1))
    alert = ScheduleAlert.objects.get()
    assert (alert.webhook_status, alert.webhook_attempts, alert.webhook_error) == (
        status,
        attempts,
        error,
    )
    assert len(receiver.received) == attempts
    assert ScheduleFiring.objects.get(pk=alert.firing_id).status == FiringStatus.SUCCEEDED


def test_a_webhook_name_that_resolves_inside_is_refused_at_delivery(
    engine, world, live_qrels, run_jobs, settings
):
    """``localhost`` passes the check when saved (a name is judged when resolved): the
    outbound policy refuses it at delivery, and the page shows why."""
    schedule = make_schedule(
        engine,
        world,
        live_qrels,
        webhook_url="http://localhost:9/hook",
        webhook_secret=SECRET,
    )
    from common.outbound import parse_allow

    settings.OUTBOUND_ALLOW = parse_allow([f"127.0.0.1:{engine.url.split(':')[2].split('/')[0]}"])
    turn(run_jobs, START + timedelta(hours=1))
    search_service.update_search_endpoint(endpoint=schedule.endpoint, template=WORSE)
    turn(run_jobs, START + timedelta(days=1, hours=1))
    alert = ScheduleAlert.objects.get()
    assert alert.webhook_status == DeliveryStatus.FAILED
    assert "loopback, private" in alert.webhook_error and alert.webhook_attempts == 1


def test_a_worker_that_died_mid_firing_is_started_again_once_and_stores_one_run(
    engine, world, live_qrels, run_jobs
):
    """The first attempt stored its run, then its worker died (the job stays 'running' and
    its heartbeat stops). A later tick starts it again: the run is found, scored, once."""
    make_schedule(engine, world, live_qrels)
    firing_at = START + timedelta(hours=1)
    with run_jobs():
        schedule_runs.tick(now=firing_at)
    firing = ScheduleFiring.objects.get()
    job = Job.objects.get(pk=firing.job_id)
    # What a killed worker leaves: the run stored by attempt 1, no evaluation, job running.
    Evaluation.objects.filter(run=firing.run).delete()
    ScheduleFiring.objects.filter(pk=firing.pk).update(
        status=FiringStatus.QUEUED, evaluation=None, mean=None, low=None, high=None
    )
    # Its heartbeat last beat just after the slot, on the test's clock.
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, updated_at=firing_at + timedelta(seconds=10)
    )
    assert Run.objects.count() == 2  # the world's and the firing's

    soon = turn(run_jobs, firing_at + timedelta(seconds=30))
    assert not soon.retried, "a live worker's job (heartbeat fresh) is left alone"
    later = turn(run_jobs, firing_at + timedelta(hours=2))
    assert [f.pk for f in later.retried] == [firing.pk]
    firing.refresh_from_db()
    job.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2), job.step
    assert firing.status == FiringStatus.SUCCEEDED and firing.evaluation is not None
    assert Run.objects.count() == 2 and SearchRun.objects.count() == 1, "never stored twice"
    assert "attempt 1 did not finish (its worker stopped while running it)" in firing.recovery

    # A second death: not tried a third time.
    ScheduleFiring.objects.filter(pk=firing.pk).update(status=FiringStatus.QUEUED)
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, updated_at=firing_at + timedelta(hours=2, seconds=10)
    )
    last = turn(run_jobs, firing_at + timedelta(hours=4))
    assert [f.pk for f in last.given_up] == [firing.pk] and not last.retried
    firing.refresh_from_db()
    assert firing.status == FiringStatus.FAILED and "Tried twice" in firing.message
    alert = ScheduleAlert.objects.get(firing=firing)
    assert (alert.kind, alert.message) == ("failure", firing.message), "a failed firing alerts"


def test_a_firing_whose_every_query_fails_is_a_failed_firing(engine, world, live_qrels, run_jobs):
    from tests.search_servers import Status

    make_schedule(engine, world, live_qrels)
    engine.plan("cheap", Status(500))
    engine.plan("sourdough", Status(500))
    turn(run_jobs, START + timedelta(hours=1))
    firing = ScheduleFiring.objects.get()
    assert firing.status == FiringStatus.FAILED and "Every query failed" in firing.message
    assert Job.objects.get(pk=firing.job_id).status == JobStatus.FAILED


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"cron_expression": "* * * * *"},
            "fires 1 minute apart; schedules fire at most every 1 hour",
        ),
        ({"cron_expression": "*/1 * * * * *"}, "five fields"),
        ({"cron_expression": "@reboot"}, "not a macro"),
        ({"cron_expression": "0 0 31 2 *"}, "never fires"),
        ({"cron_expression": ""}, "Give a cron expression"),
        ({"threshold": 1e308}, "at most 1"),
        ({"threshold": "nan"}, "above 0"),
        ({"threshold": -0.1}, "above 0"),
        ({"threshold": "lots"}, "above 0"),
        ({"k": 0}, "k must be"),
        ({"k": 10**12}, "k must be"),
        ({"measure_specs": ["num_rel"]}, "not one"),
        ({"measure_specs": ["nonsense@@"]}, "measures cannot be used"),
        ({"webhook_url": "http://10.0.0.1/hook", "webhook_secret": SECRET}, "loopback, private"),
        (
            {"webhook_url": "http://169.254.169.254/x", "webhook_secret": SECRET},
            "loopback, private",
        ),
        ({"webhook_url": "https://hooks.example/x"}, "shared secret"),
        ({"webhook_url": "https://hooks.example/x", "webhook_secret": "short"}, "shared secret"),
        ({"webhook_secret": SECRET}, "give the webhook's address"),
        ({"emails": "not-an-address"}, "is not an e-mail address"),
        ({"emails": ["a@example.org"] * 11}, "at most 10"),
        ({"name": "x" * 101}, "at most 100"),
        ({"endpoint": 10**9}, "No search endpoint"),
        ({"qrels": 10**9}, "No qrels version you may read"),
        ({"campaign": None, "topics_qrels": None}, "Choose one query set"),
    ],
)
def test_unfit_values_are_refused_with_their_reason(engine, world, live_qrels, changes, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_schedule(engine, world, live_qrels, **changes)
    assert not Schedule.objects.exists()


def test_another_leads_campaign_is_not_their_query_set(engine, world, live_qrels):
    with pytest.raises(ValidationError, match="No campaign you lead"):
        make_schedule(engine, world, live_qrels, user=world.users["other_lead"])


def test_the_minimum_interval_is_a_setting(engine, world, live_qrels, settings):
    settings.SCHEDULE_MIN_INTERVAL_MINUTES = 5
    assert make_schedule(engine, world, live_qrels, cron_expression="*/5 * * * *")
    with pytest.raises(ValidationError, match="4 minutes apart"):
        make_schedule(engine, world, live_qrels, name="b", cron_expression="*/4 * * * *")


def test_the_webhook_secret_is_sealed_and_never_shown(engine, world, live_qrels, receiver):
    schedule = make_schedule(
        engine, world, live_qrels, webhook_url=receiver.url, webhook_secret=SECRET
    )
    assert schedule.webhook_secret_sealed.startswith("fernet:")
    assert SECRET not in schedule.webhook_secret_sealed
    service.update_schedule(schedule=schedule, webhook_url="")
    assert schedule.webhook_secret_sealed == ""


def test_an_email_through_a_real_smtp_server_on_loopback(
    engine, world, live_qrels, run_jobs, settings
):
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message

    received = []

    class Keep(Message):
        def handle_message(self, message):
            received.append(message)

    with socket.socket() as probe:  # a free port (aiosmtpd's start checks it by connecting)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(Keep(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        settings.MAILERS = smtp_mailer(port)
        settings.DEFAULT_FROM_EMAIL = "alerts@qrelsmith.example"
        schedule = make_schedule(engine, world, live_qrels, emails=["oncall@example.org"])
        turn(run_jobs, START + timedelta(hours=1))
        search_service.update_search_endpoint(endpoint=schedule.endpoint, template=WORSE)
        turn(run_jobs, START + timedelta(days=1, hours=1))
    finally:
        controller.stop()
    alert = ScheduleAlert.objects.get()
    assert alert.email_status == DeliveryStatus.SENT, alert.email_error
    (message,) = received
    assert message["To"] == "oncall@example.org"
    assert message["From"] == "alerts@qrelsmith.example"
    assert "nDCG@10 dropped on Nightly es" in message["Subject"]


def test_an_smtp_server_that_is_not_there_is_a_failed_email_shown(
    engine, world, live_qrels, run_jobs, settings
):
    settings.MAILERS = smtp_mailer(9)  # discard: nothing listens
    schedule = make_schedule(engine, world, live_qrels, emails=["oncall@example.org"])
    turn(run_jobs, START + timedelta(hours=1))
    search_service.update_search_endpoint(endpoint=schedule.endpoint, template=WORSE)
    turn(run_jobs, START + timedelta(days=1, hours=1))
    alert = ScheduleAlert.objects.get()
    assert alert.email_status == DeliveryStatus.FAILED
    assert alert.email_error.startswith("ConnectionRefusedError")
    assert alerts.notify(alert).email_status == DeliveryStatus.FAILED, "sent again: still down"


# --- the API, the pages and the command line ---------------------------------------------------


def test_the_api_creates_lists_pauses_and_deletes_and_shows_alerts(
    engine, world, live_qrels, api, run_jobs, receiver
):
    endpoint = search_service.create_search_endpoint(
        name="es", kind="elasticsearch", url=engine.url, max_retries=0
    )
    client = api(world.users["lead"])
    body = {
        "name": "Nightly es",
        "endpoint": endpoint.pk,
        "campaign": world.campaign.pk,
        "qrels": live_qrels.pk,
        "k": 10,
        "cron": "0 3 * * *",
        "measures": ["nDCG@10"],
        "threshold": 0.05,
        "webhook_url": receiver.url,
        "webhook_secret": SECRET,
    }
    created = client.post("/api/v1/schedules/", body, format="json")
    assert created.status_code == 201, created.content
    data = created.json()
    assert data["webhook_secret_stored"] is True and "webhook_secret" not in data
    assert SECRET not in created.content.decode()
    assert data["alert_measure"] == "ndcg_cut_10" and data["query_set"] == "campaign Robust"
    pk = data["id"]
    schedule = Schedule.objects.get(pk=pk)
    schedule.next_run_at = START.replace(hour=3)
    schedule.save()
    turn(run_jobs, START + timedelta(hours=1))
    search_service.update_search_endpoint(endpoint=endpoint, template=WORSE)
    turn(run_jobs, START + timedelta(days=1, hours=1))

    firings = client.get(f"/api/v1/schedules/{pk}/firings/").json()["results"]
    assert [f["status"] for f in firings] == ["succeeded", "succeeded"]
    opened = client.get("/api/v1/schedule-alerts/?open=true").json()["results"]
    (alert,) = [a for a in opened if a["schedule"] == pk]
    assert alert["webhook_status"] == "sent" and alert["reasons"] == ["threshold", "interval"]
    seen = client.post(f"/api/v1/schedule-alerts/{alert['id']}/acknowledge/")
    assert seen.status_code == 200 and seen.json()["acknowledged_at"]
    assert not [
        a
        for a in client.get("/api/v1/schedule-alerts/?open=true").json()["results"]
        if a["schedule"] == pk
    ]

    paused = client.patch(f"/api/v1/schedules/{pk}/", {"paused": True}, format="json")
    assert paused.status_code == 200 and paused.json()["paused"] is True
    other = api(world.users["other_lead"])
    assert other.get(f"/api/v1/schedules/{pk}/").status_code == 404
    assert (
        other.patch(f"/api/v1/schedules/{pk}/", {"paused": False}, format="json").status_code == 404
    )
    assert client.delete(f"/api/v1/schedules/{pk}/").status_code == 204
    assert not Schedule.objects.filter(pk=pk).exists()
    assert Run.objects.filter(system__name="Nightly es").count() == 2, "the runs stay"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cron": "* * * * * *"}, "five fields"),
        ({"cron": "* * * * *"}, "at most every 1 hour"),
        ({"threshold": 1e308}, "at most 1"),
        ({"threshold": -1}, "above 0"),
        ({"k": 10**30}, "less than or equal"),
        ({"k": "ten"}, "A valid integer"),
        ({"webhook_url": "http://192.168.0.10/x", "webhook_secret": SECRET}, "loopback"),
        ({"webhook_url": "http://[::1]/x", "webhook_secret": SECRET}, "loopback"),
        ({"webhook_url": "http://0x0a.1/x", "webhook_secret": SECRET}, "loopback"),
        ({"webhook_url": "ftp://hooks.example/x", "webhook_secret": SECRET}, "http://"),
        ({"emails": ["nobody"]}, "not an e-mail address"),
        ({"measures": ["num_ret"]}, "not one"),
        ({"campaign": None}, "Choose one query set"),
        ({"qrels": 999999999}, "No qrels version you may read"),
        ({"endpoint": 999999999}, "No search endpoint"),
        ({"name": ""}, "may not be blank"),
    ],
)
def test_the_api_refuses_unfit_values_with_a_400_and_the_reason(
    engine, world, live_qrels, api, changes, message
):
    endpoint = search_service.create_search_endpoint(
        name="es", kind="elasticsearch", url=engine.url, max_retries=0
    )
    body = {
        "name": "n",
        "endpoint": endpoint.pk,
        "campaign": world.campaign.pk,
        "qrels": live_qrels.pk,
        "k": 10,
        "cron": "0 3 * * *",
        **changes,
    }
    body = {key: value for key, value in body.items() if value is not None}
    answer = api(world.users["lead"]).post("/api/v1/schedules/", body, format="json")
    assert answer.status_code == 400, answer.content
    assert message in answer.content.decode()


def test_the_api_refuses_a_change_of_what_a_schedule_measures(engine, world, live_qrels, api):
    schedule = make_schedule(engine, world, live_qrels)
    answer = api(world.users["lead"]).patch(
        f"/api/v1/schedules/{schedule.pk}/", {"k": 20}, format="json"
    )
    assert answer.status_code == 400 and "make a new schedule" in answer.content.decode()


def test_the_page_shows_the_history_the_alert_banner_and_failed_webhooks(
    engine, world, live_qrels, client, run_jobs, settings
):
    settings.WEBHOOK_MAX_RETRIES = 0
    schedule = make_schedule(
        engine,
        world,
        live_qrels,
        webhook_url="http://localhost:9/hook",
        webhook_secret=SECRET,
    )
    turn(run_jobs, START + timedelta(hours=1))
    search_service.update_search_endpoint(endpoint=schedule.endpoint, template=WORSE)
    turn(run_jobs, START + timedelta(days=1, hours=1))
    client.force_login(world.users["lead"])
    html = client.get(schedule.get_absolute_url()).content.decode()
    assert 'data-testid="schedule-alert-banner"' in html and "Quality dropped" in html
    assert 'id="history-data"' in html and "nDCG@10 over time" in html
    # Nothing listens on port 9 (the operator allowed loopback here): a failed connection.
    assert "Failed (1 attempt)" in html and "the connection failed" in html, "shown"
    board = client.get(f"/evaluation/leaderboard/?qrels={live_qrels.pk}").content.decode()
    assert "Quality dropped" in board and schedule.name in board
    alert = ScheduleAlert.objects.get()
    assert client.post(f"/evaluation/schedules/alerts/{alert.pk}/acknowledge/").status_code == 302
    html = client.get(schedule.get_absolute_url()).content.decode()
    assert 'data-testid="schedule-alert-banner"' not in html, "acknowledged: no banner"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cron", "* * * * *", "at most every 1 hour"),
        ("threshold", "1e999", "above 0"),
        ("threshold", "²", "above 0"),
        ("k", "²", "k must be"),
        ("k", "99999999999999999999999", "k must be"),
        ("webhook_url", "http://169.254.169.254/latest", "loopback, private"),
        ("query_set", "campaign:abc", "Choose a query set"),
        ("endpoint", "99999999999999999999999", "No search endpoint"),
    ],
)
def test_the_page_refuses_unfit_values_with_a_400_and_the_reason(
    engine, world, live_qrels, client, field, value, message
):
    endpoint = search_service.create_search_endpoint(
        name="es", kind="elasticsearch", url=engine.url, max_retries=0
    )
    form = {
        "name": "n",
        "endpoint": endpoint.pk,
        "query_set": f"campaign:{world.campaign.pk}",
        "qrels": live_qrels.pk,
        "k": "10",
        "cron": "0 3 * * *",
        "webhook_secret": SECRET,
        field: value,
    }
    client.force_login(world.users["lead"])
    answer = client.post("/evaluation/schedules/new/", form)
    assert answer.status_code == 400
    assert message in answer.content.decode()


def test_the_command_line_adds_lists_pauses_and_ticks(engine, world, live_qrels, run_jobs):
    import io

    from django.core.management import CommandError, call_command

    search_service.create_search_endpoint(
        name="es", kind="elasticsearch", url=engine.url, max_retries=0
    )
    out = io.StringIO()
    call_command(
        "search_schedule",
        "add",
        "cli-nightly",
        "--user=lea",
        "--endpoint=es",
        f"--campaign={world.campaign.pk}",
        f"--qrels={live_qrels.pk}",
        "--cron=0 3 * * *",
        "--k=10",
        "--threshold=0.05",
        stdout=out,
    )
    assert "Saved schedule cli-nightly" in out.getvalue()
    schedule = Schedule.objects.get(name="cli-nightly")
    schedule.next_run_at = START.replace(hour=3)
    schedule.save()
    out = io.StringIO()
    with run_jobs():
        call_command("search_schedule", "tick", "--now=2026-12-01T03:00:00+00:00", stdout=out)
    assert "fired 1" in out.getvalue()
    out = io.StringIO()
    call_command("search_schedule", "list", "--user=lea", stdout=out)
    assert "cli-nightly\tlea\tes\tcampaign Robust" in out.getvalue()
    call_command("search_schedule", "pause", "cli-nightly", "--user=lea", stdout=io.StringIO())
    assert Schedule.objects.get(pk=schedule.pk).paused
    with pytest.raises(CommandError, match="has no schedule named"):
        call_command("search_schedule", "delete", "cli-nightly", "--user=leo")
    with pytest.raises(CommandError, match="fires 1 minute apart"):
        call_command(
            "search_schedule",
            "add",
            "too-often",
            "--user=lea",
            "--endpoint=es",
            f"--campaign={world.campaign.pk}",
            f"--qrels={live_qrels.pk}",
            "--cron=* * * * *",
        )
    with pytest.raises(CommandError, match="needs a zone"):
        call_command("search_schedule", "tick", "--now=2026-12-01T03:00:00")
