"""One judge's grade of one pair as a file gives it, and the checks every format's
values go through to become one."""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import NamedTuple

from common import text_limits

from ..checks import MAX_DOCNO_CHARS, MAX_QID_CHARS, Errors, Seen, check_id, quote

MAX_JUDGE_CHARS = 150
MAX_NOTE_CHARS = text_limits.NOTE
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class JudgmentRecord(NamedTuple):
    """One judge's grade of one pair as the file gives it. ``qid``/``docno`` are None when
    an UMBRELA line names its pair by ``query``/``passage`` text only."""

    line: int
    qid: str | None
    docno: str | None
    judge: str
    label: str
    note: str = ""
    seconds: float | None = None
    judged_at: dt.datetime | None = None
    query: str = ""
    passage: str = ""
    details: dict | None = None


def _judge_problem(judge: str) -> str | None:
    if not judge:
        return "empty judge"
    if len(judge) > MAX_JUDGE_CHARS:
        return f"judge {quote(judge)} is longer than {MAX_JUDGE_CHARS} characters"
    if _CONTROL.search(judge):
        return f"judge {quote(judge)} contains a control character"
    return None


def _label_problem(label: str) -> str | None:
    if not label:
        return "empty grade"
    if len(label) > 100 or _CONTROL.search(label):
        return f"grade {quote(label)} is not a grade or a label"
    return None


def _seconds(value, number: int, errors: Errors) -> tuple[bool, float | None]:
    if value is None or value == "":
        return True, None
    try:
        seconds = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        errors.add(number, f"seconds {quote(str(value))} is not a number of seconds >= 0")
        return False, None
    return True, seconds


def _time(value, number: int, errors: Errors) -> tuple[bool, dt.datetime | None]:
    if value is None or value == "":
        return True, None
    try:
        if not isinstance(value, str):
            raise TypeError
        when = dt.datetime.fromisoformat(value.strip())
    except (TypeError, ValueError):
        errors.add(number, f"judged_at {quote(str(value))} is not an ISO 8601 time")
        return False, None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return True, when


def _record(
    values: dict, number: int, errors: Errors, seen: Seen, details: dict | None = None
) -> JudgmentRecord | None:
    """A record from text values (qid, docno, judge, grade; note, seconds, judged_at)."""
    qid, docno = values.get("qid"), values.get("docno")
    judge, label = values.get("judge", ""), values.get("grade", "")
    problems = [
        check_id("qid", qid, MAX_QID_CHARS) if qid is not None else None,
        check_id("docno", docno, MAX_DOCNO_CHARS) if docno is not None else None,
        _judge_problem(judge),
        _label_problem(label),
    ]
    note = values.get("note") or ""
    if len(note) > MAX_NOTE_CHARS:
        problems.append(f"note is longer than {MAX_NOTE_CHARS:,} characters")
    if "\x00" in note:
        problems.append("note contains a NUL character")
    for problem in filter(None, problems):
        errors.add(number, problem)
    ok_seconds, seconds = _seconds(values.get("seconds"), number, errors)
    ok_time, when = _time(values.get("judged_at"), number, errors)
    if any(problems) or not (ok_seconds and ok_time):
        return None
    key = (qid, docno, values.get("query", ""), values.get("passage", ""), judge)
    if not seen.check(key, number, errors):
        return None
    return JudgmentRecord(
        number,
        qid,
        docno,
        judge,
        label,
        note,
        seconds,
        when,
        values.get("query", ""),
        values.get("passage", ""),
        details,
    )


def _seen() -> Seen:
    def describe(key) -> str:
        qid, docno, _, _, judge = key
        pair = f"{quote(qid)} {quote(docno)}" if qid is not None else "query and passage"
        return f"the grade of {pair} by judge {quote(judge or '(named on import)')}"

    return Seen(describe)


def _text(value) -> str | None:
    """A JSON value as the text a record keeps: strings stripped, integers as digits."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    return None


def _json_fields(obj: dict, keys: dict[str, str], number: int, errors: Errors) -> dict | None:
    """{record field: text} for ``keys`` ({JSON key: record field}); a key whose value is not
    a string or an integer is an error; a missing one is left out."""
    values, ok = {}, True
    for key, field in keys.items():
        if key not in obj or obj[key] is None:
            continue
        text = _text(obj[key])
        if text is None:
            errors.add(number, f"{key} must be a string or an integer")
            ok = False
        else:
            values[field] = text
    return values if ok else None


def _missing(obj: dict, keys, number: int, errors: Errors) -> bool:
    missing = [key for key in keys if obj.get(key) is None]
    if missing:
        errors.add(number, f"missing {', '.join(repr(k) for k in missing)}")
    return bool(missing)
