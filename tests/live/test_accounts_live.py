"""Logins and tokens against gunicorn started as production starts it, behind its proxy (issue
27): the test plays the load balancer at 127.0.0.1, named in TRUSTED_PROXIES, so its
X-Forwarded-For names each client, as nginx's does in compose.yaml.

- finding 7: a stranger's wrong passwords for ``admin`` from one address do not stop admin
  logging in from another; an X-Forwarded-For from anyone but the proxy is not believed;
  the global rate stops a spray from several addresses;
- finding 12: after a password change on the user's own page, their token is refused;
- finding 8 (part): a token's read is answered while another writer holds the lock that
  recording its last use needs."""

import http.client
import http.cookies
import re
import threading
import urllib.parse
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction

from accounts.models import PersonalToken
from accounts.services.tokens import create_token
from tests.faults.conftest import stop
from tests.live.servers import start_gunicorn

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-live-password"
NEW_PASSWORD = "another-long-live-password"
PROXY = "127.0.0.1"  # the test's own address, as nginx's is in compose
NOT_THE_PROXY = "127.0.0.2"  # also loopback, but not trusted


@pytest.fixture(scope="module")
def port(django_db_setup, django_db_blocker, tmp_path_factory):
    """One gunicorn for the module, trusting the test's address as its proxy; each test
    meets an emptied database, failed logins included. The global rate is low, for the
    spray test; the other tests stay under it or meet it only from failed addresses."""
    tmp = tmp_path_factory.mktemp("accounts-live")
    where = SimpleNamespace(MEDIA_ROOT=tmp / "media", SECRET_KEY=None)
    with django_db_blocker.unblock():
        process, port = start_gunicorn(
            where, tmp, "--workers=2", TRUSTED_PROXIES=PROXY, LOGIN_GLOBAL_FAILURE_LIMIT="6"
        )
    yield port
    stop(process)


class Browser:
    """One client's cookies and CSRF token, its requests sent through the proxy (an
    X-Forwarded-For naming ``address``) or straight from ``source``."""

    def __init__(self, port: int, address: str | None = None, source: str = PROXY):
        self.port, self.address, self.source = port, address, source
        self.cookies = http.cookies.SimpleCookie()

    def request(self, method: str, path: str, form: dict | None = None, headers=None):
        conn = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=60, source_address=(self.source, 0)
        )
        headers = dict(headers or {})
        if self.address:
            headers["X-Forwarded-For"] = self.address
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={m.value}" for k, m in self.cookies.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            page = response.read().decode()
            for value in response.headers.get_all("Set-Cookie") or []:
                self.cookies.load(value)
            return response.status, response.headers, page
        finally:
            conn.close()

    def post_form(self, path: str, form: dict):
        """GET the page for its CSRF token, then POST the form."""
        _, _, page = self.request("GET", path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        return self.request("POST", path, {"csrfmiddlewaretoken": token, **form})

    def log_in(self, username: str, password: str) -> int:
        return self.post_form("/accounts/login/", {"username": username, "password": password})[0]


def api_status(port: int, key: str, path: str = "/api/v1/campaigns/") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {key}"})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


# --- finding 7 --------------------------------------------------------------------------


def test_a_stranger_cannot_lock_admin_out_from_another_address(port, django_user_model):
    django_user_model.objects.create_superuser("admin", password=PASSWORD)
    stranger = Browser(port, address="198.51.100.66")

    assert [stranger.log_in("admin", "guess") for _ in range(5)] == [200] * 5
    assert stranger.log_in("admin", "guess") == 429
    assert stranger.log_in("admin", PASSWORD) == 429  # not even the right one, from there

    # Under attack, a new address has one guess. Writing a new X-Forwarded-For each time
    # would be a new address each time, were it believed from anyone but the proxy.
    direct = Browser(port, address="203.0.113.1", source=NOT_THE_PROXY)
    assert direct.log_in("admin", "guess") == 200
    for i in range(2, 5):
        direct.address = f"203.0.113.{i}"
        assert direct.log_in("admin", "guess") == 429

    owner = Browser(port, address="192.0.2.10")
    assert owner.log_in("admin", PASSWORD) == 302
    assert owner.request("GET", "/admin/")[0] == 200


def test_the_global_rate_stops_a_spray_from_several_addresses(port, django_user_model):
    django_user_model.objects.create_user("ann", password=PASSWORD)
    sprayers = [Browser(port, address=f"198.51.100.{i}") for i in range(3)]

    for round_ in range(2):  # one guess per name, each name once: six failures in all
        for i, sprayer in enumerate(sprayers):
            assert sprayer.log_in(f"user{round_}{i}", "guess") == 200

    assert [sprayer.log_in("someone", "guess") for sprayer in sprayers] == [429] * 3
    assert Browser(port, address="192.0.2.10").log_in("ann", PASSWORD) == 302


# --- finding 12 -------------------------------------------------------------------------


def test_a_token_is_refused_after_its_user_changes_their_password(port, django_user_model):
    ann = django_user_model.objects.create_user("ann", password=PASSWORD)
    _token, key = create_token(user=ann, name="laptop")
    assert api_status(port, key)[0] == 200
    browser = Browser(port, address="192.0.2.10")
    assert browser.log_in("ann", PASSWORD) == 302

    _, _, page = browser.request("GET", "/accounts/password/")
    assert "Changing your password revokes your 1 API token" in page
    status, headers, _ = browser.post_form(
        "/accounts/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert (status, headers["Location"]) == (302, "/accounts/tokens/")
    assert api_status(port, key) == (403, '{"detail":"Invalid token."}')


# --- finding 8 (part) -------------------------------------------------------------------


def test_a_token_read_is_answered_while_another_writer_holds_the_lock(port, engineer_key):
    token, key = engineer_key
    release, held = threading.Event(), threading.Event()

    def holder():  # SQLite: the database's write lock; PostgreSQL: the token's row
        try:
            with transaction.atomic():
                PersonalToken.objects.select_for_update().get(pk=token.pk)
                held.set()
                release.wait(120)
        finally:
            connection.close()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(30)
        status, body = api_status(port, key, "/api/v1/runs/")
    finally:
        release.set()
        thread.join(120)

    assert status == 200, body
    token.refresh_from_db()
    assert token.last_used_at is None, "the use was recorded: the lock was not held"


@pytest.fixture
def engineer_key(django_user_model):
    user = django_user_model.objects.create_user("eng")
    user.groups.add(Group.objects.get(name="engineer"))
    return create_token(user=user, name="ci")
