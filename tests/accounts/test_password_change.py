"""A new password ends the user's API tokens (issue 27, finding 12), whichever way it is set:
the user's own page, the admin's password page (a new password, or password login
disabled), ``manage.py changepassword``, and a reset (Django's ``SetPasswordForm``, which
its reset confirmation uses). The pages say so before the change. Setting the same password
again, a hash upgraded at login, or any other save of the user ends nothing."""

import logging

import pytest
from django.contrib.auth.forms import SetPasswordForm
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from accounts.authentication import MESSAGES as AUTH_MESSAGES
from accounts.services.tokens import create_token, revoke_token
from accounts.views import MESSAGES
from tests.accounts.conftest import PASSWORD

pytestmark = pytest.mark.django_db

PAGE = "/accounts/password/"
NEW_PASSWORD = "another-long-password-42"
API = "/api/v1/assignments/"


@pytest.fixture
def ann(make_user):
    return make_user("ann", "judge")


@pytest.fixture
def keys(ann):
    """Two active tokens of ann's (and one revoked before, which stays as it was)."""
    old, _ = create_token(user=ann, name="old laptop")
    revoke_token(token=old)
    return [create_token(user=ann, name=name)[1] for name in ("laptop", "nightly")]


def api_answer(key: str):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client.get(API)


def assert_refused(key: str):
    response = api_answer(key)
    assert response.status_code == 403, response.content  # DRF's answer to a refused token
    assert response.json() == {"detail": AUTH_MESSAGES["invalid"]}


def active_names(user) -> list[str]:
    return sorted(
        user.personal_tokens.filter(revoked_at__isnull=True).values_list("name", flat=True)
    )


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def change_on_own_page(client, *, old=PASSWORD, new=NEW_PASSWORD):
    data = {"old_password": old, "new_password1": new, "new_password2": new}
    return client.post(PAGE, data, follow=True)


# --- the user's own page ----------------------------------------------------------------


def test_the_page_names_the_tokens_the_change_will_revoke(ann, keys):
    page = logged_in(ann).get(PAGE).content.decode()

    assert "Changing your password revokes your 2 API tokens" in page
    assert "“laptop”" in page and "“nightly”" in page
    assert "old laptop" not in page  # already revoked


def test_the_page_says_nothing_of_tokens_when_there_are_none(ann):
    page = logged_in(ann).get(PAGE).content.decode()

    assert "Change your password" in page
    assert "revokes" not in page


def test_changing_ones_password_revokes_ones_tokens_and_says_so(ann, keys, make_user):
    bob = make_user("bob", "judge")
    _, bobs_key = create_token(user=bob, name="laptop")
    for key in keys:
        assert api_answer(key).status_code == 200
    client = logged_in(ann)

    response = change_on_own_page(client)

    assert response.redirect_chain == [("/accounts/tokens/", 302)]
    assert MESSAGES["password_changed_tokens"].format(count=2, plural="s") in (
        response.content.decode()
    )
    ann.refresh_from_db()
    assert ann.check_password(NEW_PASSWORD)
    assert active_names(ann) == []
    for key in keys:
        assert_refused(key)
    assert api_answer(bobs_key).status_code == 200, "another user's token was revoked"
    assert client.get(PAGE).status_code == 200, "the change logged the user out"


def test_a_change_without_tokens_goes_home(ann):
    response = change_on_own_page(logged_in(ann))

    assert response.redirect_chain == [("/", 302)]
    assert MESSAGES["password_changed"] in response.content.decode()


def test_a_wrong_old_password_changes_nothing(ann, keys):
    response = change_on_own_page(logged_in(ann), old="not-my-password")

    assert response.status_code == 200
    assert "Your old password was entered incorrectly" in response.content.decode()
    assert active_names(ann) == ["laptop", "nightly"]


def test_the_page_needs_a_login():
    response = Client().get(PAGE)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_user_menu_and_the_tokens_page_link_to_the_page(ann):
    client = logged_in(ann)

    assert f'href="{PAGE}"' in client.get("/").content.decode()
    assert f'href="{PAGE}"' in client.get("/accounts/tokens/").content.decode()


# --- the admin's password page ----------------------------------------------------------


@pytest.fixture
def admin_client(django_user_model):
    root = django_user_model.objects.create_superuser("root", password=PASSWORD)
    return logged_in(root)


def admin_page(user) -> str:
    return f"/admin/auth/user/{user.pk}/password/"


def test_the_admins_page_names_the_tokens_a_new_password_revokes(admin_client, ann, keys):
    page = admin_client.get(admin_page(ann)).content.decode()

    assert "revokes the 2 API tokens of <strong>ann</strong>" in page
    assert "“laptop”" in page and "“nightly”" in page


def test_a_new_password_from_the_admin_revokes_the_users_tokens(admin_client, ann, keys):
    data = {"usable_password": "true", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD}

    response = admin_client.post(admin_page(ann), {**data, "set-password": "1"})

    assert response.status_code == 302, response.content.decode()[:2000]
    ann.refresh_from_db()
    assert ann.check_password(NEW_PASSWORD)
    assert active_names(ann) == []
    for key in keys:
        assert_refused(key)


def test_disabling_password_login_in_the_admin_revokes_the_users_tokens(admin_client, ann, keys):
    data = {"usable_password": "false", "unset-password": "1"}

    response = admin_client.post(admin_page(ann), data)

    assert response.status_code == 302, response.content.decode()[:2000]
    ann.refresh_from_db()
    assert not ann.has_usable_password()
    assert active_names(ann) == []


# --- manage.py changepassword and a reset -----------------------------------------------


def test_changepassword_revokes_the_users_tokens(ann, keys, monkeypatch, caplog):
    # The command reads the password twice from the terminal.
    monkeypatch.setattr(
        "django.contrib.auth.management.commands.changepassword.getpass.getpass",
        lambda prompt="": NEW_PASSWORD,
    )

    with caplog.at_level(logging.INFO, logger="accounts.signals"):
        call_command("changepassword", "ann", stdout=None)

    ann.refresh_from_db()
    assert ann.check_password(NEW_PASSWORD)
    assert active_names(ann) == []
    assert "Revoked 2 API token(s) of ann: the password changed." in caplog.messages


def test_a_reset_revokes_the_users_tokens(ann, keys):
    form = SetPasswordForm(ann, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert form.is_valid(), form.errors

    form.save()

    assert active_names(ann) == []
    for key in keys:
        assert_refused(key)


def test_set_password_in_code_revokes_the_users_tokens(ann, keys):
    ann.set_password(NEW_PASSWORD)
    ann.save()

    assert active_names(ann) == []


# --- what is not a password change ------------------------------------------------------


def test_setting_the_same_password_again_keeps_the_tokens(ann, keys):
    ann.set_password(PASSWORD)  # what `manage.py demo` does at every start
    ann.save()

    assert active_names(ann) == ["laptop", "nightly"]


def test_other_saves_of_the_user_keep_the_tokens(ann, keys, django_assert_num_queries):
    ann.first_name = "Ann"
    with django_assert_num_queries(1):  # the UPDATE: no look at the stored password
        ann.save()
    Client().login(username="ann", password=PASSWORD)  # saves last_login

    assert active_names(ann) == ["laptop", "nightly"]


def test_a_password_hash_upgraded_at_login_keeps_the_tokens(ann, keys, settings):
    # The user's hash was made with MD5 (the tests' hasher, tests/conftest.py); PBKDF2 is now preferred.
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]

    assert Client().login(username="ann", password=PASSWORD)

    ann.refresh_from_db()
    assert ann.password.startswith("pbkdf2_sha256$"), "the hash was not upgraded"
    assert active_names(ann) == ["laptop", "nightly"]


def test_a_new_user_is_saved_without_a_look_at_tokens(django_user_model, django_assert_num_queries):
    with django_assert_num_queries(1):  # the INSERT
        django_user_model.objects.create_user("new", password=PASSWORD)
