"""Editing a schedule (issue 31): its owner changes the cron expression, measures, threshold,
qrels, webhook (the secret never shown back), e-mail recipients, and pauses or resumes it,
on the page, over the API (PATCH) and with ``manage.py search_schedule edit``. A refused value
is named with its field; the next firing is worked out again; the firings, alerts and a
history of the changes stay. And the mail domains alert e-mails may go to
(ALERT_EMAIL_DOMAINS), checked on create and on edit."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from evaluation import services
from evaluation.models import Schedule, ScheduleAlert, ScheduleChange, ScheduleFiring
from evaluation.services import schedule_runs
from evaluation.services import schedules as service
from evaluation.services import search as search_service
from tests.api import test_schedules as base
from tests.api.test_schedules import SECRET, START, WORSE, make_schedule, turn
from tests.config.test_settings import run_python
from tests.search_servers import Status

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


# test_schedules.py's fixtures: a loopback engine, a webhook receiver, the live qrels, and
# the world's own schedule kept out of these ticks.
engine = base.engine
receiver = base.receiver
live_qrels = base.live_qrels
_worlds_schedule_paused = base._worlds_schedule_paused

FIRST = START + timedelta(hours=1)  # 03:00, the schedule's first slot


@pytest.fixture
def other_qrels(world):
    return services.import_qrels(source=b"1 0 d3 2\n2 0 d2 1\n", filename="o.qrels", name="o")


def test_the_api_changes_a_schedule_and_works_out_its_next_firing_again(
    engine, world, live_qrels, other_qrels, api, receiver
):
    schedule = make_schedule(engine, world, live_qrels)
    assert schedule.next_run_at == START.replace(hour=3)
    client = api(world.users["lead"])
    answer = client.patch(
        f"/api/v1/schedules/{schedule.pk}/",
        {
            "cron": "30 4 * * 1",
            "measures": ["P@5", "nDCG@10"],
            "qrels": other_qrels.pk,
            "threshold": 0.1,
            "alert_on_interval": False,
            "webhook_url": receiver.url,
            "webhook_secret": SECRET,
            "emails": ["oncall@example.org"],
        },
        format="json",
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert "webhook_secret" not in body and body["webhook_secret_stored"] is True
    assert SECRET not in answer.content.decode()
    assert (body["cron"], sorted(body["measures"]), body["alert_measure"]) == (
        "30 4 * * 1",
        ["P.5", "ndcg_cut.10"],
        "P_5",
    ), "the first measure given is watched"
    schedule.refresh_from_db()
    assert schedule.qrels == other_qrels and schedule.threshold == 0.1
    assert not schedule.alert_on_interval and schedule.emails == ["oncall@example.org"]
    assert schedule.next_run_at.weekday() == 0 and schedule.next_run_at.hour == 4, "a Monday"

    # The secret is kept when only the address changes, and replaced when a new one is given.
    sealed = schedule.webhook_secret_sealed
    answer = client.patch(
        f"/api/v1/schedules/{schedule.pk}/",
        {"webhook_url": receiver.url + "?v=2", "webhook_secret": ""},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    schedule.refresh_from_db()
    assert schedule.webhook_secret_sealed == sealed

    changes = client.get(f"/api/v1/schedules/{schedule.pk}/changes/").json()["results"]
    assert [sorted(change["changes"]) for change in changes] == [
        ["webhook_url"],
        [
            "alert_measure",
            "alert_on_interval",
            "cron",
            "emails",
            "qrels",
            "threshold",
            "webhook_secret",
            "webhook_url",
        ],
    ]
    first = changes[1]["changes"]
    assert first["cron"] == ["0 3 * * *", "30 4 * * 1"] and first["qrels"] == ["live v1", "o v1"]
    assert first["webhook_secret"] == ["", "(new)"] and changes[1]["changed_by"] == "lea"
    assert first["alert_measure"] == ["nDCG@10", "P@5"], "the same measures, another watched"
    assert SECRET not in json_text(changes)


def json_text(value) -> str:
    import json

    return json.dumps(value)


def test_the_api_names_each_refused_field(engine, world, live_qrels, api, settings):
    settings.ALERT_EMAIL_DOMAINS = ("example.org",)
    schedule = make_schedule(engine, world, live_qrels)
    answer = api(world.users["lead"]).patch(
        f"/api/v1/schedules/{schedule.pk}/",
        {
            "cron": "* * * * *",
            "measures": ["nonsense@@"],
            "qrels": 10**9,
            "emails": ["someone@elsewhere.test"],
            "webhook_url": "http://10.0.0.1/hook",
        },
        format="json",
    )
    assert answer.status_code == 400
    errors = answer.json()
    assert sorted(errors) == ["cron", "emails", "measures", "qrels", "webhook_url"]
    assert "fires 1 minute apart" in errors["cron"][0]
    assert "someone@elsewhere.test is not at an allowed mail domain" in errors["emails"][0]
    assert "No qrels version you may read" in errors["qrels"][0]
    assert "loopback, private" in errors["webhook_url"][0]
    schedule.refresh_from_db()
    assert schedule.cron == "0 3 * * *" and not schedule.changes.exists(), "nothing half-saved"

    answer = api(world.users["lead"]).patch(
        f"/api/v1/schedules/{schedule.pk}/", {"k": 20}, format="json"
    )
    assert answer.status_code == 400 and "make a new schedule" in answer.json()["k"][0]
    answer = api(world.users["lead"]).patch(
        f"/api/v1/schedules/{schedule.pk}/",
        {"webhook_url": "https://hooks.example/x"},
        format="json",
    )
    assert answer.status_code == 400 and "shared secret" in answer.json()["webhook_secret"][0]


def test_another_leads_qrels_they_cannot_read_is_refused(engine, world, live_qrels):
    schedule = make_schedule(engine, world, live_qrels)
    with pytest.raises(ValidationError) as refused:
        service.update_schedule(schedule=schedule, qrels="abc")
    assert refused.value.message_dict == {"qrels": [service.MESSAGES["no_qrels"]]}


def test_pausing_and_resuming_is_kept_in_the_history_and_resuming_waits_for_the_next_slot(
    engine, world, live_qrels
):
    schedule = make_schedule(engine, world, live_qrels)
    lead = world.users["lead"]
    service.update_schedule(schedule=schedule, user=lead, paused=True, now=START)
    service.update_schedule(schedule=schedule, user=lead, paused=True, now=START)
    assert schedule.changes.count() == 1, "pausing a paused schedule changes nothing"
    later = START + timedelta(days=3, hours=5)
    service.update_schedule(schedule=schedule, user=lead, paused=False, now=later)
    assert schedule.next_run_at == START + timedelta(days=4, hours=1), "no catching up"
    assert [c.changes for c in schedule.changes.all()] == [
        {"paused": [True, False]},
        {"paused": [False, True]},
    ]


def test_after_a_change_of_measure_a_drop_is_measured_only_like_with_like(
    engine, world, live_qrels, run_jobs
):
    schedule = make_schedule(engine, world, live_qrels)
    turn(run_jobs, FIRST)  # nDCG@10 = 1
    service.update_schedule(schedule=schedule, measures=["P@5"], now=FIRST)
    search_service.update_search_endpoint(endpoint=schedule.endpoint, template=WORSE)
    turn(run_jobs, FIRST + timedelta(days=1))
    assert not ScheduleAlert.objects.exists(), "P@5 is not compared with nDCG@10"
    firings = list(ScheduleFiring.objects.order_by("slot"))
    assert [f.measure for f in firings] == ["ndcg_cut_10", "P_5"]
    assert len(firings) == 2 and all(f.status == "succeeded" for f in firings)
    chart = schedule_runs.history(Schedule.objects.get(pk=schedule.pk))
    assert chart["measure"] == "P@5" and len(chart["mean"]) == 1, "a new line"


def test_the_edit_page_shows_the_values_saves_and_keeps_the_history(
    engine, world, live_qrels, other_qrels, client
):
    schedule = make_schedule(
        engine, world, live_qrels, webhook_url="https://hooks.example/x", webhook_secret=SECRET
    )
    client.force_login(world.users["lead"])
    page = client.get(f"/evaluation/schedules/{schedule.pk}/edit/").content.decode()
    assert 'value="0 3 * * *"' in page and 'value="nDCG@10 P@5"' in page
    assert SECRET not in page and "A secret is stored" in page
    answer = client.post(
        f"/evaluation/schedules/{schedule.pk}/edit/",
        {
            "name": "Nightly es",
            "cron": "15 2 * * *",
            "measures": "nDCG@20",
            "qrels": other_qrels.pk,
            "threshold": "0.04",
            "alert_on_interval": "on",
            "webhook_url": "https://hooks.example/x",
            "webhook_secret": "",
            "emails": "oncall@example.org lea@example.org",
        },
    )
    assert answer.status_code == 302 and answer.url == schedule.get_absolute_url()
    schedule.refresh_from_db()
    assert (schedule.cron, schedule.alert_measure, schedule.qrels) == (
        "15 2 * * *",
        "ndcg_cut_20",
        other_qrels,
    )
    assert schedule.emails == ["oncall@example.org", "lea@example.org"]
    assert schedule.webhook_secret_sealed, "an empty secret keeps the stored one"
    detail = client.get(schedule.get_absolute_url()).content.decode()
    assert 'data-testid="changes"' in detail and "cron: 0 3 * * * → 15 2 * * *" in detail
    assert "Schedule Nightly es saved." in detail
    assert SECRET not in detail


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cron", "* * * * *", "at most every 1 hour"),
        ("cron", "", "Give a cron expression"),
        ("threshold", "lots", "above 0"),
        ("measures", "num_rel", "not one"),
        ("qrels", "999999999", "No qrels version you may read"),
        ("emails", "not-an-address", "is not an e-mail address"),
        ("webhook_url", "http://169.254.169.254/latest", "loopback, private"),
        ("name", "", "Give the schedule a name"),
    ],
)
def test_the_edit_page_refuses_a_value_beside_its_field(
    engine, world, live_qrels, client, field, value, message
):
    schedule = make_schedule(engine, world, live_qrels)
    form = {
        "name": "Nightly es",
        "cron": "0 3 * * *",
        "measures": "nDCG@10",
        "qrels": live_qrels.pk,
        "webhook_secret": SECRET,
        field: value,
    }
    client.force_login(world.users["lead"])
    answer = client.post(f"/evaluation/schedules/{schedule.pk}/edit/", form)
    assert answer.status_code == 400
    html = answer.content.decode()
    assert f'id="{field.replace("_", "-")}-error"' in html and message in html
    assert SECRET not in html, "a refused form does not send the secret back"
    assert not ScheduleChange.objects.exists()


def test_the_edit_page_is_the_owners(engine, world, live_qrels, client):
    schedule = make_schedule(engine, world, live_qrels)
    client.force_login(world.users["other_lead"])
    assert client.get(f"/evaluation/schedules/{schedule.pk}/edit/").status_code == 404
    assert client.post(f"/evaluation/schedules/{schedule.pk}/edit/", {}).status_code == 404


def test_the_command_line_edits_a_schedule(engine, world, live_qrels, other_qrels, monkeypatch):
    make_schedule(engine, world, live_qrels)
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    out = io.StringIO()
    call_command(
        "search_schedule",
        "edit",
        "Nightly es",
        "--user=lea",
        "--cron=0 5 * * *",
        "--measure=P@10",
        f"--qrels={other_qrels.pk}",
        "--no-threshold",
        "--email=oncall@example.org",
        "--webhook-url=https://hooks.example/x",
        "--webhook-secret-env=HOOK_SECRET",
        "--pause",
        stdout=out,
    )
    assert (
        "Changed Nightly es (alert_measure, cron, emails, measures, paused, qrels, threshold, "
        "webhook_secret, webhook_url)" in out.getvalue()
    )
    assert "it paused" in out.getvalue() and SECRET not in out.getvalue()
    schedule = Schedule.objects.get(name="Nightly es")
    assert (schedule.cron, schedule.alert_measure, schedule.threshold, schedule.paused) == (
        "0 5 * * *",
        "P_10",
        None,
        True,
    )
    assert schedule.webhook_secret_sealed and schedule.qrels == other_qrels
    out = io.StringIO()
    call_command("search_schedule", "edit", "Nightly es", "--user=lea", "--resume", stdout=out)
    assert "it fires next at" in out.getvalue()
    with pytest.raises(CommandError, match=r"cron: .*fires 1 minute apart"):
        call_command("search_schedule", "edit", "Nightly es", "--user=lea", "--cron=* * * * *")
    with pytest.raises(CommandError, match=r"\$NOT_SET_HERE is not set"):
        call_command(
            "search_schedule",
            "edit",
            "Nightly es",
            "--user=lea",
            "--webhook-secret-env=NOT_SET_HERE",
        )
    with pytest.raises(CommandError, match="Nothing to change"):
        call_command("search_schedule", "edit", "Nightly es", "--user=lea")
    with pytest.raises(CommandError, match="has no schedule named"):
        call_command("search_schedule", "edit", "Nightly es", "--user=leo", "--resume")


# --- ALERT_EMAIL_DOMAINS ------------------------------------------------------------------


def test_alert_emails_outside_the_allowed_domains_are_refused_on_create_and_edit(
    engine, world, live_qrels, settings, client
):
    settings.ALERT_EMAIL_DOMAINS = ("example.org",)
    with pytest.raises(ValidationError) as refused:
        make_schedule(engine, world, live_qrels, emails="a@example.org, b@badexample.org")
    assert refused.value.message_dict == {
        "emails": [
            "b@badexample.org is not at an allowed mail domain (the operator allows example.org)."
        ]
    }
    schedule = make_schedule(engine, world, live_qrels, emails="a@example.org a@mail.example.org")
    assert schedule.emails == ["a@example.org", "a@mail.example.org"], "subdomains too"
    with pytest.raises(ValidationError, match="not at an allowed mail domain"):
        service.update_schedule(schedule=schedule, emails=["x@gmail.com"])
    with pytest.raises(CommandError, match=r"emails: x@gmail\.com is not at an allowed"):
        call_command("search_schedule", "edit", "Nightly es", "--user=lea", "--email=x@gmail.com")
    client.force_login(world.users["lead"])
    page = client.get(f"/evaluation/schedules/{schedule.pk}/edit/").content.decode()
    assert "at example.org only" in page


def test_a_mistyped_allowed_domain_stops_start_up():
    result = run_python("import config.settings", ALERT_EMAIL_DOMAINS="example.org,@oops")
    assert result.returncode != 0
    assert "ALERT_EMAIL_DOMAINS: '@oops' is not a mail domain" in result.stderr


def test_recipients_the_operator_no_longer_allows_are_left_out_and_named(
    engine, world, live_qrels, run_jobs, settings
):
    """A schedule saved before ALERT_EMAIL_DOMAINS was narrowed keeps its list; the alert is
    sent only to the addresses still allowed, and says who was left out."""
    from django.core import mail

    make_schedule(engine, world, live_qrels, emails="a@example.org b@elsewhere.test")
    settings.ALERT_EMAIL_DOMAINS = ("example.org",)
    engine.plan("cheap", Status(500))
    engine.plan("sourdough", Status(500))
    turn(run_jobs, FIRST)
    alert = ScheduleAlert.objects.get()
    (email,) = mail.outbox
    assert email.to == ["a@example.org"]
    assert alert.email_status == "sent"
    assert alert.email_error == (
        "Not sent to b@elsewhere.test: not at a mail domain ALERT_EMAIL_DOMAINS allows."
    )


def test_firings_made_before_schedules_could_be_edited_are_marked_as_scored_by_their_schedule(
    engine, world, live_qrels, run_jobs
):
    """The migration that added a firing's measure and qrels fills them for older firings,
    so their drops and chart go on as before."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module(
        "evaluation.migrations.0010_schedule_failure_alerts_edits_and_recovery"
    )
    schedule = make_schedule(engine, world, live_qrels)
    turn(run_jobs, FIRST)
    ScheduleFiring.objects.update(measure="", qrels=None)  # as a firing made before it
    migration.scored_as_their_schedule(apps, None)
    firing = ScheduleFiring.objects.get()
    assert (firing.measure, firing.qrels_id) == (schedule.alert_measure, live_qrels.pk)
