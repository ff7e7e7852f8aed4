"""Machine judges you can trust, end to end in the browser (issue 33): a lead runs an honest
machine judge (a real chat-completions server on loopback, tests/llm_server.py) over the
pool, draws the human sample on the certified leaderboard, follows its progress while the
judges grade it, reads each run's nDCG@10 with its interval and the settled pairs, then runs
the machine's gullibility gate; and a gullible machine's gate blocks it until the lead
overrides it with a reason. At 1280 px and on a 390 px phone, without sideways scrolling."""

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, DesignPair, MachineJudge
from evaluation import services as evaluation
from tests.annotation.trust_data import grade_open, trust_world
from tests.browser.conftest import no_sideways_scroll
from tests.llm_server import ChatServer, gullible_grade, honest_grade

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("outbound_allows_loopback"),
]

PASSWORD = "a-long-demo-password"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(autouse=True)
def fast_backoff(settings):
    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.01


@pytest.fixture
def shot(screenshot):
    """A screenshot for the test's artifacts, copied where people look at them."""

    def take(name: str) -> None:
        screenshot(name)

    return take


def new_machine(page, base, server, name):
    page.goto(f"{base}/machines/")
    form = page.locator("#new-machine-judge")
    form.locator("[name=name]").fill(name)
    form.locator("[name=model_name]").fill("judge-7b")
    form.locator("[name=base_url]").fill(server.base_url)
    page.get_by_role("button", name="Create the machine judge").click()
    expect(page.get_by_text("Created the machine judge machine:")).to_be_visible()
    page.get_by_label("The whole pool").check()
    page.get_by_test_id("machine-run").click()
    expect(page.get_by_text("60 pairs graded, 0 failed")).to_be_visible(timeout=30_000)


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_a_lead_goes_from_a_machine_run_to_the_certified_leaderboard(
    page, live_server, login, django_user_model, media_root, shot, viewport
):
    width = "390" if viewport == "phone" else "1280"
    if viewport == "phone":
        page.set_viewport_size(PHONE)
    campaign, _lead, _judges, runs = trust_world(django_user_model, password=PASSWORD)
    base = f"{live_server.url}/campaigns/{campaign.pk}"
    login("lead", PASSWORD)
    with ChatServer(key=None, default=honest_grade) as server:
        new_machine(page, base, server, "honest")

        # The certified leaderboard: no sample yet; draw one.
        page.goto(f"{base}/certified/")
        expect(page.get_by_test_id("certified-state")).to_have_attribute("data-state", "no_design")
        no_sideways_scroll(page)
        shot(f"certified-draw-{width}")
        page.get_by_label("Strategy").select_option("stratified")
        page.get_by_label("Human budget").fill("20%")
        page.get_by_label("Seed").fill("5")
        page.get_by_role("button", name="Draw and send to the human judges").click()
        expect(page.get_by_role("status").first).to_contain_text("Drew 12 pairs for the humans")
        state = page.get_by_test_id("certified-state")
        expect(state).to_have_attribute("data-state", "humans_pending")
        expect(state).to_contain_text("0 of the 12 sampled pairs have a human grade")
        chosen = set(DesignPair.objects.filter(chosen=True).values_list("pair_id", flat=True))
        held = set(Assignment.objects.values_list("pair_id", flat=True))
        assert held == chosen  # the humans hold the sample and nothing else

        # The judges grade part of the sample, then the rest.
        grade_open(campaign, limit=5)
        page.reload()
        expect(page.get_by_test_id("certified-state")).to_contain_text("5 of the 12 sampled")
        expect(page.get_by_test_id("sample-progress")).to_have_attribute("value", "5")
        no_sideways_scroll(page)
        shot(f"certified-pending-{width}")
        grade_open(campaign)
        page.reload()
        expect(page.get_by_test_id("certified-state")).to_have_attribute("data-state", "certified")
        rows = page.locator("#certified-runs tbody tr")
        expect(rows).to_have_count(3)
        expect(rows.first).to_have_attribute("data-run", "best/best")
        expect(rows.first.get_by_test_id("interval")).to_contain_text("–")
        expect(page.locator("#certified-pairs tbody tr")).to_have_count(3)
        expect(page.get_by_test_id("settled-count")).to_contain_text("of 3 pairs of runs settled")
        no_sideways_scroll(page)
        shot(f"certified-leaderboard-{width}")
        # The run's page shows its certified interval too.
        page.get_by_role("link", name="best/best").click()
        expect(page.get_by_test_id("run-certified")).to_contain_text("95% interval")
        no_sideways_scroll(page)
        shot(f"run-certified-{width}")

        # The machine's gullibility gate: it passes.
        page.goto(f"{base}/machines/")
        page.get_by_role("link", name="machine:honest").first.click()
        page.get_by_test_id("gate-link").get_by_role("link").click()
        expect(page.get_by_test_id("gate-none")).to_be_visible()
        page.get_by_role("button", name="Run the gullibility gate").click()
        expect(page.get_by_role("button", name="See the gate")).to_be_visible(timeout=30_000)
        page.get_by_role("button", name="See the gate").click()
        expect(page.get_by_test_id("gate-verdict")).to_have_attribute("data-verdict", "passed")
        expect(page.locator("#gate-rises tbody tr")).to_have_count(3)
        no_sideways_scroll(page)
        shot(f"gate-passed-{width}")

    # The machine's page links to its gate; the gate's threshold is a campaign setting.
    page.goto(f"{base}/machines/{MachineJudge.objects.get().pk}/")
    expect(page.get_by_test_id("gate-link")).to_contain_text("Gullibility gate: passed")
    no_sideways_scroll(page)
    shot(f"machine-gate-link-{width}")
    page.goto(f"{base}/judgments/")
    expect(page.get_by_label("Gullibility gate threshold (points)")).to_have_value("2.0")
    no_sideways_scroll(page)
    shot(f"judgments-gate-threshold-{width}")

    # A comparison of the runs (scored against some qrels) shows their certified intervals.
    qrels = evaluation.import_qrels(
        source=b"1 0 d1-1 1\n2 0 d2-2 2\n", filename="some.qrels", name="some"
    )
    for run in runs:
        evaluation.evaluate_run(run=run, qrels=qrels, measure_specs=["ndcg_cut.10"])
    page.goto(
        f"{live_server.url}/evaluation/compare/?qrels={qrels.pk}&measures=ndcg_cut.10"
        f"&baseline={runs[0].pk}&runs={runs[1].pk}&runs={runs[2].pk}"
    )
    expect(page.get_by_test_id("compare-certified")).to_contain_text("95% interval")
    no_sideways_scroll(page)
    shot(f"compare-certified-{width}")


def test_a_gullible_machine_is_blocked_until_the_lead_overrides_it(
    page, live_server, login, django_user_model, media_root, shot
):
    campaign, *_ = trust_world(django_user_model, password=PASSWORD)
    grade_open(campaign, limit=40)  # humans graded 40 pairs; the machine may fill 20
    base = f"{live_server.url}/campaigns/{campaign.pk}"
    login("lead", PASSWORD)
    with ChatServer(key=None, default=gullible_grade) as server:
        new_machine(page, base, server, "gullible")
        page.get_by_role("button", name="See the machine judge").click()
        page.get_by_test_id("gate-link").get_by_role("link").click()
        page.get_by_role("button", name="Run the gullibility gate").click()
        page.get_by_role("button", name="See the gate").click(timeout=30_000)
    verdict = page.get_by_test_id("gate-verdict")
    expect(verdict).to_have_attribute("data-verdict", "blocked")
    expect(page.get_by_test_id("gate-over")).to_contain_text("the query's words stuffed in: +")
    stuffed = page.locator("#gate-rises tr[data-probe=stuffed]")
    expect(stuffed).to_contain_text("yes")
    shot("gate-blocked-1280")
    # Filling with its grades is refused while the gate blocks it.
    page.goto(f"{base}/judgments/")
    page.get_by_label("A publication may give pairs no human graded").check()
    page.get_by_role("button", name="Save machine settings").click()
    page.goto(f"{base}/publish/")
    page.get_by_label("Qrels name").fill("trust-filled")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_text("machine:gullible failed the gullibility gate")).to_be_visible()
    page.goto(f"{base}/machines/{campaign.external_judges.get().machine.pk}/gate/")
    page.get_by_role("button", name="Override the gate").click()  # no reason: refused
    expect(verdict).to_have_attribute("data-verdict", "blocked")
    page.get_by_label("Why may this machine fill qrels anyway?").fill(
        "Our passages never hold stuffed keywords; checked by hand."
    )
    page.get_by_role("button", name="Override the gate").click()
    expect(page.get_by_role("status").first).to_contain_text("Recorded your override")
    expect(verdict).to_have_attribute("data-verdict", "overridden")
    expect(page.get_by_test_id("gate-override")).to_contain_text("Overridden by lead on")
    page.goto(f"{base}/publish/")
    page.get_by_label("Qrels name").fill("trust-filled")
    page.get_by_role("button", name="Publish").click()
    page.goto(f"{base}/publish/")
    expect(page.get_by_test_id("machine-gate-record")).to_contain_text(
        "machine:gullible filled: gate overridden, overridden by lead"
    )
    shot("publish-gate-record-1280")
    page.goto(f"{base}/machines/{campaign.external_judges.get().machine.pk}/gate/")
    page.set_viewport_size(PHONE)
    page.reload()
    no_sideways_scroll(page)
    shot("gate-overridden-390")
