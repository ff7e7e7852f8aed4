"""Single sign-on in Chromium, through a real OpenID Connect provider on loopback
(oidc-provider: tests/oidc_server.py), at 1280 and 390 px: the login page's button, the
provider's sign-in page, and back with the mapped role; a group mapped to a role in a team
(``group:role@team``) lands in that team and sees nothing of another's; a user whose groups
give no role; logout ending the provider's session too."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import no_sideways_scroll
from tests.oidc_server import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def shoot(page, screenshot, name):
    screenshot(name)


def sign_in_at_provider(page, login):
    expect(page.get_by_role("heading", name="Test provider sign-in")).to_be_visible()
    page.get_by_label("Login").fill(login)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_a_lead_signs_in_through_the_provider(page, live_server, sso, screenshot, viewport):
    page.set_viewport_size(VIEWPORTS[viewport])
    login = sso.add_user(groups=["relevance-leads"], preferred_username="grace")

    page.goto(f"{live_server.url}/evaluation/runs/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    no_sideways_scroll(page)
    shoot(page, screenshot, f"login-sso-{VIEWPORTS[viewport]['width']}")
    page.get_by_role("button", name="Sign in with Test provider").click()

    sign_in_at_provider(page, login)

    expect(page).to_have_url(f"{live_server.url}/evaluation/runs/")
    if viewport == "phone":
        page.get_by_text("Menu", exact=True).click()
    expect(page.get_by_role("link", name="Leaderboard").first).to_be_visible()
    if viewport == "phone":
        page.get_by_text("Menu", exact=True).click()  # closed again, off the user's menu
    page.get_by_text("grace", exact=True).click()
    expect(page.get_by_text("lead", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Change password")).to_have_count(0)
    no_sideways_scroll(page)


def test_a_teams_group_lands_in_its_team_and_sees_nothing_of_another(
    page, live_server, sso, django_user_model, screenshot
):
    from django.contrib.auth.models import Group

    from annotation import services as annotation

    lea = django_user_model.objects.create_user("lea")
    lea.groups.add(Group.objects.get(name="lead"))
    theirs = annotation.create_campaign(lead=lea, name="Default team's campaign")
    login = sso.add_user(groups=["web-leads"], preferred_username="hedy")

    page.goto(f"{live_server.url}/accounts/oidc/login/")
    sign_in_at_provider(page, login)

    page.goto(f"{live_server.url}/accounts/teams/")
    expect(page.get_by_test_id("team-web-search")).to_contain_text("lead")
    expect(page.locator("main")).not_to_contain_text("Default team")
    shoot(page, screenshot, "sso-team-1280")
    page.goto(f"{live_server.url}/campaigns/")
    expect(page.locator("main")).not_to_contain_text("Default team's campaign")
    assert page.goto(f"{live_server.url}/campaigns/{theirs.pk}/").status == 404


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_groups_that_give_no_role_get_a_page_saying_so(
    page, live_server, sso, screenshot, viewport
):
    page.set_viewport_size(VIEWPORTS[viewport])
    login = sso.add_user(groups=["marketing"])

    page.goto(f"{live_server.url}/accounts/oidc/login/")
    sign_in_at_provider(page, login)

    expect(page.get_by_role("heading", name="No role for you here yet")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("none of your groups there gives you a role")
    expect(page.get_by_text("relevance-leads")).to_be_visible()
    no_sideways_scroll(page)
    shoot(page, screenshot, f"no-role-{VIEWPORTS[viewport]['width']}")
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))


def test_logout_ends_the_providers_session_too(page, live_server, sso):
    login = sso.add_user(groups=["relevance-judges"], preferred_username="katherine")
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_role("button", name="Sign in with Test provider").click()
    sign_in_at_provider(page, login)
    expect(page.get_by_text("katherine", exact=True)).to_be_visible()

    page.get_by_text("katherine", exact=True).click()
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Sign out of the test provider?")).to_be_visible()
    page.get_by_role("button", name="Yes, sign me out").click()

    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    # The provider's session is gone too: signing in again asks for the password.
    page.get_by_role("button", name="Sign in with Test provider").click()
    expect(page.get_by_role("heading", name="Test provider sign-in")).to_be_visible()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_with_local_login_off_the_page_offers_the_provider_only(
    page, live_server, sso, settings, screenshot, viewport
):
    settings.LOCAL_LOGIN = False
    page.set_viewport_size(VIEWPORTS[viewport])
    page.goto(f"{live_server.url}/accounts/login/")
    expect(page.get_by_role("button", name="Sign in with Test provider")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_count(0)
    no_sideways_scroll(page)
    shoot(page, screenshot, f"login-sso-only-{VIEWPORTS[viewport]['width']}")
