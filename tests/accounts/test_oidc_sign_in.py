"""Single sign-on against a real OpenID Connect provider on loopback (oidc-provider, started
once per session: tests/oidc_server.py). The browser's part at the provider is walked over
plain HTTP here (tests/browser/test_oidc_login.py walks it in Chromium); our side runs in the
test client, on the live server's host name, which the provider's client is registered for.
"""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from accounts.models import OIDCIdentity
from accounts.services import oidc
from accounts.services.roles import Role, roles_of
from tests.oidc_server import sign_in_at_provider

pytestmark = pytest.mark.django_db

User = get_user_model()


def browser(provider) -> Client:
    """A test client that talks to us under the host name the provider redirects to."""
    return Client(HTTP_HOST=urlsplit(provider.base_url).netloc)


def start(client, next_url=None) -> str:
    answer = client.get("/accounts/oidc/login/", {"next": next_url} if next_url else {})
    assert answer.status_code == 302, answer.content[:300]
    return answer["Location"]


def callback_url(provider, login, client) -> str:
    """Starts a sign-in in ``client`` and signs in at the provider; the callback URL the
    provider sends the browser back to (not yet opened)."""
    return sign_in_at_provider(
        start(client), login, stop_at=f"{provider.base_url}/accounts/oidc/callback/"
    )


def open_callback(client, provider, url):
    return client.get(url.removeprefix(provider.base_url))


def sign_in(provider, login, client=None, next_url=None):
    client = client or browser(provider)
    url = sign_in_at_provider(
        start(client, next_url), login, stop_at=f"{provider.base_url}/accounts/oidc/callback/"
    )
    return client, open_callback(client, provider, url)


def signed_in_user(client):
    user_id = client.session.get(SESSION_KEY)
    return None if user_id is None else User.objects.get(pk=user_id)


def test_first_login_creates_the_user_with_the_mapped_roles(sso):
    login = sso.add_user(
        groups=["relevance-leads", "relevance-judges", "marketing"],
        preferred_username="ada.lovelace",
        given_name="Ada",
    )

    client, answer = sign_in(sso, login)

    assert answer.status_code == 302 and answer["Location"] == "/"
    user = signed_in_user(client)
    assert user.username == "ada.lovelace" and user.first_name == "Ada"
    assert user.email == f"{login}@example.com"
    assert roles_of(user) == {Role.LEAD, Role.JUDGE}
    assert not user.has_usable_password()
    identity = OIDCIdentity.objects.get(user=user)
    assert (identity.issuer, identity.subject) == (sso.issuer, login)
    assert identity.groups == ["relevance-leads", "relevance-judges", "marketing"]
    home = client.get("/")
    assert home.status_code == 200 and b"Change password" not in home.content


def test_the_page_asked_for_before_login_is_where_the_user_lands(sso):
    login = sso.add_user(groups=["search-eng"])
    _, answer = sign_in(sso, login, next_url="/evaluation/runs/")
    assert answer["Location"] == "/evaluation/runs/"


def test_a_next_url_on_another_site_is_dropped(sso):
    login = sso.add_user(groups=["search-eng"])
    _, answer = sign_in(sso, login, next_url="https://evil.example/")
    assert answer["Location"] == "/"


def test_a_changed_email_at_the_provider_is_the_same_user(sso):
    login = sso.add_user(groups=["relevance-judges"], email="old@example.com")
    first, _ = sign_in(sso, login)
    sso.write_user(login, groups=["relevance-judges"], email="new@example.com")

    second, answer = sign_in(sso, login)

    assert answer.status_code == 302
    assert signed_in_user(second).pk == signed_in_user(first).pk
    assert User.objects.filter(oidc_identities__subject=login).count() == 1
    assert User.objects.get(pk=signed_in_user(first).pk).email == "new@example.com"


def test_a_local_account_with_the_same_name_and_email_is_not_taken_over(sso):
    local = User.objects.create_user("ada", email="ada@example.com", password="a-long-password")
    login = sso.add_user(
        groups=["relevance-leads"], email="ada@example.com", preferred_username="ada"
    )

    client, _ = sign_in(sso, login)

    user = signed_in_user(client)
    assert user.pk != local.pk and user.username == "ada-2"
    assert roles_of(User.objects.get(pk=local.pk)) == set()


def test_roles_follow_the_groups_at_every_login(sso):
    login = sso.add_user(groups=["relevance-leads", "relevance-judges"])
    client, _ = sign_in(sso, login)
    assert roles_of(signed_in_user(client)) == {Role.LEAD, Role.JUDGE}

    sso.write_user(login, groups=["relevance-judges"], email=f"{login}@example.com")
    client, _ = sign_in(sso, login)

    assert roles_of(signed_in_user(client)) == {Role.JUDGE}


def test_groups_that_map_to_no_role_open_no_account(sso):
    login = sso.add_user(groups=["marketing", "sales"])

    client, answer = sign_in(sso, login)

    assert answer.status_code == 403
    text = answer.content.decode()
    assert "none of your groups there gives you a role here" in text
    assert "<code>marketing</code>" in text and "<code>relevance-leads</code>" in text
    assert signed_in_user(client) is None
    assert not OIDCIdentity.objects.filter(subject=login).exists()
    assert not User.objects.filter(email=f"{login}@example.com").exists()


def test_a_user_whose_groups_no_longer_map_loses_the_roles_and_is_refused(sso):
    login = sso.add_user(groups=["relevance-leads"])
    client, _ = sign_in(sso, login)
    user = signed_in_user(client)
    sso.write_user(login, groups=["marketing"], email=f"{login}@example.com")

    client, answer = sign_in(sso, login)

    assert answer.status_code == 403
    assert "role here any more" in answer.content.decode()
    assert signed_in_user(client) is None
    assert roles_of(User.objects.get(pk=user.pk)) == set()


def test_a_user_disabled_here_is_refused(sso):
    login = sso.add_user(groups=["relevance-leads"])
    client, _ = sign_in(sso, login)
    User.objects.filter(pk=signed_in_user(client).pk).update(is_active=False)

    client, answer = sign_in(sso, login)

    assert answer.status_code == 403 and oidc.MESSAGES["inactive"] in answer.content.decode()
    assert signed_in_user(client) is None


def test_a_wrong_state_is_refused_before_the_code_is_used(sso):
    login = sso.add_user(groups=["relevance-leads"])
    client = browser(sso)
    url = callback_url(sso, login, client)
    query = parse_qs(urlsplit(url).query)
    forged = f"/accounts/oidc/callback/?code={query['code'][0]}&state=not-the-state"

    answer = client.get(forged)

    assert answer.status_code == 400
    assert oidc.MESSAGES["state"] in answer.content.decode().replace("&#x27;", "'")
    assert signed_in_user(client) is None
    # The code was never spent: the answer with the right state still signs in.
    assert open_callback(client, sso, url).status_code == 302
    assert signed_in_user(client) is not None


def test_a_callback_from_another_browser_is_refused(sso):
    login = sso.add_user(groups=["relevance-leads"])
    url = callback_url(sso, login, browser(sso))
    stranger = browser(sso)
    stranger.get("/accounts/login/")  # a session of its own, without that sign-in's state

    answer = open_callback(stranger, sso, url)

    assert answer.status_code == 400 and signed_in_user(stranger) is None


def test_a_replayed_callback_is_refused(sso):
    login = sso.add_user(groups=["relevance-leads"])
    client = browser(sso)
    url = callback_url(sso, login, client)
    assert open_callback(client, sso, url).status_code == 302
    client.post("/accounts/logout/")

    answer = open_callback(client, sso, url)

    assert answer.status_code == 400  # the state was spent with the first use
    assert signed_in_user(client) is None


def test_a_replayed_code_is_refused_by_the_provider(sso):
    """The state saved away before the first use and put back (a copied session): our
    check passes, and the provider refuses the code it already exchanged."""
    login = sso.add_user(groups=["relevance-leads"])
    client = browser(sso)
    url = callback_url(sso, login, client)
    saved = dict(client.session.items())
    assert open_callback(client, sso, url).status_code == 302

    attacker = browser(sso)
    store = SessionStore()
    for key, value in saved.items():
        store[key] = value
    store.create()
    attacker.cookies["sessionid"] = store.session_key
    answer = open_callback(attacker, sso, url)

    assert answer.status_code == 400
    assert oidc.MESSAGES["code"] in answer.content.decode()
    assert signed_in_user(attacker) is None


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("issuer", oidc.TOKEN_REASONS["iss"]),
        ("audience", oidc.TOKEN_REASONS["aud"]),
        ("expired", oidc.TOKEN_REASONS["exp"]),
        ("nonce", oidc.TOKEN_REASONS["nonce"]),
        ("signature", oidc.TOKEN_REASONS["signature"]),
    ],
)
def test_an_id_token_that_cannot_be_trusted_is_refused(sso, fault, reason):
    login = sso.add_user(groups=["relevance-leads"], fault=fault)

    client, answer = sign_in(sso, login)

    assert answer.status_code == 400
    assert reason in answer.content.decode().replace("&#x27;", "'")
    assert signed_in_user(client) is None
    assert not OIDCIdentity.objects.filter(subject=login).exists()


def test_an_answer_naming_another_issuer_is_refused(sso):
    login = sso.add_user(groups=["relevance-leads"])
    client = browser(sso)
    url = callback_url(sso, login, client).replace("iss=", "iss=x", 1)

    answer = open_callback(client, sso, url)

    assert answer.status_code == 400 and signed_in_user(client) is None


def test_the_provider_refusing_the_user_is_said(sso):
    client = browser(sso)
    start(client)
    state = next(key for key, _ in client.session.items() if key.startswith("_state_oidc_"))
    answer = client.get(
        "/accounts/oidc/callback/",
        {"error": "access_denied", "state": state.removeprefix("_state_oidc_")},
    )
    assert answer.status_code == 400
    assert "did not sign you in (access_denied)" in answer.content.decode()


def test_a_discovery_document_naming_another_issuer_stops_the_sign_in(sso, settings):
    # The same provider under another name: its tokens would name an issuer nobody set.
    settings.OIDC_PROVIDER = oidc.ProviderConfig(
        **{**vars(settings.OIDC_PROVIDER), "issuer": sso.issuer.replace("127.0.0.1", "localhost")}
    )
    answer = browser(sso).get("/accounts/oidc/login/")
    assert answer.status_code == 502
    assert "names the issuer" in answer.content.decode()


def test_an_unreachable_provider_is_said(sso, settings):
    settings.OIDC_PROVIDER = oidc.ProviderConfig(
        **{**vars(settings.OIDC_PROVIDER), "issuer": "http://127.0.0.1:9"}
    )
    answer = browser(sso).get("/accounts/oidc/login/")
    assert answer.status_code == 502
    assert "could not be reached" in answer.content.decode()


def test_single_sign_on_off_has_no_sign_in(client, settings):
    settings.OIDC_PROVIDER = None
    assert client.get("/accounts/oidc/login/").status_code == 404
    assert b"Sign in with" not in client.get("/accounts/login/").content


def test_logout_ends_the_session_here_and_sends_the_browser_to_the_provider(sso):
    login = sso.add_user(groups=["relevance-leads"])
    client, _ = sign_in(sso, login)
    id_token = client.session["oidc_id_token"]

    answer = client.post("/accounts/logout/")

    assert answer.status_code == 200 and signed_in_user(client) is None
    url = answer.context["end_session_url"]
    assert url.startswith(f"{sso.issuer}/session/end?")
    query = parse_qs(urlsplit(url).query)
    assert query["id_token_hint"] == [id_token]
    assert query["post_logout_redirect_uri"] == [f"{sso.base_url}/accounts/login/"]
    assert f'content="0; url={url}"'.replace("&", "&amp;") in answer.content.decode()


def test_a_local_user_logs_out_as_before(sso, django_user_model):
    django_user_model.objects.create_user("bob", password="a-long-password")
    client = browser(sso)
    client.login(username="bob", password="a-long-password")
    answer = client.post("/accounts/logout/")
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/"
