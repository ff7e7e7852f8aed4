"""One campaign navigation on every lead page of a campaign (issue 28, item 8): the same
entries everywhere, the page's own marked aria-current="page" (its section "true" on a page
below one), and nothing of it for anyone but the campaign's lead and admins."""

import re

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


# Every entry of annotation/_campaign_nav.html: (the page's path under the campaign, label).
ENTRIES = [
    ("", "Overview"),
    ("pool/", "Pool"),
    ("progress/", "Judges &amp; progress"),
    ("machines/", "Machine judges"),
    ("judgments/", "Judgments from elsewhere"),
    ("agreement/", "Agreement"),
    ("calibration/", "Calibration"),
    ("adjudicate/", "Disagreements"),
    ("live/", "Live leaderboard"),
    ("certified/", "Certified leaderboard"),
    ("publish/", "Publish qrels"),
    ("edit/", "Settings"),
]


def nav_of(html: str) -> str:
    navs = re.findall(r'<nav class="campaign-nav".*?</nav>', html, re.S)
    assert len(navs) == 1, f"expected one campaign navigation, found {len(navs)}"
    return navs[0]


def links_of(nav: str) -> list[tuple[str, str, str | None]]:
    """(href, label, aria-current) of each entry, in order."""
    return [
        (href, label, current or None)
        for href, current, label in re.findall(
            r'<a href="([^"]+)"(?: aria-current="([^"]+)")?>([^<]+)</a>', nav
        )
    ]


@pytest.mark.parametrize(("path", "label"), ENTRIES, ids=[e[1] for e in ENTRIES])
def test_every_campaign_page_has_the_one_navigation_with_itself_marked(client, world, path, label):
    client.force_login(world.users["lead"])
    base = f"/campaigns/{world.campaign.pk}/"

    response = client.get(base + path)

    assert response.status_code == 200
    links = links_of(nav_of(response.content.decode()))
    assert [(href, text) for href, text, _ in links] == [(base + p, t) for p, t in ENTRIES]
    assert [text for _, text, current in links if current] == [label]
    assert dict((text, current) for _, text, current in links)[label] == "page"


@pytest.mark.parametrize(
    ("below", "section"),
    [("machines/{machine}/", "Machine judges"), ("adjudicate/{pair}/", "Disagreements")],
)
def test_a_page_below_a_section_marks_the_section_but_not_as_itself(client, world, below, section):
    client.force_login(world.users["lead"])
    path = below.format(machine=world.machine.pk, pair=world.ids["pair"])

    html = client.get(f"/campaigns/{world.campaign.pk}/{path}").content.decode()

    marked = [(text, current) for _, text, current in links_of(nav_of(html)) if current]
    assert marked == [(section, "true")]


def test_the_old_button_rows_are_gone(client, world):
    """The campaign page had ten buttons with Pool highlighted; sub-pages had their own few."""
    client.force_login(world.users["lead"])
    for path, _ in ENTRIES:
        html = client.get(f"/campaigns/{world.campaign.pk}/{path}").content.decode()
        assert not re.search(r'role="button"[^>]*>(Pool|Progress|Campaign|Agreement)<', html), path


def test_an_admin_sees_it_and_a_new_campaign_form_has_none(client, world):
    client.force_login(world.users["admin"])
    nav_of(client.get(f"/campaigns/{world.campaign.pk}/pool/").content.decode())
    client.force_login(world.users["lead"])
    assert "campaign-nav" not in client.get("/campaigns/new/").content.decode()


def test_judges_see_no_lead_entry(client, world):
    """The judge's own page of the campaign shows none of the lead's pages; the lead's pages
    are 404s to a judge."""
    client.force_login(world.users["judge"])
    base = f"/campaigns/{world.campaign.pk}/"

    html = client.get(base + "judge/").content.decode()

    assert "campaign-nav" not in html
    for path, _ in ENTRIES:
        if path:
            assert f'href="{base}{path}"' not in html, path
        assert client.get(base + path).status_code == 404, path
