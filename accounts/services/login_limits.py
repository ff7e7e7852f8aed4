"""Login rate limiting: guessing passwords is slow, and nobody can lock someone else out.

An attempt to log in as USERNAME from ADDRESS (the client's, accounts/addresses.py) is
refused, before its password is checked, when within the last
``LOGIN_FAILURE_WINDOW_MINUTES``:

1. ADDRESS failed ``LOGIN_FAILURE_LIMIT`` times for USERNAME: one guesser, one account;
2. ADDRESS failed ``LOGIN_ADDRESS_FAILURE_LIMIT`` times, whatever the usernames: one guesser
   trying many accounts;
3. USERNAME failed ``LOGIN_FAILURE_LIMIT`` times from anywhere (it is under attack) and
   ADDRESS is one of those that failed for it;
4. the whole site failed ``LOGIN_GLOBAL_FAILURE_LIMIT`` times (a spray from many addresses)
   and ADDRESS is one of those that failed.

Every rule refuses only addresses that have failed themselves. An account under attack is
not locked: its owner, from an address that has not failed for it, still has the password
checked and gets in, however many strangers failed; each stranger's address has one guess
while the account is under attack, and none more once the site is (rules 3 and 4). A
refusal ends when the failures that caused it leave the window.

Failures are rows in the database, so every web worker process counts the same ones. An
attempt is written down *before* its password is checked and removed again when it is
refused or succeeds: concurrent guesses see each other, so a burst of parallel requests
cannot slip more than the limit past the check while the slow password hashing runs.
Refused attempts are not counted, so the refusal ends at a time the page can tell."""

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from accounts.addresses import client_address, parse_networks
from accounts.models import LoginFailure


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
    """The client's address as the limits count it: ``REMOTE_ADDR``, or when that is one of
    ``TRUSTED_PROXIES`` the client it forwarded for (accounts/addresses.py). IPv6 addresses
    become their /64 network; None when the address is not one."""
    return client_address(
        request.META.get("REMOTE_ADDR", ""),
        request.META.get("HTTP_X_FORWARDED_FOR"),
        parse_networks(settings.TRUSTED_PROXIES),
    )


@dataclass(frozen=True)
class _Failures:
    """The failures in the window matching ``where``, but for the attempt being decided."""

    where: Q
    since: datetime
    attempt_pk: int

    def _rows(self):
        rows = LoginFailure.objects.filter(self.where, at__gt=self.since)
        return rows.exclude(pk=self.attempt_pk).order_by("-at", "-pk")

    def nth_newest(self, n: int) -> datetime | None:
        """When the n-th newest happened (None when there are fewer than n): the failure
        that has to leave the window for their count to fall under n."""
        return self._rows().values_list("at", flat=True)[n - 1 : n].first()

    def newest(self) -> datetime | None:
        return self.nth_newest(1)


def _refused_until(*, username: str, ip: str, since: datetime, attempt_pk: int):
    """When the rules of the module's docstring stop refusing this attempt, or None when
    none refuses it now."""

    def failures(where: Q) -> _Failures:
        return _Failures(where=where, since=since, attempt_pk=attempt_pk)

    limit = settings.LOGIN_FAILURE_LIMIT
    pair = failures(Q(username=username, ip=ip))
    address = failures(Q(ip=ip))
    account = failures(Q(username=username))
    everyone = failures(Q())
    ends = []
    # 1 and 2: the address's own failures, for this username or for any.
    ends.append(pair.nth_newest(limit))
    ends.append(address.nth_newest(settings.LOGIN_ADDRESS_FAILURE_LIMIT))
    # 3 and 4: an account or the site under attack refuses addresses that failed, until
    # the attack ends or their own failure ages out, whichever comes first.
    for attacked, failed in (
        (account.nth_newest(limit), pair),
        (everyone.nth_newest(settings.LOGIN_GLOBAL_FAILURE_LIMIT), address),
    ):
        if attacked is not None and (own := failed.newest()) is not None:
            ends.append(min(attacked, own))
    ends = [end for end in ends if end is not None]
    return max(ends) + window() if ends else None


def start_login_attempt(
    *, username: str, ip: str | None, now: datetime | None = None
) -> LoginFailure:
    """Write the attempt down as a failure, to stand unless ``clear_login_failures`` follows
    a success, and return it. Raise ``LoginRefused`` (keeping nothing) when a rule of the
    module's docstring refuses it. Old rows are pruned here. An unknown address (``None``)
    counts as one address shared by every client whose address is unknown."""
    now = now or timezone.now()
    since = now - window()
    LoginFailure.objects.filter(at__lte=since).delete()
    username = normalise_username(username)
    ip = ip or ""
    attempt = LoginFailure.objects.create(username=username, ip=ip, at=now)
    until = _refused_until(username=username, ip=ip, since=since, attempt_pk=attempt.pk)
    if until is not None:
        attempt.delete()
        raise LoginRefused(until=until)
    return attempt


def clear_login_failures(*, username: str, ip: str | None) -> int:
    """Forget the failures of ``username`` from ``ip`` (it logged in from there: they were
    the owner's typos); returns how many there were. Failures from other addresses stay, so
    a stranger's count does not start again whenever the owner logs in."""
    deleted, _ = LoginFailure.objects.filter(
        username=normalise_username(username), ip=ip or ""
    ).delete()
    return deleted


def answer_refusal(response, form):
    """A login refused by the rate limit answers 429 Too Many Requests with Retry-After."""
    refused = getattr(form, "refused", None)
    if refused is not None:
        response.status_code = 429
        response["Retry-After"] = str(refused.seconds_left())
    return response
