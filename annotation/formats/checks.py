"""What the readers share once a line is text: the database's limits, the error log, and the
checks of ids, urls, repeats and JSON values. Messages quote values with
:func:`evaluation.trec.errors.show` (here :func:`quote`), as the TREC readers do."""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable

from common.json_keys import collect_repeats, describe_repeats
from common.nesting import MAX_DEPTH, nesting_depth
from evaluation.trec.errors import ErrorLog, LineError
from evaluation.trec.errors import show as quote

__all__ = [
    "MAX_DOCNO_CHARS",
    "MAX_QID_CHARS",
    "MAX_URL_CHARS",
    "Errors",
    "Seen",
    "check_id",
    "check_url",
    "json_id",
    "json_object",
    "json_text",
    "quote",
    "unknown_keys",
]

# The database columns these values go into (annotation.models: Topic.qid, Document.docno,
# Document.url): checked here so that a too-long value is reported with its line.
MAX_QID_CHARS = 100
MAX_DOCNO_CHARS = 255
MAX_URL_CHARS = 2000
TOO_DEEP = f"not valid JSON: nested too deeply (more than {MAX_DEPTH} levels of arrays and objects)"


class Errors(ErrorLog):
    """evaluation.trec's error log, keeping the first ``limit`` errors in line order rather
    than in the order they are found: a TREC topic's missing ``<num>`` is only known at its
    ``</top>``, after errors on the topic's later lines. Like it, it stops the reader at its
    ``count_limit``-th error."""

    def __init__(self, name: str, limit: int) -> None:
        super().__init__(name, limit)
        self._found: list[tuple[int, int, str]] = []

    def add(self, line: int, message: str) -> None:
        self.total += 1
        # (line, arrival) keeps several errors of one line in the order they were found.
        self._found.append((line, self.total, message))
        if len(self._found) > 4 * self.limit:
            self._found = sorted(self._found)[: self.limit]
        if self.total >= self.count_limit:
            self.stop(line)

    def fail(self, message: str) -> None:
        self.add(0, message)  # line 0 sorts first, so it is always kept

    def raise_if_any(self) -> None:
        kept = sorted(self._found)[: self.limit]
        self.errors = [LineError(self.name, line, message) for line, _, message in kept]
        super().raise_if_any()


class Seen:
    """Remembers the line of each key to report repeats as 'already appears on line N'."""

    def __init__(self, describe: Callable[[Hashable], str]) -> None:
        self.lines: dict = {}
        self.describe = describe

    def check(self, key: Hashable, number: int, errors: Errors) -> bool:
        first = self.lines.get(key)
        if first is not None:
            errors.add(number, f"{self.describe(key)} already appears on line {first}")
            return False
        self.lines[key] = number
        return True


def check_id(what: str, value: str, limit: int) -> str | None:
    """Why ``value`` cannot be a qid or docno, or None."""
    if not value:
        return f"empty {what}"
    if any(c.isspace() for c in value):
        return f"{what} {quote(value)} contains whitespace"
    if len(value) > limit:
        return f"{what} {quote(value)} is longer than {limit} characters"
    return None


def check_url(url: str) -> str | None:
    """Why ``url`` cannot be a document's address, or None (an empty url is no url)."""
    if not url:
        return None
    if not url.lower().startswith(("http://", "https://")) or any(c.isspace() for c in url):
        return f"url {quote(url)} is not an http(s) address"
    if len(url) > MAX_URL_CHARS:
        return f"url is longer than {MAX_URL_CHARS} characters"
    return None


# --- JSON lines --------------------------------------------------------------------------------


def json_object(line: str, number: int, errors: Errors) -> dict | None:
    """The line's JSON object, or None after reporting why it is not one. A key given twice
    in one object is refused (the json module would keep the last value silently, so
    ``{"qid": "1", "qid": "2"}`` would become topic 2), and so is nesting deeper than
    common.nesting.MAX_DEPTH, measured before decoding."""
    if line.count("[") + line.count("{") > MAX_DEPTH and (
        nesting_depth(line, stop_above=MAX_DEPTH) > MAX_DEPTH
    ):
        errors.add(number, TOO_DEEP)
        return None
    repeated: list[str] = []
    try:
        value = json.loads(line, object_pairs_hook=collect_repeats(repeated))
    except json.JSONDecodeError as error:
        errors.add(number, f"not valid JSON: {error.msg} (column {error.colno})")
        return None
    except RecursionError:  # not below MAX_DEPTH; still never a crash
        errors.add(number, TOO_DEEP)
        return None
    except ValueError:
        # An integer of more digits than Python converts (sys.get_int_max_str_digits).
        errors.add(number, "not valid JSON: a number has too many digits")
        return None
    if repeated:
        errors.add(number, describe_repeats(repeated))
        return None
    if not isinstance(value, dict):
        errors.add(number, f"expected a JSON object, found {_json_type(value)}")
        return None
    return value


def json_id(obj: dict, key: str, number: int, errors: Errors) -> str | None:
    """A qid or docno: a string or an integer, stripped."""
    value = obj.get(key)
    if value is None:
        errors.add(number, f"missing {key!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        errors.add(number, f"{key} must be a string or an integer, found {_json_type(value)}")
        return None
    return str(value).strip()


def json_text(obj: dict, key: str, number: int, errors: Errors) -> str | None:
    """An optional text: a string (stripped) or null/absent (empty)."""
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        errors.add(number, f"{key} must be a string, found {_json_type(value)}")
        return None
    return value.strip()


def unknown_keys(obj: dict, allowed: tuple[str, ...], number: int, errors: Errors) -> bool:
    """Report keys outside ``allowed`` (a misspelt key must not be dropped silently)."""
    unknown = [key for key in obj if key not in allowed]
    if unknown:
        names = ", ".join(quote(str(key)) for key in unknown)
        errors.add(
            number,
            f"unknown field{'s' if len(unknown) > 1 else ''} {names} "
            f"(expected {', '.join(allowed)})",
        )
    return bool(unknown)


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"
