"""Search endpoints in the browser (issue 31): a lead configures an endpoint at a loopback
engine that answers as Elasticsearch does (tests/search_servers.py), tests the connection,
makes a run from a campaign's topics (one query fails on the engine's side), and finds the
run with its provenance and its failure said on the runs list and its page; at 1280 px and
on a phone (390 px), where no page scrolls sideways."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation import services
from annotation.models import Topic
from evaluation.models import SearchRun
from tests.browser.conftest import scroll_width
from tests.search_servers import EngineServer, Status

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("outbound_allows_loopback"),
]

PASSWORD = "a-long-demo-password"
QUERIES = {"1": "heat pumps", "2": "sourdough starter", "3": "storm drains"}


@pytest.fixture
def campaign(django_user_model, media_root, settings):
    settings.SEARCH_BACKOFF_SECONDS = 0.0
    lead = django_user_model.objects.create_user("lea", password=PASSWORD)
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    campaign = services.create_campaign(lead=lead, name="Homes 2026", judges=[])
    for qid, query in QUERIES.items():
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    return campaign


@pytest.fixture
def engine():
    with EngineServer("elasticsearch") as server:
        yield server


@pytest.mark.parametrize("width", [1280, 390])
def test_a_lead_configures_tests_and_runs_an_endpoint(
    page, live_server, login, campaign, engine, screenshot, width
):
    page.set_viewport_size({"width": width, "height": 900})
    engine.plan("storm", Status(503))  # no retries below: topic 3 fails
    login("lea", PASSWORD)
    page.goto(f"{live_server.url}/evaluation/search/")
    page.get_by_text("New endpoint").click()
    page.get_by_label("Name", exact=True).fill("es-local")
    page.get_by_label("Address").fill(engine.url)
    page.get_by_label("Retries").fill("0")
    page.get_by_role("button", name="Save the endpoint").click()
    expect(page.get_by_role("heading", name="es-local")).to_be_visible()
    assert scroll_width(page) <= width, "the endpoint's page scrolls sideways"

    # Test connection: the mapped hits, then the exact error.
    page.get_by_test_id("test-query").fill("heat pumps")
    page.get_by_test_id("test-connection").click()
    result = page.get_by_test_id("test-result")
    expect(result).to_contain_text("Answered")
    expect(result.locator("tbody tr").first).to_contain_text("d1")
    expect(result.locator("tbody tr").first).to_contain_text("Heat pumps")
    screenshot(f"search-endpoint-test-{width}")
    engine.plan("boom", Status(500))
    page.get_by_test_id("test-query").fill("boom")
    page.get_by_test_id("test-connection").click()
    expect(page.get_by_test_id("test-error")).to_contain_text("HTTP 500")
    assert scroll_width(page) <= width

    # Make a run from the campaign's topics.
    page.get_by_test_id("query-set").select_option(label="Homes 2026")
    page.get_by_label("Depth k").fill("3")
    page.get_by_test_id("make-run").click()
    expect(page.get_by_test_id("job-summary")).to_contain_text("1 failed")
    page.get_by_role("button", name="See the run").click()
    expect(page.get_by_test_id("run-failed-warning")).to_contain_text("1 of 3 queries failed")
    expect(page.get_by_test_id("search-queries")).to_contain_text("the endpoint failed (HTTP 503)")
    assert scroll_width(page) <= width, "the run's page scrolls sideways"
    screenshot(f"search-run-{width}")
    page.goto(f"{live_server.url}/evaluation/runs/")
    expect(page.get_by_test_id("run-failed-queries")).to_contain_text("1 of 3 queries failed")
    made = SearchRun.objects.get()
    assert made.failed[0]["qid"] == "3" and made.run.topic_count == 2
