"""The campaign navigation in a browser at 1280 and 390 px (issue 28, item 8): a lead goes
from any campaign page to any other in one click, the page's own entry is marked, and on a
phone the navigation wraps inside the page's width instead of widening it."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation import services
from annotation.models import PairSource, Topic

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
# The navigation's entries, in order, with the heading each page opens on.
ENTRIES = [
    ("Overview", "Pets 2026"),
    ("Pool", "Pool"),
    ("Judges & progress", "Progress"),
    ("Machine judges", "Machine judges"),
    ("Judgments from elsewhere", "Judgments from elsewhere"),
    ("Agreement", "Agreement"),
    ("Calibration", "Calibration"),
    ("Disagreements", "Disagreements"),
    ("Live leaderboard", "Live leaderboard"),
    ("Publish qrels", "Publish qrels"),
    ("Settings", "Edit Pets 2026"),
]
# Where a box sticks out of the viewport on the right (0: it does not).
OVERHANG = "el => Math.max(0, el.getBoundingClientRect().right - window.innerWidth)"
# Each link's text, overhang and whether it is visible as Playwright's is_visible() means
# it (a box of some size, and not visibility: hidden).
LINKS = """links => links.map(link => {
  const box = link.getBoundingClientRect();
  const visible = box.width > 0 && box.height > 0
    && link.checkVisibility({visibilityProperty: true});
  return [link.innerText, Math.max(0, box.right - window.innerWidth), visible];
})"""


@pytest.fixture
def campaign(django_user_model):
    lead = django_user_model.objects.create_user("lea", password=PASSWORD)
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    judge = django_user_model.objects.create_user("ann", password=PASSWORD)
    judge.groups.add(Group.objects.get_or_create(name="judge")[0])
    campaign = services.create_campaign(lead=lead, name="Pets 2026", judges=[judge])
    Topic.objects.create(campaign=campaign, qid="1", query="walking an old dog")
    services.add_pairs(campaign=campaign, pairs=[("1", "d1")], source=PairSource.IMPORTED)
    return campaign


@pytest.mark.parametrize("width", [1280, 390])
def test_one_click_from_any_campaign_page_to_any_other(
    page, live_server, login, screenshot, campaign, width
):
    page.set_viewport_size({"width": width, "height": 844 if width == 390 else 800})
    login("lea", PASSWORD)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    nav = page.get_by_test_id("campaign-nav")
    for label, heading in ENTRIES:
        nav.get_by_role("link", name=label, exact=True).click()
        expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible()
        current = nav.locator('[aria-current="page"]')
        expect(current).to_have_count(1)
        expect(current).to_have_text(label)
        # Every entry stays within the viewport: the navigation wraps, never widens the page.
        # (Every link measured in one call: one round trip per page, not two per link.)
        assert nav.evaluate(OVERHANG) == 0, (width, label)
        links = nav.get_by_role("link").evaluate_all(LINKS)
        assert links, (width, label)
        for text, overhang, visible in links:
            assert overhang == 0, (width, label, text)
            assert visible, (width, label, text)
    screenshot(f"campaign-nav-{width}")


def test_a_judge_sees_no_campaign_navigation(page, live_server, login, campaign):
    login("ann", PASSWORD)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/judge/")
    expect(page.get_by_role("heading", name="Pets 2026", level=1)).to_be_visible()
    expect(page.get_by_test_id("campaign-nav")).to_have_count(0)
    expect(page.get_by_role("link", name="Pool", exact=True)).to_have_count(0)
