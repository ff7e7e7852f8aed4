"""Teams in the browser (issue 32): the lead of team B finds none of team A's campaign, run
and qrels, neither listed nor by address (404); A's lead shares the qrels version from its
page, and B's lead then reads it, read-only. B's lead makes a service token on the Teams page
and sees its key once. At 1280 px and on a phone (390 px), where no page scrolls sideways."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from accounts.models import Membership, Team
from annotation import services as annotation
from evaluation import services as evaluation
from tests.api.conftest import QRELS, RUN
from tests.browser.conftest import SCREENSHOTS, save_screenshot, scroll_width

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
SHOTS = SCREENSHOTS / "teams"


@pytest.fixture
def teams(django_user_model, media_root):
    """Team A (the default team: its lead holds the lead group) with a campaign, qrels and a
    run; team B ("Web search") whose lead holds her role there alone."""
    lea = django_user_model.objects.create_user("lea", password=PASSWORD)
    lea.groups.add(Group.objects.get_or_create(name="lead")[0])
    web = Team.objects.create(name="Web search", slug="web-search")
    olga = django_user_model.objects.create_user("olga", password=PASSWORD)
    Membership.objects.create(team=web, user=olga, role="lead")
    campaign = annotation.create_campaign(lead=lea, name="Robust 2026")
    qrels = evaluation.import_qrels(source=QRELS, filename="dl.qrels", name="dl-2026")
    run = evaluation.import_run(source=RUN, filename="bm25.run", system="bm25-team-a")
    return {"campaign": campaign, "qrels": qrels, "run": run, "web": web}


def shoot(page, name: str) -> None:
    save_screenshot(page, SHOTS / f"{name}.png")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_lead_of_another_team_cannot_see_a_teams_campaign_run_or_qrels(
    page, live_server, login, teams, width
):
    page.set_viewport_size({"width": width, "height": 900})
    base = live_server.url
    campaign, qrels, run = teams["campaign"], teams["qrels"], teams["run"]

    login("olga", PASSWORD)
    for listing, hidden in (
        ("/campaigns/", "Robust 2026"),
        ("/evaluation/qrels/", "dl-2026"),
        ("/evaluation/runs/", "bm25-team-a"),
    ):
        page.goto(base + listing)
        expect(page.locator("main")).not_to_contain_text(hidden)
        assert scroll_width(page) <= width, f"{listing} scrolls sideways"
    for address in (
        f"/campaigns/{campaign.pk}/",
        f"/evaluation/runs/{run.pk}/",
        f"/evaluation/qrels/{qrels.pk}/",
        f"/evaluation/qrels/{qrels.pk}/download/",
    ):
        answer = page.goto(base + address)
        assert answer.status == 404, address
    shoot(page, f"other-team-404-{width}")

    # Team A's lead shares the version from its page.
    page.context.clear_cookies()
    login("lea", PASSWORD)
    page.goto(f"{base}/evaluation/qrels/{qrels.pk}/")
    sharing = page.get_by_test_id("qrels-sharing")
    sharing.get_by_label("Web search").check()
    shoot(page, f"qrels-sharing-{width}")
    assert scroll_width(page) <= width, "the qrels page scrolls sideways"
    sharing.get_by_role("button", name="Save the sharing").click()
    expect(page.locator("body")).to_contain_text("shared read-only with Web search")

    # Team B's lead reads it now, and nothing else of team A.
    page.context.clear_cookies()
    login("olga", PASSWORD)
    page.goto(f"{base}/evaluation/qrels/{qrels.pk}/")
    expect(page.get_by_test_id("qrels-team")).to_contain_text("shared with your team, read-only")
    expect(page.get_by_test_id("qrels-sharing")).to_have_count(0)
    shoot(page, f"qrels-shared-read-only-{width}")
    assert scroll_width(page) <= width
    assert page.goto(f"{base}/campaigns/{campaign.pk}/").status == 404
    assert page.goto(f"{base}/evaluation/runs/{run.pk}/").status == 404

    # Her team's service token, its key shown once.
    page.goto(f"{base}/accounts/teams/")
    team = page.get_by_test_id("team-web-search")
    team.get_by_label("Name").fill("nightly gate")
    team.get_by_label("May").select_option("upload_runs")
    team.get_by_role("button", name="Create a service token").click()
    created = page.get_by_test_id("new-service-token")
    expect(created).to_contain_text("shown this once")
    key = page.locator("#new-token-key").input_value()
    assert key.startswith("rss_")
    shoot(page, f"teams-service-token-{width}")
    assert scroll_width(page) <= width, "the Teams page scrolls sideways"
    page.goto(f"{base}/accounts/teams/")
    expect(page.locator("main")).not_to_contain_text(key)
    expect(page.get_by_test_id("team-web-search")).to_contain_text("nightly gate")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_lead_of_two_teams_picks_the_campaigns_team(page, live_server, login, teams, width):
    page.set_viewport_size({"width": width, "height": 900})
    lea = teams["campaign"].lead
    Membership.objects.create(team=teams["web"], user=lea, role="lead")
    login("lea", PASSWORD)
    page.goto(f"{live_server.url}/campaigns/new/")
    picker = page.get_by_test_id("team-picker")
    expect(picker).to_be_visible()
    shoot(page, f"campaign-team-picker-{width}")
    assert scroll_width(page) <= width, "the campaign form scrolls sideways"
    picker.select_option("web-search")
    page.get_by_label("Name", exact=True).fill("Web relevance")
    page.get_by_role("button", name="Create the campaign").click()
    expect(page.get_by_role("heading", name="Web relevance")).to_be_visible()
    from annotation.models import Campaign

    assert Campaign.objects.get(name="Web relevance").team == teams["web"]
