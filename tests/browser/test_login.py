import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_user_logs_in_and_sees_the_home_page(
    page, live_server, login, screenshot, django_user_model
):
    django_user_model.objects.create_user("ada", password="a-long-demo-password")

    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    screenshot("login")

    login("ada", "a-long-demo-password")

    expect(page).to_have_url(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="Welcome, ada")).to_be_visible()
    expect(page.get_by_role("link", name="Qrels", exact=True)).to_be_visible()
    screenshot("home")


def test_wrong_password_shows_an_error_and_stays_logged_out(
    page, live_server, login, django_user_model
):
    django_user_model.objects.create_user("ada", password="a-long-demo-password")

    login("ada", "not-the-password")

    expect(page.get_by_role("alert")).to_contain_text("didn't match")
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
