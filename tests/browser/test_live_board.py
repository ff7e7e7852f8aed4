"""A lead watches the live leaderboard of a running campaign while three judges grade
(issue 13, part 2), in Chromium: without a reload, the runs' bounds narrow and the pair of
systems becomes settled."""

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment
from tests.annotation.live_data import live_world, truth
from tests.browser.conftest import SCREENSHOTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"


@pytest.fixture
def world(django_user_model, media_root):
    return live_world(django_user_model, password=PASSWORD)


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).not_to_have_url(re.compile("/accounts/login/"))


def grade_everything(page, live_server, campaign, judge) -> int:
    """The judge grades each of their pairs from the keyboard with its true grade."""
    log_in(page, live_server, judge.username)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/judge/")
    slot = page.locator("#document-slot [data-assignment]")
    graded = 0
    for _ in range(Assignment.objects.filter(judge=judge).count()):
        expect(slot).to_be_visible()
        shown = slot.get_attribute("data-assignment")
        docno = Assignment.objects.get(pk=shown).pair.document.docno
        page.keyboard.press(f"Digit{truth(docno)}")
        graded += 1
        if graded < Assignment.objects.filter(judge=judge).count():
            expect(slot).not_to_have_attribute("data-assignment", shown)
    expect(page.locator("[data-finished]")).to_be_visible()
    expect(page.locator("#save-state")).to_have_attribute("data-state", "saved", timeout=15000)
    return graded


def shoot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)


def test_bounds_narrow_and_the_pair_settles_while_judges_grade(browser, live_server, world):
    campaign, _, judges, _ = world
    lead = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    log_in(lead, live_server, "lead")
    lead.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    lead.get_by_test_id("live-board-link").click()
    expect(lead.get_by_test_id("open-badge")).to_be_visible()
    expect(lead.locator("#live-pairs")).to_contain_text("still open")
    expect(lead.get_by_test_id("spent")).to_have_text("0")
    widths = lead.get_by_test_id("width")
    before = [float(text) for text in widths.all_inner_texts()]
    assert all(width > 0 for width in before)
    lead.evaluate("window.notReloaded = true")
    shoot(lead, "live-board-open")

    judge_page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    spent = 0
    for judge in judges:
        judge_page.context.clear_cookies()
        spent += grade_everything(judge_page, live_server, campaign, judge)
        # The lead's page polls: the judgments show up without a reload.
        expect(lead.get_by_test_id("spent")).to_have_text(str(spent), timeout=15000)
        if judge is judges[0]:
            narrower = [float(text) for text in widths.all_inner_texts()]
            assert sum(narrower) < sum(before)

    expect(lead.get_by_test_id("settled-badge")).to_be_visible(timeout=15000)
    expect(lead.locator("#live-pairs")).to_contain_text(
        "good/good beats weak/weak whatever the unjudged documents are"
    )
    assert [float(text) for text in widths.all_inner_texts()] == [0.0, 0.0]
    assert lead.evaluate("window.notReloaded") is True
    shoot(lead, "live-board-settled")
