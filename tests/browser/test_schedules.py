"""Schedules in the browser (issue 31, item 5): a lead schedules an endpoint at a loopback
engine (tests/search_servers.py) on a campaign's topics, the test turns the clock by hand
(``tick(now=...)``: the slot has come), the lead sees the firing's run and the history chart;
the endpoint's template then gets worse, the next tick's firing drops, and the alert's banner
shows on the schedule's page and the leaderboard, until acknowledged. Then the engine goes
down: the failed firing raises its own alert, saying what failed. Last, the lead edits the
schedule (a refused cron expression named beside its field, then a new time, measures and
e-mail), and its page shows the change. At 1280 px and on a phone (390 px), where no page
scrolls sideways."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation import services
from annotation.models import Topic
from evaluation import services as evaluation_services
from evaluation.models import Schedule
from evaluation.services import schedule_runs
from evaluation.services import schedules as schedule_service
from evaluation.services import search as search_service
from tests.browser.conftest import scroll_width
from tests.search_servers import EngineServer, Status

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("outbound_allows_loopback"),
]

PASSWORD = "a-long-demo-password"
WORSE = (
    '{"query": {"multi_match": {"query": "{{query}} heat pump air", "fields": ["title", '
    '"text"]}}, "size": {{k}}}'
)


@pytest.fixture
def engine():
    with EngineServer("elasticsearch") as server:
        yield server


@pytest.fixture
def setup(django_user_model, media_root, settings, engine):
    settings.SEARCH_BACKOFF_SECONDS = 0.0
    lead = django_user_model.objects.create_user("lea", password=PASSWORD)
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    campaign = services.create_campaign(lead=lead, name="Homes 2026", judges=[])
    for qid, query in (("1", "cheap flights"), ("2", "sourdough starter")):
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    qrels = evaluation_services.import_qrels(
        source=b"1 0 d3 3\n2 0 d2 3\n", filename="live.qrels", name="live"
    )
    endpoint = search_service.create_search_endpoint(
        name="es-local", kind="elasticsearch", url=engine.url, max_retries=0
    )
    return endpoint, qrels


@pytest.mark.parametrize("width", [1280, 390])
def test_a_lead_schedules_an_endpoint_and_sees_the_alert_after_a_drop(
    page, live_server, login, setup, engine, screenshot, width
):
    endpoint, qrels = setup
    page.set_viewport_size({"width": width, "height": 900})
    login("lea", PASSWORD)
    page.goto(f"{live_server.url}/evaluation/search/")
    page.get_by_test_id("schedules-link").click()

    # A cron expression every minute is refused, with the reason, and the form kept.
    page.get_by_test_id("schedule-name").fill("Nightly es")
    page.get_by_test_id("schedule-endpoint").select_option(label="es-local")
    page.get_by_test_id("schedule-query-set").select_option(label="Homes 2026")
    page.get_by_test_id("schedule-qrels").select_option(label=qrels.label)
    page.get_by_test_id("schedule-cron").fill("* * * * *")
    page.get_by_test_id("schedule-k").fill("10")
    page.get_by_test_id("schedule-threshold").fill("0.05")
    page.get_by_test_id("schedule-save").click()
    expect(page.get_by_test_id("schedule-error")).to_contain_text("fires 1 minute apart")
    assert scroll_width(page) <= width, "the schedules page scrolls sideways"
    screenshot(f"schedule-refused-{width}")

    page.get_by_test_id("schedule-cron").fill("0 3 * * *")
    page.get_by_test_id("schedule-save").click()
    expect(page.get_by_role("heading", name="Nightly es")).to_be_visible()
    expect(page.get_by_text("It has not fired yet.")).to_be_visible()
    schedule = Schedule.objects.get(name="Nightly es")

    # The clock turned by hand: the slot has come.
    first = schedule.next_run_at
    assert len(schedule_runs.tick(now=first).fired) == 1
    page.reload()
    run_link = page.get_by_test_id("firing-run").first
    expect(run_link).to_contain_text("Nightly es/nightly-es-")
    expect(page.get_by_test_id("firings")).to_contain_text("1.0000")

    # The template gets worse; the next firing drops and raises an alert.
    search_service.update_search_endpoint(endpoint=endpoint, template=WORSE)
    assert len(schedule_runs.tick(now=first + timedelta(days=1)).fired) == 1
    page.reload()
    banner = page.get_by_test_id("schedule-alert-banner")
    expect(banner).to_contain_text("Quality dropped")
    expect(banner).to_contain_text("nDCG@10 1.0000 →")
    expect(page.locator(".chart canvas")).to_be_visible()
    assert scroll_width(page) <= width, "the schedule's page scrolls sideways"
    screenshot(f"schedule-alert-{width}")

    page.goto(f"{live_server.url}/evaluation/leaderboard/?qrels={qrels.pk}")
    expect(page.get_by_test_id("schedule-alert-banner")).to_contain_text("Nightly es")
    assert scroll_width(page) <= width, "the leaderboard scrolls sideways"
    screenshot(f"schedule-leaderboard-alert-{width}")

    page.get_by_test_id("acknowledge").first.click()
    expect(page.get_by_role("heading", name="Nightly es")).to_be_visible()
    expect(page.get_by_test_id("schedule-alert-banner")).to_have_count(0)
    expect(page.get_by_test_id("alerts")).to_contain_text("threshold, interval")

    page.goto(f"{live_server.url}/evaluation/schedules/")
    expect(page.get_by_test_id("schedules")).to_contain_text("Nightly es")
    assert scroll_width(page) <= width
    screenshot(f"schedule-list-{width}")

    # The engine answers every query with a 500: the firing fails and says so in a banner.
    engine.plan("cheap", Status(500))
    engine.plan("sourdough", Status(500))
    assert len(schedule_runs.tick(now=first + timedelta(days=2)).fired) == 1
    page.goto(f"{live_server.url}/evaluation/schedules/{schedule.pk}/")
    failure = page.get_by_test_id("schedule-failure-alert")
    expect(failure).to_contain_text("Firing failed")
    expect(failure).to_contain_text("Every query failed")
    expect(page.get_by_test_id("failure-message")).to_contain_text("Every query failed")
    assert scroll_width(page) <= width, "the schedule's page with a failure scrolls sideways"
    screenshot(f"schedule-failed-firing-{width}")

    # Editing: a refused cron expression is named beside its field; then it is saved.
    page.get_by_test_id("edit").click()
    expect(page.get_by_test_id("edit-cron")).to_have_value("0 3 * * *")
    expect(page.get_by_test_id("edit-secret")).to_have_value("")
    page.get_by_test_id("edit-cron").fill("*/5 * * * *")
    page.get_by_test_id("edit-measures").fill("P@5 nDCG@10")
    page.get_by_test_id("edit-emails").fill("oncall@example.org")
    page.get_by_test_id("edit-save").click()
    expect(page.get_by_test_id("cron-error")).to_contain_text("fires 5 minutes apart")
    expect(page.get_by_test_id("edit-measures")).to_have_value("P@5 nDCG@10")
    assert scroll_width(page) <= width, "the edit form scrolls sideways"
    screenshot(f"schedule-edit-{width}")
    page.get_by_test_id("edit-cron").fill("30 4 * * 1-5")
    page.get_by_test_id("edit-save").click()
    expect(page.get_by_role("heading", name="Nightly es")).to_be_visible()
    expect(page.get_by_text("Schedule Nightly es saved.")).to_be_visible()
    expect(page.get_by_test_id("changes")).to_contain_text("cron: 0 3 * * * → 30 4 * * 1-5")
    expect(page.locator("p", has_text="watched:")).to_contain_text("watched: P@5")
    schedule.refresh_from_db()
    local = schedule.next_run_at.astimezone(schedule_service.zone())
    assert (local.hour, local.minute) == (4, 30) and local.weekday() < 5
    assert schedule.emails == ["oncall@example.org"]

    page.get_by_test_id("pause").click()
    expect(page.get_by_test_id("paused")).to_be_visible()
