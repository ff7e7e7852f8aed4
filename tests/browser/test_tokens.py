"""A user makes a personal API token in the browser, sees its key once, calls the API with
it from outside the browser, and revokes it; all under the Content Security Policy."""

import json
import urllib.error
import urllib.request

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from accounts.models import PersonalToken
from accounts.services.tokens import create_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def call_api(url: str, key: str) -> tuple[int, dict]:
    """GET ``url`` with only the token: no cookie, so no session to fall back on."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_a_user_creates_uses_and_revokes_a_token(
    page, live_server, login, screenshot, django_user_model
):
    user = django_user_model.objects.create_user("ada", password="a-long-demo-password")
    user.groups.add(Group.objects.get(name="engineer"))
    violations = []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    login("ada", "a-long-demo-password")

    page.locator("summary", has_text="ada").click()
    screenshot("user-menu")
    page.get_by_role("link", name="API tokens").click()
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    expect(page.get_by_text("No active tokens.")).to_be_visible()

    page.get_by_label("Name").fill("laptop")
    page.get_by_role("button", name="Create token").click()

    key_field = page.get_by_label("Key of laptop")
    expect(key_field).to_be_visible()
    key = key_field.input_value()
    assert key.startswith("rs_") and len(key) > 40
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == key
    row = page.get_by_role("row", name="laptop")
    expect(row).to_contain_text(key[:11] + "…")
    expect(row).to_contain_text("never")
    screenshot("tokens-created")

    status, body = call_api(f"{live_server.url}/api/v1/runs/", key)
    assert status == 200, body

    page.goto(f"{live_server.url}/accounts/tokens/")
    expect(page.get_by_label("Key of laptop")).to_have_count(0)
    assert key not in page.content(), "the key is shown once only"
    expect(page.get_by_role("row", name="laptop")).not_to_contain_text("never")

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke laptop").click()
    expect(page.get_by_role("status")).to_contain_text("Token “laptop” revoked")
    expect(page.get_by_text("No active tokens.")).to_be_visible()
    page.get_by_text("Revoked tokens (1)").click()
    screenshot("tokens-revoked")

    status, body = call_api(f"{live_server.url}/api/v1/runs/", key)
    assert (status, body) == (403, {"detail": "Invalid token."})
    assert violations == []


def test_dismissing_the_question_keeps_the_token(page, live_server, login, django_user_model):
    user = django_user_model.objects.create_user("ada", password="a-long-demo-password")
    create_token(user=user, name="laptop")
    login("ada", "a-long-demo-password")
    page.goto(f"{live_server.url}/accounts/tokens/")

    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Revoke laptop").click()

    expect(page.get_by_role("button", name="Revoke laptop")).to_be_visible()
    assert PersonalToken.objects.get().revoked_at is None
