"""Issue 33's finishing touches in the browser, at 1280 px and on a 390 px phone without
sideways scrolling: a lead redraws the certified sample before humans judge it; cancels a
queued gullibility gate and a queued machine run; reads the post-editing comparison on the agreement page (from the
stored snapshot); and sees the certified intervals and settled pairs on the evaluation
leaderboard of the campaign's qrels, on a run's page and in a comparison."""

import pytest
from playwright.sync_api import expect

from annotation.services import adjudication, certified, gates, machine_judges, machine_runs
from annotation.services.campaigns import update_campaign
from evaluation import services as evaluation
from tests.annotation.trust_data import grade_open, trust_world
from tests.browser.conftest import no_sideways_scroll
from tests.llm_server import KEY, ChatServer, honest_grade

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("outbound_allows_loopback"),
]

PASSWORD = "a-long-demo-password"
PHONE = {"width": 390, "height": 844}
WORKER = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}


@pytest.fixture
def shot(screenshot):
    def take(name: str) -> None:
        screenshot(name)

    return take


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_redraw_cancel_anchoring_and_the_certified_evaluation_pages(
    page, live_server, login, django_user_model, media_root, shot, settings, viewport
):
    width = "390" if viewport == "phone" else "1280"
    if viewport == "phone":
        page.set_viewport_size(PHONE)
    campaign, lead, _judges, runs = trust_world(django_user_model, password=PASSWORD)
    base = f"{live_server.url}/campaigns/{campaign.pk}"
    with ChatServer(default=honest_grade) as server:
        machine = machine_judges.create_machine_judge(
            campaign=campaign, name="honest", model_name="m", base_url=server.base_url, api_key=KEY
        )
        machine_runs.run_machine_judge(run=machine_runs.prepare_run(machine=machine, scope="pool"))
    campaign = update_campaign(campaign=campaign, suggestions_from=machine.pk, blind_share=0.5)
    campaign = campaign.campaign
    certified.draw_sample(
        campaign=campaign, machine=machine, strategy="uniform", budget=20, seed=3, user=lead
    )
    login("lead", PASSWORD)

    # Redraw the sample before anyone judged it.
    page.goto(f"{base}/certified/")
    form = page.get_by_test_id("redraw-form")
    expect(form).to_be_visible()
    form.get_by_label("Strategy").select_option("stratified")
    form.get_by_label("Human budget").fill("25%")
    form.get_by_label("Seed").fill("11")
    form.get_by_role("button", name="Redraw and send to the human judges").click()
    expect(page.get_by_role("status").first).to_contain_text(
        "Redrew the sample: 15 pairs for the humans (stratified, seed 11)"
    )
    page.get_by_test_id("redraws").locator("summary").click()
    expect(page.get_by_test_id("redraws")).to_contain_text("uniform design, seed 3, 20 pairs")
    no_sideways_scroll(page)
    shot(f"trust-certified-redrawn-{width}")

    # The humans grade the sample: no more redrawing; the leaderboard is certified.
    grade_open(campaign)
    page.reload()
    expect(page.get_by_test_id("certified-state")).to_have_attribute("data-state", "certified")
    expect(page.get_by_test_id("redraw-closed")).to_contain_text("can no longer be redrawn")
    expect(page.get_by_test_id("redraw-form")).to_have_count(0)

    # The post-editing comparison on the agreement page.
    page.goto(f"{base}/agreement/")
    expect(page.locator("#anchoring")).to_contain_text("Median seconds per judgment")
    no_sideways_scroll(page)
    shot(f"trust-agreement-anchoring-{width}")

    # A gate that is still queued (no worker): cancel it.
    settings.TASKS = WORKER
    grade_open(campaign)
    gates.start_gate(machine=machine, user=lead, max_pairs=10)
    page.goto(f"{base}/machines/{machine.pk}/gate/")
    expect(page.get_by_test_id("gate-verdict")).to_have_attribute("data-verdict", "running")
    no_sideways_scroll(page)
    shot(f"trust-gate-running-{width}")
    page.get_by_role("button", name="Cancel the gate").click()
    # Its job had not started: the gate ends now, not "asked to stop" until a worker comes.
    expect(page.get_by_role("status").first).to_contain_text("Cancelled before it started")
    expect(page.get_by_test_id("gate-verdict")).to_have_attribute("data-verdict", "cancelled")
    expect(page.get_by_test_id("gate-cancel-form")).to_have_count(0)
    shot(f"trust-gate-cancelled-queued-{width}")

    # A machine run that is still queued ends the same way (jobs.services.cancellation).
    machine_runs.start_runner(machine=machine, scope="pool", user=lead)
    page.goto(f"{live_server.url}{machine.get_absolute_url()}")
    expect(page.get_by_test_id("machine-cancel")).to_have_text("Cancel the run")
    page.get_by_test_id("machine-cancel").click()
    expect(page.get_by_role("status").first).to_contain_text("Cancelled before it started")
    expect(page.get_by_test_id("machine-cancel")).to_have_count(0)  # not "Stopping…"
    row = page.locator("#machine-runs tbody tr").first
    expect(row).to_contain_text("(cancelled)")
    # Its job says cancelled too, not "Failed" beside "(cancelled)".
    expect(row.get_by_role("link", name="Cancelled", exact=True)).to_be_visible()
    expect(row).not_to_contain_text("Failed")
    no_sideways_scroll(page)
    shot(f"trust-machine-run-cancelled-queued-{width}")

    # The evaluation side: the campaign's qrels, the runs scored on them.
    published = adjudication.publish(campaign=campaign, user=lead, leave_out_undecided=True)
    for run in runs:
        evaluation.evaluate_run(run=run, qrels=published.qrels, measure_specs=["ndcg_cut.10"])
    query = f"?qrels={published.qrels.pk}&measures=ndcg_cut.10"
    page.goto(f"{live_server.url}/evaluation/leaderboard/{query}")
    section = page.get_by_test_id("leaderboard-certified")
    expect(section.get_by_test_id("certified-runs").locator("tbody tr")).to_have_count(3)
    expect(section.get_by_test_id("certified-pairs").locator("tbody tr")).to_have_count(3)
    no_sideways_scroll(page)
    shot(f"trust-leaderboard-certified-{width}")
    page.goto(f"{live_server.url}{runs[0].get_absolute_url()}{query}")
    expect(page.get_by_test_id("run-standing").locator("li")).to_have_count(2)
    no_sideways_scroll(page)
    shot(f"trust-run-standing-{width}")
    page.goto(
        f"{live_server.url}/evaluation/compare/{query}&baseline={runs[0].pk}&runs={runs[2].pk}"
    )
    expect(
        page.get_by_test_id("compare-certified").get_by_test_id("certified-pairs")
    ).to_be_visible()
    no_sideways_scroll(page)
    shot(f"trust-compare-certified-{width}")
