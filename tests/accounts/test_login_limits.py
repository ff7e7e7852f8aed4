"""Login rate limiting (issue "Trust", item 4; issue 27, finding 7): an address is refused
after too many failures for one username or for many, and while an account or the whole site
is under attack an address that failed is refused but one that has not still gets in with
the right password; on our login page and the admin's, across processes (the counts are
database rows), with the refusal's end said in words and in Retry-After."""

import os
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.signals import user_login_failed
from django.db import close_old_connections, connection
from django.test import Client, RequestFactory
from django.utils import timezone

from accounts.checks import check_login_limits, check_proxy_addresses
from accounts.forms import INVALID_LOGIN
from accounts.models import LoginFailure
from accounts.services.login_limits import (
    LoginRefused,
    clear_login_failures,
    client_ip,
    start_login_attempt,
)
from tests.accounts.conftest import PASSWORD

LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"
WINDOW = timedelta(minutes=15)


def log_in(client, username, password, *, ip="10.0.0.1", path=LOGIN):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=ip)


def fail(times, username="ann", *, ip="10.0.0.1", path=LOGIN, client=None, **extra):
    client = client or Client()
    for _ in range(times):
        response = client.post(
            path, {"username": username, "password": "wrong-password"}, REMOTE_ADDR=ip, **extra
        )
        assert response.status_code == 200, f"attempt refused early: {response.status_code}"


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def failures(**where) -> int:
    return LoginFailure.objects.filter(**where).count()


@pytest.fixture
def password_checks():
    """How many times a password was checked and found wrong (Django's own signal)."""
    calls = []

    def count(sender, credentials, request=None, **kwargs):
        calls.append(credentials["username"])

    user_login_failed.connect(count)
    yield calls
    user_login_failed.disconnect(count)


# --- through the login page -------------------------------------------------------------


@pytest.mark.django_db
def test_the_attempt_after_the_limit_is_refused_even_with_the_right_password(make_user):
    make_user("ann")
    client = Client()
    fail(5, client=client)

    response = log_in(client, "ann", PASSWORD)

    assert response.status_code == 429
    assert not logged_in(client)
    page = response.content.decode()
    assert "Too many failed logins for this username or from your network." in page
    assert "Try again in 15 minutes, after" in page
    assert 14 * 60 < int(response["Retry-After"]) <= 15 * 60


@pytest.mark.django_db
def test_failures_under_the_limit_answer_the_usual_error(make_user):
    make_user("ann")

    response = log_in(Client(), "ann", "wrong-password")

    assert response.status_code == 200
    assert INVALID_LOGIN.replace("'", "&#x27;") in response.content.decode()
    assert failures(username="ann") == 1


@pytest.mark.django_db
def test_a_refused_attempt_checks_no_password_and_is_not_counted(make_user, password_checks):
    make_user("ann")
    fail(5)
    assert len(password_checks) == 5

    for _ in range(3):
        assert log_in(Client(), "ann", "wrong-password").status_code == 429

    assert len(password_checks) == 5, "a refused attempt reached the password check"
    assert failures(username="ann") == 5, "refused attempts must not extend the refusal"


@pytest.mark.django_db
def test_failures_older_than_the_window_no_longer_count(make_user):
    make_user("ann")
    old = timezone.now() - WINDOW - timedelta(seconds=1)
    for _ in range(5):
        start_login_attempt(username="ann", ip="10.0.0.1", now=old)
    client = Client()

    response = log_in(client, "ann", PASSWORD)

    assert response.status_code == 302
    assert logged_in(client)
    assert failures() == 0, "old rows are pruned, the success cleared the attempt"


@pytest.mark.django_db
def test_failures_inside_the_window_still_count(make_user):
    make_user("ann")
    recent = timezone.now() - WINDOW + timedelta(minutes=1)
    for _ in range(5):
        start_login_attempt(username="ann", ip="10.0.0.1", now=recent)

    response = log_in(Client(), "ann", PASSWORD)

    assert response.status_code == 429
    assert "Try again in 1 minute, after" in response.content.decode()


@pytest.mark.django_db
def test_a_successful_login_clears_the_usernames_failures(make_user):
    make_user("ann")
    fail(4)
    client = Client()
    assert log_in(client, "ann", PASSWORD).status_code == 302
    assert failures(username="ann") == 0

    fail(4)  # a fresh allowance: four more failures are still answered normally

    assert log_in(Client(), "ann", PASSWORD).status_code == 302


@pytest.mark.django_db
def test_another_user_from_the_same_address_is_refused_by_the_address_rule(make_user, settings):
    make_user("bob")
    for i in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT):  # a spray: one guess per name
        fail(1, f"user{i}", ip="192.0.2.7")

    refused = log_in(Client(), "bob", PASSWORD, ip="192.0.2.7")
    elsewhere = log_in(Client(), "bob", PASSWORD, ip="198.51.100.1")

    assert refused.status_code == 429
    assert elsewhere.status_code == 302


@pytest.mark.django_db
def test_an_address_under_the_address_limit_is_not_refused_for_other_names(make_user, settings):
    make_user("bob")
    for i in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT - 1):
        fail(1, f"user{i}", ip="192.0.2.7")

    assert log_in(Client(), "bob", PASSWORD, ip="192.0.2.7").status_code == 302


@pytest.mark.django_db
def test_an_account_under_attack_refuses_the_addresses_that_failed_for_it_ignoring_case(
    make_user,
):
    make_user("ann")
    for i, name in enumerate(("ann", "Ann", "ANN", "ann", "aNn")):
        fail(1, name, ip=f"203.0.113.{i}")

    # Each of those addresses failed once, far under its own limit, but the account has
    # five failures (whatever the case): they wait, even with the right password.
    assert log_in(Client(), "ann", PASSWORD, ip="203.0.113.0").status_code == 429
    assert log_in(Client(), "ann", PASSWORD, ip="203.0.113.4").status_code == 429
    # The owner, from an address that has not failed, gets in.
    assert log_in(Client(), "ann", PASSWORD, ip="203.0.113.99").status_code == 302


@pytest.mark.django_db
def test_a_stranger_cannot_lock_the_owner_out(django_user_model, password_checks):
    django_user_model.objects.create_superuser("admin", password=PASSWORD)
    stranger = Client()
    fail(5, "admin", ip="198.51.100.66", client=stranger)
    for _ in range(20):  # and keeps going, refused
        assert log_in(stranger, "admin", "wrong-password", ip="198.51.100.66").status_code == 429
    assert log_in(stranger, "admin", PASSWORD, ip="198.51.100.66").status_code == 429

    owner = Client()
    response = log_in(owner, "admin", PASSWORD, ip="192.0.2.10")

    assert response.status_code == 302
    assert logged_in(owner)
    assert len(password_checks) == 5, "the stranger's refused attempts checked a password"


@pytest.mark.django_db
def test_the_owners_login_does_not_reset_the_strangers_count(make_user):
    make_user("ann")
    fail(5, "ann", ip="198.51.100.66")
    assert log_in(Client(), "ann", PASSWORD, ip="192.0.2.10").status_code == 302

    assert log_in(Client(), "ann", "wrong-password", ip="198.51.100.66").status_code == 429
    assert failures(username="ann", ip="198.51.100.66") == 5


@pytest.mark.django_db
def test_under_attack_each_new_address_gets_one_guess(make_user):
    make_user("ann")
    fail(5, "ann", ip="198.51.100.1")  # the account is under attack from here on

    for i in range(2, 6):
        address = f"198.51.100.{i}"
        fail(1, "ann", ip=address)  # a fresh address: its password is checked
        assert log_in(Client(), "ann", "wrong-password", ip=address).status_code == 429

    assert failures(username="ann") == 5 + 4


@pytest.mark.django_db
def test_a_spray_from_many_addresses_is_stopped_by_the_global_rate(make_user, settings):
    settings.LOGIN_GLOBAL_FAILURE_LIMIT = 12
    make_user("ann")
    sprayers = [f"198.51.100.{i}" for i in range(3)]
    for round_ in range(4):  # three addresses, four names each: twelve failures in all
        for address in sprayers:
            fail(1, f"user{round_}-{address}", ip=address)

    for address in sprayers:  # each under its own limits, but the site is under attack
        assert log_in(Client(), "someone", "wrong-password", ip=address).status_code == 429
    assert log_in(Client(), "ann", PASSWORD, ip="192.0.2.10").status_code == 302


@pytest.mark.django_db
def test_a_client_cannot_escape_its_count_by_writing_x_forwarded_for(make_user, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.2"]
    make_user("ann")
    for i in range(5):  # straight from the internet, each with a made-up X-Forwarded-For
        fail(1, "ann", ip="198.51.100.66", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}")

    response = Client().post(
        LOGIN,
        {"username": "ann", "password": PASSWORD},
        REMOTE_ADDR="198.51.100.66",
        HTTP_X_FORWARDED_FOR="203.0.113.99",
    )

    assert response.status_code == 429
    assert failures(ip="198.51.100.66") == 5


@pytest.mark.django_db
def test_behind_the_trusted_proxy_each_client_is_counted_apart(make_user, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.2"]
    make_user("ann")
    proxy = {"ip": "10.0.0.2"}
    fail(5, "ann", HTTP_X_FORWARDED_FOR="198.51.100.66", **proxy)

    stranger = Client().post(
        LOGIN,
        {"username": "ann", "password": PASSWORD},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR="198.51.100.66",
    )
    # The owner's browser sent a forged first hop; the proxy appended the real address.
    owner = Client().post(
        LOGIN,
        {"username": "ann", "password": PASSWORD},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR="198.51.100.66, 192.0.2.10",
    )

    assert stranger.status_code == 429
    assert owner.status_code == 302
    assert failures(ip="198.51.100.66") == 5


@pytest.mark.django_db
def test_the_limit_comes_from_the_settings(make_user, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    make_user("ann")
    fail(2)

    assert log_in(Client(), "ann", PASSWORD).status_code == 429


@pytest.mark.django_db
def test_the_admin_login_is_limited_too(django_user_model):
    django_user_model.objects.create_superuser("root", password=PASSWORD)
    fail(5, "root", path=ADMIN_LOGIN)
    client = Client()

    response = log_in(client, "root", PASSWORD, path=ADMIN_LOGIN)

    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()
    assert int(response["Retry-After"]) > 0
    assert not logged_in(client)


@pytest.mark.django_db
def test_failures_on_the_admin_login_count_on_the_login_page(django_user_model):
    django_user_model.objects.create_superuser("root", password=PASSWORD)
    fail(3, "root", path=ADMIN_LOGIN)
    fail(2, "root", path=LOGIN)

    assert log_in(Client(), "root", PASSWORD).status_code == 429


@pytest.mark.django_db
def test_the_admin_login_still_works_under_the_limit(django_user_model):
    django_user_model.objects.create_superuser("root", password=PASSWORD)
    client = Client()

    response = log_in(client, "root", PASSWORD, path=ADMIN_LOGIN)

    assert response.status_code == 302
    assert client.get("/admin/").status_code == 200


# --- the rule itself --------------------------------------------------------------------


@pytest.mark.django_db
def test_the_refusal_ends_when_the_limit_th_newest_failure_leaves_the_window():
    start = timezone.now() - timedelta(minutes=10)
    for minute in range(6):  # six failures got in (e.g. a window setting that was raised)
        LoginFailure.objects.create(username="ann", at=start + timedelta(minutes=minute))

    with pytest.raises(LoginRefused) as refused:
        start_login_attempt(username="ann", ip=None)

    # Two of the six must age out for a sixth to fit under five: the 5th newest is minute 1.
    assert refused.value.until == start + timedelta(minutes=1) + WINDOW


@pytest.mark.django_db
def test_the_later_of_two_refusals_wins(settings):
    now = timezone.now()
    for _ in range(5):  # the pair rule, ending in 5 minutes
        LoginFailure.objects.create(username="ann", ip="10.0.0.1", at=now - timedelta(minutes=10))
    for i in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT):  # the address rule, in 15
        LoginFailure.objects.create(username=f"u{i}", ip="10.0.0.1", at=now)

    with pytest.raises(LoginRefused) as refused:
        start_login_attempt(username="ann", ip="10.0.0.1", now=now)

    assert refused.value.until == now + WINDOW


@pytest.mark.django_db
def test_under_attack_a_refusal_ends_when_the_addresss_own_failure_leaves_the_window():
    now = timezone.now()
    for minute in range(5):  # the account's attack lasts another 14 minutes...
        LoginFailure.objects.create(username="ann", ip=f"198.51.100.{minute}", at=now)
    # ...but this address failed once, 12 minutes ago: 3 minutes to wait.
    LoginFailure.objects.create(username="ann", ip="10.0.0.1", at=now - timedelta(minutes=12))

    with pytest.raises(LoginRefused) as refused:
        start_login_attempt(username="ann", ip="10.0.0.1", now=now)

    assert refused.value.until == now - timedelta(minutes=12) + WINDOW


@pytest.mark.django_db
def test_clear_login_failures_forgets_only_that_username_from_that_address():
    for name, ip in (
        ("ann", "10.0.0.1"),
        ("Ann", "10.0.0.1"),
        ("ann", "10.0.0.9"),
        ("bob", "10.0.0.1"),
    ):
        start_login_attempt(username=name, ip=ip)

    assert clear_login_failures(username="ANN", ip="10.0.0.1") == 2
    assert sorted(LoginFailure.objects.values_list("username", "ip")) == [
        ("ann", "10.0.0.9"),
        ("bob", "10.0.0.1"),
    ]


@pytest.mark.django_db(transaction=True)
def test_parallel_guesses_cannot_get_past_the_limit_together():
    """Each attempt is written down before it is checked, so of eight at once from one
    address at most five (the limit) go on to a password check, whatever the interleaving."""
    barrier = threading.Barrier(8)
    outcomes = [None] * 8

    def attempt(i):
        try:
            barrier.wait()
            outcomes[i] = start_login_attempt(username="ann", ip="10.0.0.1")
        except LoginRefused as refused:
            outcomes[i] = refused
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    allowed = [o for o in outcomes if isinstance(o, LoginFailure)]
    refused = [o for o in outcomes if isinstance(o, LoginRefused)]
    assert len(allowed) + len(refused) == 8, outcomes
    assert len(allowed) <= 5
    assert failures(username="ann") == len(allowed)


@pytest.mark.parametrize(
    "name",
    [
        "LOGIN_FAILURE_LIMIT",
        "LOGIN_ADDRESS_FAILURE_LIMIT",
        "LOGIN_GLOBAL_FAILURE_LIMIT",
        "LOGIN_FAILURE_WINDOW_MINUTES",
    ],
)
def test_a_limit_below_one_is_a_system_check_error(settings, name):
    assert check_login_limits(None) == []
    setattr(settings, name, 0)

    errors = check_login_limits(None)

    assert [(e.id, e.msg) for e in errors] == [
        ("accounts.E001", f"{name}=0 must be a whole number of at least 1.")
    ]


def test_a_tls_proxy_without_trusted_proxies_is_a_system_check_warning(settings):
    settings.BEHIND_TLS_PROXY, settings.TRUSTED_PROXIES = True, []
    assert [w.id for w in check_proxy_addresses(None)] == ["accounts.W001"]

    settings.TRUSTED_PROXIES = ["10.0.0.2"]
    assert check_proxy_addresses(None) == []


def run_settings(code: str, **env) -> subprocess.CompletedProcess:
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; "
        f"django.setup(); from django.conf import settings; {code}"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )


def test_the_limits_are_read_from_the_environment():
    result = run_settings(
        "print(settings.LOGIN_FAILURE_LIMIT, settings.LOGIN_ADDRESS_FAILURE_LIMIT, "
        "settings.LOGIN_GLOBAL_FAILURE_LIMIT, settings.LOGIN_FAILURE_WINDOW_MINUTES, "
        "settings.TRUSTED_PROXIES)",
        LOGIN_FAILURE_LIMIT="3",
        LOGIN_ADDRESS_FAILURE_LIMIT="7",
        LOGIN_GLOBAL_FAILURE_LIMIT="50",
        LOGIN_FAILURE_WINDOW_MINUTES="60",
        TRUSTED_PROXIES="10.0.0.2, 172.16.0.0/12",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split(maxsplit=4) == [
        "3",
        "7",
        "50",
        "60",
        "['10.0.0.2', '172.16.0.0/12']\n",
    ]


def test_a_trusted_proxy_that_is_not_an_address_stops_start_up():
    result = run_settings("pass", TRUSTED_PROXIES="10.0.0.2,nginx")

    assert result.returncode != 0
    assert (
        "TRUSTED_PROXIES: 'nginx' is not an IP address or network (e.g. 10.0.0.5 or 172.16.0.0/12)"
    ) in result.stderr


# --- the client's address (the rules themselves: tests/accounts/test_addresses.py) ------


def request_from(remote_addr="192.0.2.1", forwarded=None):
    extra = {"REMOTE_ADDR": remote_addr}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().post(LOGIN, **extra)


def test_the_client_address_is_remote_addr_when_no_proxy_is_trusted(settings):
    settings.TRUSTED_PROXIES = []

    assert client_ip(request_from("192.0.2.1", forwarded="203.0.113.9")) == "192.0.2.1"


def test_behind_a_trusted_proxy_the_client_address_is_the_hop_the_proxy_appended(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]

    # The client sent "X-Forwarded-For: 1.2.3.4"; the proxy appended the address it saw.
    assert client_ip(request_from("10.0.0.2", forwarded="1.2.3.4, 203.0.113.9")) == "203.0.113.9"
    assert client_ip(request_from("10.0.0.2", forwarded="203.0.113.9")) == "203.0.113.9"
    assert client_ip(request_from("10.0.0.2")) == "10.0.0.2"


def test_a_proxy_not_named_in_the_settings_is_not_believed(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.2"]

    assert client_ip(request_from("10.0.0.3", forwarded="203.0.113.9")) == "10.0.0.3"


def test_an_ipv6_client_counts_as_its_slash_64(settings):
    settings.TRUSTED_PROXIES = []

    assert client_ip(request_from("2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::/64"
    assert client_ip(request_from("2001:db8:1:2:bbbb::9")) == "2001:db8:1:2::/64"
    assert client_ip(request_from("::ffff:192.0.2.5")) == "192.0.2.5"


def test_an_address_that_is_not_one_is_unknown(settings):
    settings.TRUSTED_PROXIES = ["10.0.0.2"]

    assert client_ip(request_from("10.0.0.2", forwarded="1.2.3.4, not-an-address")) is None
    assert client_ip(request_from("")) is None
