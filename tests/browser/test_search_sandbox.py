"""The query sandbox in the browser (issue 31, item 3): a lead opens an endpoint's sandbox,
edits the template, tries it on a campaign's topics against the saved version, reads the
means and per-query deltas, opens the run diff from the trial, saves the edit as version 2
and diffs the two versions' templates; at 1280 px and on a phone (390 px), where no page
scrolls sideways. Against the loopback Elasticsearch (tests/search_servers.py)."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation import services
from annotation.models import Topic
from evaluation import services as evaluation
from evaluation.models import SearchEndpoint
from evaluation.services import search as search_service
from tests.browser.conftest import SCREENSHOTS, save_screenshot, scroll_width
from tests.search_servers import EngineServer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("outbound_allows_loopback"),
]

PASSWORD = "a-long-demo-password"
QUERIES = {"1": "heat pumps", "2": "sourdough starter", "3": "storm drains"}
# Topic 2's best document is d5 ("Air source"), which only the edit (adding "air") finds.
QRELS = b"1 0 d1 2\n1 0 d5 1\n2 0 d2 1\n2 0 d5 3\n3 0 d4 2\n"
SHOTS = SCREENSHOTS / "sandbox"


@pytest.fixture
def endpoint(django_user_model, media_root, settings):
    settings.SEARCH_BACKOFF_SECONDS = 0.0
    lead = django_user_model.objects.create_user("lea", password=PASSWORD)
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    campaign = services.create_campaign(lead=lead, name="Homes 2026", judges=[])
    for qid, query in QUERIES.items():
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    evaluation.import_qrels(source=QRELS, filename="homes.qrels", name="homes")
    with EngineServer("elasticsearch") as server:
        yield search_service.create_search_endpoint(
            name="es-local", kind="elasticsearch", url=server.url, max_retries=0, created_by=lead
        )


def shot(page, name: str, width: int) -> None:
    save_screenshot(page, SHOTS / f"{name}-{width}.png")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_lead_tunes_a_template_in_the_sandbox_and_saves_it(
    page, live_server, login, endpoint, width
):
    page.set_viewport_size({"width": width, "height": 900})
    login("lea", PASSWORD)
    page.goto(f"{live_server.url}{endpoint.get_absolute_url()}")
    shot(page, "endpoint", width)
    page.get_by_test_id("open-sandbox").click()
    expect(page.get_by_role("heading", name="Sandbox: es-local")).to_be_visible()
    template = page.get_by_label("Template")
    expect(template).to_have_value(endpoint.template)
    template.fill(endpoint.template.replace('"{{query}}"', '"{{query}} air"'))
    page.get_by_test_id("sandbox-query-set").select_option(label="Homes 2026")
    page.get_by_test_id("sandbox-qrels").select_option(label="homes v1")
    page.get_by_label("Depth k").fill("10")
    assert scroll_width(page) <= width, "the sandbox scrolls sideways"
    page.get_by_test_id("sandbox-try").click()
    # The job runs inside the request here (no worker): six queries, two runs stored, scored.
    expect(page.get_by_test_id("job-summary")).to_contain_text(
        "nDCG@10 over 3 judged topics", timeout=90_000
    )
    page.get_by_role("button", name="See the trial").click()

    # The trial: both means, the edit's gain, topic 2 better, the edit's diff.
    arms = page.get_by_test_id("arm")
    expect(arms).to_have_count(2)
    expect(arms.first).to_contain_text("v1 (saved)")
    expect(page.get_by_test_id("mean-delta")).to_contain_text("+0.")
    queries = page.get_by_test_id("trial-queries")
    expect(queries.locator("tbody tr").first).to_contain_text("sourdough starter")
    expect(page.get_by_test_id("template-diff")).to_contain_text("{{query}} air")
    assert scroll_width(page) <= width, "the trial's page scrolls sideways"
    shot(page, "trial", width)
    trial_url = page.url
    page.get_by_test_id("keep-editing").click()
    expect(page.get_by_label("Template")).to_have_value(
        endpoint.template.replace('"{{query}}"', '"{{query}} air"')
    )
    shot(page, "sandbox", width)
    page.goto(trial_url)

    # The run diff, one click away; the two trial runs side by side.
    page.get_by_test_id("trial-diff").click()
    expect(page.get_by_test_id("diff-summary")).to_be_visible()
    expect(page.locator("h1")).to_contain_text("trial-")
    assert scroll_width(page) <= width, "the diff scrolls sideways"
    shot(page, "trial-diff", width)
    page.goto(trial_url)

    # Saved as version 2; the versions page diffs v1 and v2.
    page.get_by_label("What changed").fill("air added")
    page.get_by_test_id("save-version").click()
    expect(page.get_by_text("Saved as version 2 of es-local.")).to_be_visible()
    assert SearchEndpoint.objects.get().version == 2
    page.get_by_test_id("open-versions").click()
    expect(page.get_by_test_id("versions")).to_contain_text("air added")
    page.get_by_test_id("diff-versions").click()
    expect(page.get_by_test_id("template-diff")).to_contain_text("{{query}} air")
    assert scroll_width(page) <= width, "the versions page scrolls sideways"
    shot(page, "versions", width)
    # The trial's runs stay off the runs list.
    page.goto(f"{live_server.url}/evaluation/runs/")
    expect(page.get_by_text("trial-")).to_have_count(0)
