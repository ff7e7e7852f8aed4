"""A lead starts a campaign with the bandit ordering, chooses a stop rule, and watches the
live leaderboard while three judges grade (issue 13, "Done when"), in Chromium: without a
reload, the runs' bounds narrow, the pair of systems becomes settled, the stop rule pauses
judging (the lead is told; a judge finishing their pair sees the campaign has paused), and the
lead resumes it."""

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, Campaign, Document, PoolOrdering
from annotation.views import live as live_views
from evaluation import services as evaluation_services
from tests.annotation.live_data import GOOD, WEAK, person, truth
from tests.browser.conftest import SCREENSHOTS, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
TOPICS = b"1\tquery 1\n2\tquery 2\n3\tquery 3\n"


@pytest.fixture
def people_and_runs(django_user_model, media_root):
    """The people and the two stored runs of tests/annotation/live_data.py, no campaign yet."""
    lead = person(django_user_model, "lead", "lead", PASSWORD)
    judges = [person(django_user_model, f"judge{i}", "judge", PASSWORD) for i in range(3)]
    runs = [
        evaluation_services.import_run(source=GOOD, filename="good.run", system="good"),
        evaluation_services.import_run(source=WEAK, filename="weak.run", system="weak"),
    ]
    return lead, judges, runs


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).not_to_have_url(re.compile("/accounts/login/"))


def shoot(page, name):
    save_screenshot(page, SCREENSHOTS / f"{name}.png")


def start_bandit_campaign(lead, live_server, runs) -> Campaign:
    """The lead creates the campaign (bandit ordering, three judges, one per pair), imports
    its topics and pools both runs at depth 3, all from the pages."""
    lead.goto(f"{live_server.url}/campaigns/new/")
    lead.get_by_label("Name").fill("Live 2026")
    lead.get_by_label("Judges per pair").fill("1")
    lead.get_by_label("Order of judging").select_option(PoolOrdering.BANDIT)
    for i in range(3):
        lead.get_by_label(f"judge{i}").check()
    lead.get_by_role("button", name="Create the campaign").click()
    expect(lead.get_by_role("heading", name="Live 2026", level=1)).to_be_visible()
    form = lead.locator("form", has=lead.get_by_role("button", name="Import topics"))
    form.locator('input[type="file"]').set_input_files(
        {"name": "topics.tsv", "mimeType": "text/tab-separated-values", "buffer": TOPICS}
    )
    form.get_by_role("button", name="Import topics").click()
    expect(lead.get_by_text("Done", exact=True)).to_be_visible()
    lead.get_by_role("button", name="Back to the campaign").click()
    lead.get_by_test_id("campaign-nav").get_by_role("link", name="Pool", exact=True).click()
    lead.get_by_label("Runs").select_option(value=[str(run.pk) for run in runs])
    lead.get_by_label("Depth k").fill("3")
    lead.get_by_role("button", name="Build the pool").click()
    expect(lead.get_by_text("Done", exact=True)).to_be_visible()
    campaign = Campaign.objects.get(name="Live 2026")
    assert campaign.pool_ordering == PoolOrdering.BANDIT
    assert campaign.pairs.count() == 18 and Assignment.objects.count() == 18
    # The pooled documents' text, as the lead's documents import would give it: judges'
    # queues hold only pairs whose document has text.
    Document.objects.filter(campaign=campaign).update(text="A passage.")
    return campaign


def open_pairs(judge):
    return Assignment.objects.filter(judge=judge, status="open").count()


def test_a_bandit_campaign_narrows_settles_and_pauses_by_its_stop_rule(
    browser, live_server, people_and_runs, monkeypatch
):
    # The board polls every POLL_SECONDS (3 s); each grade below waits for a poll, so the
    # board polls faster here: the same page, the same requests, a fifth of the waiting.
    monkeypatch.setattr(live_views, "POLL_SECONDS", 0.5)
    _, judges, runs = people_and_runs
    lead = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    log_in(lead, live_server, "lead")
    campaign = start_bandit_campaign(lead, live_server, runs)

    lead.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    lead.get_by_test_id("campaign-nav").get_by_role("link", name="Live leaderboard").click()
    expect(lead.get_by_test_id("open-badge")).to_be_visible()
    expect(lead.locator("#live-pairs")).to_contain_text("still open")
    expect(lead.get_by_test_id("probability")).to_have_text(re.compile(r"^0\.\d{4}$"))
    expect(lead.get_by_test_id("spent")).to_have_text("0")
    # The stop rule: every adjacent pair settled at 95%.
    lead.get_by_test_id("stop-rule-select").select_option("adjacent")
    lead.get_by_label("Confidence", exact=True).fill("0.95")
    lead.get_by_test_id("stop-rule-save").click()
    expect(lead.locator(".flash-success")).to_contain_text(
        "Stop rule: every pair of adjacent runs settled at 95% (nDCG@10)."
    )
    expect(lead.get_by_test_id("stop-armed")).to_be_visible()
    widths = lead.get_by_test_id("width")
    before = [float(text) for text in widths.all_inner_texts()]
    assert all(width > 0 for width in before)
    lead.evaluate("window.notReloaded = true")
    shoot(lead, "live-board-open")

    judge_page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    slot = judge_page.locator("#document-slot [data-assignment]")
    spent = 0
    paused_for = None
    for judge in judges:
        judge_page.context.clear_cookies()
        log_in(judge_page, live_server, judge.username)
        judge_page.goto(f"{live_server.url}/campaigns/{campaign.pk}/judge/")
        while open_pairs(judge) and paused_for is None:
            expect(slot).to_be_visible()
            shown = slot.get_attribute("data-assignment")
            docno = Assignment.objects.get(pk=shown).pair.document.docno
            judge_page.keyboard.press(f"Digit{truth(docno)}")
            spent += 1
            # The lead's page polls: each judgment shows up without a reload, and the
            # board (computed in the page's refresh, never in the grade) checks the rule.
            expect(lead.get_by_test_id("spent")).to_have_text(str(spent), timeout=15000)
            if lead.get_by_test_id("stop-paused").count():
                paused_for = judge
        if judge is judges[0] and paused_for is None:
            narrower = [float(text) for text in widths.all_inner_texts()]
            assert sum(narrower) < sum(before)
        if paused_for is not None:
            break

    # The pair became settled, and the rule paused judging, told on the live board.
    assert paused_for is not None, "the stop rule never paused judging"
    expect(lead.get_by_test_id("settled-badge")).to_be_visible()
    expect(lead.locator("#live-pairs")).to_contain_text(
        "good/good beats weak/weak whatever the unjudged documents are"
    )
    expect(lead.get_by_test_id("stop-spent")).to_have_text(str(spent))
    assert lead.evaluate("window.notReloaded") is True
    shoot(lead, "live-board-paused")

    # The judge finishes the pair on their screen (if one is left) and is told, not failed.
    if open_pairs(paused_for):
        expect(slot).to_be_visible()
        shown = slot.get_attribute("data-assignment")
        judge_page.keyboard.press(
            f"Digit{truth(Assignment.objects.get(pk=shown).pair.document.docno)}"
        )
        spent += 1
    if open_pairs(paused_for):
        expect(judge_page.get_by_test_id("judging-paused")).to_be_visible()
        expect(
            judge_page.get_by_text("This campaign has paused: the ranking is settled")
        ).to_be_visible()
        expect(judge_page.locator("#save-state")).to_have_attribute("data-state", "saved")
        shoot(judge_page, "judge-paused")
    # A judge who opens the page now sees the pause at once.
    other = next(j for j in judges if open_pairs(j) and j is not paused_for)
    judge_page.context.clear_cookies()
    log_in(judge_page, live_server, other.username)
    judge_page.goto(f"{live_server.url}/campaigns/{campaign.pk}/judge/")
    expect(judge_page.get_by_test_id("judging-paused")).to_be_visible()
    expect(slot).to_have_count(0)

    # The campaign page says so too, and the lead resumes from it.
    lead.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    expect(lead.get_by_test_id("stop-paused")).to_contain_text("every pair of adjacent runs")
    shoot(lead, "campaign-paused")
    lead.get_by_test_id("resume").click()
    expect(lead.get_by_text("Judging resumed")).to_be_visible()
    expect(lead.get_by_test_id("stop-resumed")).to_be_visible()
    judge_page.get_by_role("button", name="Check again").click()
    expect(slot).to_be_visible()
    assert Campaign.objects.get(pk=campaign.pk).paused_at is None
