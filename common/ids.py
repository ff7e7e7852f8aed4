"""Database ids and small integers read from query strings and form fields.

``str.isdigit()`` is not the test: it accepts digits ``int()`` refuses (``"²"``, a 500), and
a number past 2**63 - 1 overflows SQLite's integers (another 500) where PostgreSQL finds
nothing. These read such text as an id or None, so a view answers 400 or 404 instead."""

import re

MAX_ID = 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,19}")
_INTEGER = re.compile(r"-?[0-9]{1,18}")


def parse_id(raw: str | None) -> int | None:
    """``raw`` as a database id (1 to 2**63 - 1, ASCII digits only), else None."""
    if raw is None or not _DIGITS.fullmatch(raw):
        return None
    value = int(raw)
    return value if is_id(value) else None


def is_id(value) -> bool:
    """Whether ``value`` is a whole number a database id can be (1 to 2**63 - 1)."""
    return type(value) is int and 1 <= value <= MAX_ID


def parse_ids(raws) -> list[int]:
    """The ids among ``raws`` (a query string's list), leaving out what is not one."""
    return [value for value in map(parse_id, raws) if value is not None]


def parse_small_int(raw: str | None) -> int | None:
    """``raw`` as a whole number of at most 18 digits (a grade, a threshold), else None."""
    if raw is None or not _INTEGER.fullmatch(raw):
        return None
    return int(raw)
