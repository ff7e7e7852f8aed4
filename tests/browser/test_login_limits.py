"""After too many failed logins the login page refuses, says when to come back, and answers
429; the right password does not get in before then."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_login_page_refuses_after_five_failures(
    page, live_server, login, screenshot, django_user_model
):
    django_user_model.objects.create_user("ada", password="a-long-demo-password")
    for _ in range(5):
        login("ada", "not-the-password")
        expect(page.get_by_role("alert")).to_contain_text("didn't match")

    with page.expect_response(lambda response: response.request.method == "POST") as answer:
        login("ada", "a-long-demo-password")

    assert answer.value.status == 429
    expect(page.get_by_role("alert")).to_contain_text(
        re.compile(r"Too many failed logins .* Try again in 15 minutes, after \d\d:\d\d UTC\.")
    )
    screenshot("login-refused")
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
