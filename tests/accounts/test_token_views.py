"""The API tokens page: make a named token (its key shown once, stored as a hash), list
yours, revoke one. Someone else's token is a 404."""

import hashlib
import re

import pytest
from django.test import Client

from accounts.models import PersonalToken
from accounts.services.tokens import KEY_PREFIX, MESSAGES, create_token, revoke_token

pytestmark = pytest.mark.django_db

PAGE = "/accounts/tokens/"


def revoke_url(token) -> str:
    return f"/accounts/tokens/{token.pk}/revoke/"


@pytest.fixture
def ann(make_user):
    return make_user("ann", "judge")


@pytest.fixture
def client(ann):
    client = Client()
    client.force_login(ann)
    return client


def shown_key(response) -> str:
    [key] = re.findall(rf'value="({re.escape(KEY_PREFIX)}[^"]+)"', response.content.decode())
    return key


def test_the_page_needs_a_login():
    response = Client().get(PAGE)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={PAGE}"


def test_a_new_key_is_shown_once_and_stored_only_as_its_hash(client, ann):
    created = client.post(PAGE, {"name": "laptop"})

    assert created.status_code == 201
    key = shown_key(created)
    token = PersonalToken.objects.get(user=ann)
    assert token.name == "laptop"
    assert token.key_hash == hashlib.sha256(key.encode()).hexdigest()
    stored = [str(value) for value in PersonalToken.objects.values().get().values()]
    assert not any(key in value for value in stored), "the key is stored in clear"
    assert token.prefix == key[: len(token.prefix)] and len(token.prefix) < len(key) // 3

    later = client.get(PAGE).content.decode()
    assert key not in later
    assert f"{token.prefix}…" in later
    assert "laptop" in later


def test_the_page_with_a_key_is_never_cached(client):
    response = client.post(PAGE, {"name": "laptop"})

    assert "no-store" in response["Cache-Control"]


def test_a_user_holds_several_tokens_and_sees_only_their_own(client, ann, make_user):
    create_token(user=ann, name="laptop")
    create_token(user=ann, name="nightly evaluation")
    create_token(user=make_user("bob"), name="bobs-secret-script")

    page = client.get(PAGE).content.decode()

    assert "laptop" in page and "nightly evaluation" in page
    assert "bobs-secret-script" not in page


@pytest.mark.parametrize(
    "name,message",
    [("", "This field is required."), ("x" * 101, "Ensure this value has at most 100")],
)
def test_a_missing_or_long_name_is_refused(client, name, message):
    response = client.post(PAGE, {"name": name})

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not PersonalToken.objects.exists()


def test_a_second_active_token_with_the_same_name_is_refused(client, ann):
    token, _ = create_token(user=ann, name="laptop")

    response = client.post(PAGE, {"name": " laptop "})

    assert response.status_code == 400
    assert MESSAGES["duplicate_name"].format(name="laptop") in response.content.decode()
    revoke_token(token=token)
    assert client.post(PAGE, {"name": "laptop"}).status_code == 201


def test_revoking_marks_the_token_and_says_so(client, ann):
    token, _ = create_token(user=ann, name="laptop")

    response = client.post(revoke_url(token), follow=True)

    assert response.redirect_chain == [(PAGE, 302)]
    token.refresh_from_db()
    assert token.revoked_at is not None
    page = response.content.decode()
    assert "Token “laptop” revoked" in page
    assert "Revoked tokens (1)" in page


def test_revoking_twice_keeps_the_first_time(client, ann):
    token, _ = create_token(user=ann, name="laptop")
    client.post(revoke_url(token))
    token.refresh_from_db()
    first = token.revoked_at

    response = client.post(revoke_url(token), follow=True)

    token.refresh_from_db()
    assert token.revoked_at == first
    assert "Token “laptop” was already revoked." in response.content.decode()


def test_someone_elses_token_is_not_found(client, make_user):
    token, _ = create_token(user=make_user("bob"), name="laptop")

    response = client.post(revoke_url(token))

    assert response.status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_revoking_is_post_only(client, ann):
    token, _ = create_token(user=ann, name="laptop")

    assert client.get(revoke_url(token)).status_code == 405
    token.refresh_from_db()
    assert token.revoked_at is None


def test_revoking_needs_the_csrf_token(ann):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ann)
    token, _ = create_token(user=ann, name="laptop")

    assert client.post(revoke_url(token)).status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None


def test_an_anonymous_revoke_goes_to_the_login_page(ann):
    token, _ = create_token(user=ann, name="laptop")

    response = Client().post(revoke_url(token))

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_user_menu_links_to_the_tokens_page(client):
    assert f'href="{PAGE}"' in client.get("/").content.decode()


def test_the_tokens_page_runs_a_fixed_number_of_queries(client, ann, django_assert_num_queries):
    for name in ("a", "b", "c"):
        create_token(user=ann, name=name)
    revoke_token(token=PersonalToken.objects.get(name="c"))

    # session, user, the user's role groups (the navigation); active tokens, the revoked
    # count, the revoked list.
    with django_assert_num_queries(6):
        client.get(PAGE)
