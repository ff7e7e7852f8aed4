"""Login rate limiting. After ``LOGIN_FAILURE_LIMIT`` failed logins for one username, or from
one client address, within ``LOGIN_FAILURE_WINDOW_MINUTES``, further attempts are refused
before any password is checked, until enough of those failures are older than the window.

Failures are rows in the database, so every web worker process counts the same ones. An
attempt is written down *before* its password is checked and removed again when it is
refused or succeeds: concurrent guesses see each other, so a burst of parallel requests
cannot slip more than the limit past the check while the slow password hashing runs.
Refused attempts are not counted, so the refusal ends at a time the page can tell."""

import ipaddress
import math
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from accounts.models import LoginFailure

# IPv6 clients usually hold a whole /64: counting single addresses would let one client
# rotate through millions of them.
IPV6_PREFIX = 64


class LoginRefused(Exception):
    """Too many recent failures; the next attempt may come at ``until``."""

    def __init__(self, until: datetime):
        super().__init__(until)
        self.until = until

    def seconds_left(self, now: datetime | None = None) -> int:
        return max(1, math.ceil((self.until - (now or timezone.now())).total_seconds()))


def window() -> timedelta:
    return timedelta(minutes=settings.LOGIN_FAILURE_WINDOW_MINUTES)


def normalise_username(username: str) -> str:
    # Counting "Ann" and "ann" together only ever refuses more, never less.
    return username.strip().casefold()[: LoginFailure._meta.get_field("username").max_length]


def client_ip(request) -> str | None:
    """The client's address: ``REMOTE_ADDR``, or behind our TLS proxy (``BEHIND_TLS_PROXY``)
    the last ``X-Forwarded-For`` hop, the one the proxy itself appended. Earlier hops come
    from the client and are not trusted: a proxy that appends (nginx's
    ``$proxy_add_x_forwarded_for``) passes whatever the client sent in front. IPv6 addresses
    become their /64 network."""
    raw = request.META.get("REMOTE_ADDR", "")
    if settings.BEHIND_TLS_PROXY:
        hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if hops[-1]:
            raw = hops[-1]
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return None
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/{IPV6_PREFIX}", strict=False))


def _blocked_until(field: str, value: str, *, since: datetime, attempt_pk: int):
    """When the failures for ``field=value`` fall under the limit again, or None if they are
    under it now. The limit-th newest failure in the window is the one that has to age out."""
    limit = settings.LOGIN_FAILURE_LIMIT
    nth_newest = (
        LoginFailure.objects.filter(**{field: value}, at__gt=since)
        .exclude(pk=attempt_pk)
        .order_by("-at", "-pk")
        .values_list("at", flat=True)[limit - 1 : limit]
    )
    found = list(nth_newest)
    return found[0] + window() if found else None


def start_login_attempt(
    *, username: str, ip: str | None, now: datetime | None = None
) -> LoginFailure:
    """Write the attempt down as a failure, to stand unless ``clear_login_failures`` follows
    a success, and return it. Raise ``LoginRefused`` (keeping nothing) when the username or
    the address already has the limit of failures in the window. Old rows are pruned here."""
    now = now or timezone.now()
    since = now - window()
    LoginFailure.objects.filter(at__lte=since).delete()
    username = normalise_username(username)
    attempt = LoginFailure.objects.create(username=username, ip=ip or "", at=now)
    blocks = [
        _blocked_until(field, value, since=since, attempt_pk=attempt.pk)
        for field, value in (("username", username), ("ip", ip))
        if value
    ]
    blocks = [until for until in blocks if until is not None]
    if blocks:
        attempt.delete()
        raise LoginRefused(until=max(blocks))
    return attempt


def clear_login_failures(*, username: str) -> int:
    """Forget a username's failures (after it logged in); returns how many there were."""
    deleted, _ = LoginFailure.objects.filter(username=normalise_username(username)).delete()
    return deleted
