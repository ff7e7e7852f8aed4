"""Cron expressions of schedules, read by croniter (pure: no Django).

    check_cron("0 3 * * *", min_interval=timedelta(hours=1), zone=UTC)   # CronError if unfit
    next_after("0 3 * * *", now, zone=UTC)                              # the next slot > now
    due("0 3 * * *", next_slot, now, zone=UTC)                           # catch-up: one firing

Five fields (minute hour day-of-month month day-of-week) or a macro (@hourly, @daily,
@weekly, @monthly, @yearly); no seconds field, no @reboot. Times are read in the server's
zone (TIME_ZONE) and stored aware. A schedule may not fire more often than the minimum
interval: the gaps between the next MAX_CHECKED firings are measured (a cron line repeats its
day's pattern, so a short gap shows up among them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from croniter import CroniterBadCronError, CroniterBadDateError, CroniterError, croniter

MAX_CRON_CHARS = 100
MAX_CHECKED = 500  # firings whose gaps are measured against the minimum interval
MAX_COUNTED = 1000  # missed slots counted after downtime (beyond: "more than 1000")
MACROS = ("@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually")

MESSAGES = {
    "empty": "Give a cron expression, e.g. '0 3 * * *' (every day at 03:00).",
    "long": f"A cron expression is at most {MAX_CRON_CHARS} characters.",
    "fields": "A cron expression has five fields: minute hour day-of-month month day-of-week "
    "(e.g. '0 3 * * *'), or is one of {macros}; {count} fields were given (seconds are not "
    "supported).",
    "macro": "{text!r} is not a macro schedules know: use one of {macros}, or five fields.",
    "bad": "The cron expression {text!r} cannot be read: {why}.",
    "never": "The cron expression {text!r} never fires.",
    "too_often": "The cron expression {text!r} fires {gap} apart; schedules fire at most every "
    "{minimum} (SCHEDULE_MIN_INTERVAL_MINUTES).",
}


class CronError(ValueError):
    pass


def describe_gap(gap: timedelta) -> str:
    minutes = int(gap.total_seconds() // 60)
    if minutes % 1440 == 0 and minutes:
        days = minutes // 1440
        return f"{days} day{'s' * (days != 1)}"
    if minutes % 60 == 0 and minutes:
        hours = minutes // 60
        return f"{hours} hour{'s' * (hours != 1)}"
    return f"{minutes} minute{'s' * (minutes != 1)}"


def normalise(text) -> str:
    if not isinstance(text, str) or not text.strip():
        raise CronError(MESSAGES["empty"])
    text = " ".join(text.split())
    if len(text) > MAX_CRON_CHARS:
        raise CronError(MESSAGES["long"])
    if text.startswith("@"):
        if text.lower() not in MACROS:
            raise CronError(MESSAGES["macro"].format(text=text, macros=", ".join(MACROS)))
        return text.lower()
    count = len(text.split(" "))
    if count != 5:
        raise CronError(MESSAGES["fields"].format(macros=", ".join(MACROS), count=count))
    return text


def _iterator(text: str, start: datetime, zone: tzinfo) -> croniter:
    try:
        return croniter(text, start.astimezone(zone))
    except (CroniterBadCronError, CroniterError, ValueError, KeyError, TypeError) as error:
        raise CronError(MESSAGES["bad"].format(text=text, why=str(error) or "unknown")) from None


def next_after(text: str, when: datetime, *, zone: tzinfo) -> datetime:
    """The first slot strictly after ``when`` (aware, in ``zone``)."""
    try:
        return _iterator(text, when, zone).get_next(datetime)
    except CroniterBadDateError:
        raise CronError(MESSAGES["never"].format(text=text)) from None


def check_cron(text, *, min_interval: timedelta, zone: tzinfo, now: datetime) -> str:
    """The expression, normalised; CronError saying what is wrong (unreadable, never fires,
    or two of its next MAX_CHECKED firings closer than ``min_interval``)."""
    text = normalise(text)
    iterator = _iterator(text, now, zone)
    try:
        previous = iterator.get_next(datetime)
        for _ in range(MAX_CHECKED):
            current = iterator.get_next(datetime)
            gap = current - previous
            if gap < min_interval:
                raise CronError(
                    MESSAGES["too_often"].format(
                        text=text, gap=describe_gap(gap), minimum=describe_gap(min_interval)
                    )
                )
            previous = current
    except CroniterBadDateError:
        raise CronError(MESSAGES["never"].format(text=text)) from None
    return text


@dataclass(frozen=True)
class Due:
    """What a tick does for a schedule whose next slot has come: fire once for ``slot`` (the
    latest slot not after now), having missed ``missed`` earlier slots (downtime, a paused
    clock: never fired one by one), and wait for ``next_slot``."""

    slot: datetime
    missed: int
    next_slot: datetime


def due(text: str, next_slot: datetime, now: datetime, *, zone: tzinfo) -> Due | None:
    """None when ``next_slot`` is still ahead; else one firing for the latest slot that has
    come (catching up once after downtime, not once per missed slot)."""
    if next_slot > now:
        return None
    slot = next_slot
    missed = 0
    iterator = _iterator(text, next_slot, zone)
    while True:
        following = iterator.get_next(datetime)
        if following > now:
            return Due(slot=slot, missed=missed, next_slot=following)
        if missed >= MAX_COUNTED:
            # Years of downtime: stop counting, and jump to now's neighbourhood.
            following = _latest_not_after(text, now, zone)
            return Due(slot=following, missed=missed, next_slot=next_after(text, now, zone=zone))
        slot = following
        missed += 1


def _latest_not_after(text: str, now: datetime, zone: tzinfo) -> datetime:
    later = next_after(text, now, zone=zone)
    iterator = _iterator(text, later, zone)
    return iterator.get_prev(datetime).replace(fold=0)
