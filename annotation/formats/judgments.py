"""Judgments made elsewhere: per-judge grades of (topic, document) pairs, in the layouts
other tools write, read strictly and all-or-nothing like every reader of this package.

Formats (``fmt``; :func:`detect_judgment_format` tells them apart by content):

- ``table``: CSV (RFC 4180 quoting) or TSV with a header row naming the columns ``qid``,
  ``docno``, ``judge``, ``grade`` and optionally ``note``, ``seconds``, ``judged_at``, in any
  order; other columns are errors.
- ``jsonl``: one object per line with the same keys (``qid`` and ``docno`` strings or
  integers, ``grade`` an integer or a label string, ``seconds`` a number, ``judged_at`` an
  ISO 8601 time, ``note`` a string); other keys are errors.
- ``qrels``: TREC qrels lines ``qid iter docno grade``, all of them the grades of one judge
  whom the importer names (the records' judge is empty).
- ``umbrela``: UMBRELA's output, one object per line with ``model``, ``query``, ``passage``,
  ``prompt``, ``prediction``, ``judgment``, ``result_status`` and optionally ``reasoning``
  (and ``qid`` / ``docid``, which some pipelines add). The judge is the ``model``; the pair is
  resolved by the caller from the query and passage texts unless ids are given. A line with
  ``result_status`` 0 holds UMBRELA's fallback grade, not the model's: it is skipped (and
  counted), never imported as a grade.
- ``autojudge``: autojudge-annotate's JSONL export (``topic_id``, ``docid``, ``username``,
  ``rating``, ``comment`` and more keys that are kept out). Only document annotations are
  pairs: report and citation annotations (no ``docid``) and "Not rated" are skipped, counted.

A grade is kept as the text the file gives (``"2"``, ``"Mostly Good"``): :func:`map_grade`
puts it on the campaign's scale, through the importer's mapping when there is one. A judge
name is 1 to 150 characters without control characters. ``judged_at`` without a time zone is
taken as UTC. The same (qid, docno, judge) twice in one file is an error on the later line.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import re
from collections.abc import Iterator
from typing import NamedTuple

from evaluation.trec.errors import MAX_ERRORS

from .checks import MAX_DOCNO_CHARS, MAX_QID_CHARS, Errors, Seen, check_id, json_object, quote
from .source import Kind, Lines, decode, first_content_line, read, text_lines

__all__ = [
    "JUDGMENT_FORMATS",
    "MAX_JUDGE_CHARS",
    "MAX_JUDGMENT_LINE_BYTES",
    "JudgmentRecord",
    "detect_judgment_format",
    "map_grade",
    "parse_mapping",
    "read_judgments",
]

JUDGMENT_FORMATS = {
    "table": "CSV or TSV with a header: qid, docno, judge, grade [, note, seconds, judged_at]",
    "jsonl": "JSONL objects: qid, docno, judge, grade [, note, seconds, judged_at]",
    "qrels": "TREC qrels lines (qid iter docno grade) of one named judge",
    "umbrela": "UMBRELA JSONL (model, query, passage, prompt, prediction, judgment, …)",
    "autojudge": "autojudge-annotate JSONL (topic_id, docid, username, rating, comment)",
}
# A line of an LLM tool's output holds the whole prompt and passage.
MAX_JUDGMENT_LINE_BYTES = 1024 * 1024
MAX_JUDGE_CHARS = 150
MAX_NOTE_CHARS = 10_000
COLUMNS = ("qid", "docno", "judge", "grade", "note", "seconds", "judged_at")
REQUIRED = COLUMNS[:4]
UMBRELA_KEYS = (
    "model",
    "query",
    "passage",
    "prompt",
    "prediction",
    "judgment",
    "result_status",
    "reasoning",
    "qid",
    "docid",
)
AUTOJUDGE_UNRATED = "not rated"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_INTEGER = re.compile(r"[+-]?[0-9]{1,5}")


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


class JudgmentFile(NamedTuple):
    records: list[JudgmentRecord]
    skipped: list[tuple[int, str]]  # (line, why) of lines that hold no grade to import
    fmt: str  # the format read (given, or told from the content)


def read_judgments(
    source,
    *,
    name: str | None = None,
    fmt: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
    max_line_bytes: int = MAX_JUDGMENT_LINE_BYTES,
) -> JudgmentFile:
    """Every grade of the file (and the lines skipped, with why), or
    :class:`~evaluation.trec.TrecFormatError` listing every problem."""
    skipped: list[tuple[int, str]] = []
    detected = [fmt]

    def detect(first: bytes, file_name: str) -> str | None:
        detected[0] = detect_judgment_format(first, file_name)
        return detected[0]

    kind = Kind(
        "judgments",
        JUDGMENT_FORMATS,
        detect,
        {
            "table": _table,
            "jsonl": _jsonl,
            "qrels": _qrels,
            "umbrela": lambda lines, errors: _umbrela(lines, errors, skipped),
            "autojudge": lambda lines, errors: _autojudge(lines, errors, skipped),
        },
    )
    records = read(
        source,
        name=name,
        fmt=fmt,
        max_errors=max_errors,
        max_bytes=max_bytes,
        kind=kind,
        max_line_bytes=max_line_bytes,
    )
    return JudgmentFile(records, skipped, detected[0])


def detect_judgment_format(data: bytes, name: str = "") -> str | None:
    """From the first non-blank line: a JSON object's keys tell UMBRELA (``judgment`` and
    ``passage``), autojudge-annotate (``rating`` and ``username``) and our JSONL apart; a
    header naming qid and docno is a table; four fields a qrels line."""
    first = first_content_line(data)
    if first.startswith(b"{"):
        try:
            keys = set(json.loads(first.decode("utf-8", "replace")))
        except (ValueError, TypeError, RecursionError):
            return "jsonl"  # the reader reports what is wrong with it
        if {"judgment", "passage"} <= keys:
            return "umbrela"
        if {"rating", "username"} <= keys:
            return "autojudge"
        return "jsonl"
    text = first.decode("utf-8", "replace").lower()
    if "qid" in text and "docno" in text:
        return "table"
    if len(text.split()) == 4:
        return "qrels"
    return None


# --- grades and mappings -------------------------------------------------------------------


def parse_mapping(text: str) -> dict[str, int]:
    """``"0:0, 1:1, 2:1, 3:2, 4:3"`` or ``"Perfect=3; Mostly Good=2"`` (entries separated by
    commas, semicolons or new lines; label and grade by the last ``:`` or ``=``) as
    {label folded to lower case: grade}. ValueError naming the entry at fault."""
    mapping: dict[str, int] = {}
    for entry in re.split(r"[,;\n]", text or ""):
        if not entry.strip():
            continue
        cut = max(entry.rfind(":"), entry.rfind("="))
        label, grade = entry[:cut].strip(), entry[cut + 1 :].strip()
        if cut < 0 or not label or _INTEGER.fullmatch(grade) is None:
            raise ValueError(
                f"mapping entry {entry.strip()!r} is not 'grade in the file: grade on the scale'"
            )
        key = label.casefold()
        if key in mapping:
            raise ValueError(f"mapping gives {label!r} twice")
        mapping[key] = int(grade)
    return mapping


def map_grade(label: str, mapping: dict[str, int] | None, grades: list[int]) -> int | None:
    """The grade on the scale for the file's ``label``, or None when there is none: through
    ``mapping`` when given (every label must be in it), else the label itself when it is an
    integer of the scale."""
    if mapping:
        grade = mapping.get(label.strip().casefold())
    elif _INTEGER.fullmatch(label.strip()):
        grade = int(label)
    else:
        grade = None
    return grade if grade in grades else None


# --- shared checks -------------------------------------------------------------------------


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


# --- our table and JSONL ------------------------------------------------------------------


def _header(fields: list[str], errors: Errors, number: int) -> list[str] | None:
    names = [field.strip().lower() for field in fields]
    unknown = [name for name in names if name not in COLUMNS]
    missing = [name for name in REQUIRED if name not in names]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if missing:
        errors.add(
            number,
            f"the first row must be a header naming the columns {', '.join(REQUIRED)} "
            f"(optional: note, seconds, judged_at); missing {', '.join(missing)}",
        )
    if unknown:
        errors.add(
            number,
            f"unknown column{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(quote(n) for n in unknown)} (expected {', '.join(COLUMNS)})",
        )
    if repeated:
        errors.add(number, f"column {', '.join(quote(n) for n in repeated)} appears twice")
    return None if unknown or missing or repeated else names


def _rows(lines: Lines, errors: Errors) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of a CSV or TSV file: TSV when the first line holds a tab."""
    lines = iter(lines)
    first = []
    for number, raw in lines:
        first.append((number, raw))
        if raw.strip():
            break
    tsv = bool(first) and b"\t" in first[-1][1]
    everything = _chain(first, lines)
    if tsv:
        for number, line in text_lines(everything, errors):
            yield number, line.split("\t")
        return
    reader = csv.reader(_csv_lines(everything, errors), strict=True)
    start = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            errors.add(start, f"not valid CSV: {error}; reading stopped here")
            return
        number, start = start, reader.line_num + 1
        if fields and not (len(fields) == 1 and not fields[0].strip()):
            yield number, fields


def _chain(first, rest):
    yield from first
    yield from rest


def _csv_lines(lines: Lines, errors: Errors) -> Iterator[str]:
    for number, raw in lines:
        line = decode(raw, number, errors)
        yield "\n" if line is None else line + "\n"


def _table(lines: Lines, errors: Errors) -> list[JudgmentRecord]:
    records: list[JudgmentRecord] = []
    seen = _seen()
    names = None
    for number, fields in _rows(lines, errors):
        if names is None:
            names = _header(fields, errors, number)
            if names is None:
                return records
            continue
        if len(fields) != len(names):
            errors.add(
                number, f"expected {len(names)} fields as in the header, found {len(fields)}"
            )
            continue
        values = {name: field.strip() for name, field in zip(names, fields, strict=True)}
        record = _record(values, number, errors, seen)
        if record:
            records.append(record)
    return records


def _json_objects(
    lines: Lines, errors: Errors, *, allowed=None, kind: str = "", expected: str = ""
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each line that holds one JSON object whose keys are all in
    ``allowed`` (any keys when None). Other lines are errors, reported and skipped: "unknown
    {kind} field(s) ..." names the keys outside ``allowed``, followed by ``expected``."""
    for number, line in text_lines(lines, errors):
        obj = json_object(line, number, errors)
        if obj is None:
            continue
        unknown = [] if allowed is None else [key for key in obj if key not in allowed]
        if unknown:
            names = ", ".join(quote(str(k)) for k in unknown)
            plural = "s" if len(unknown) > 1 else ""
            errors.add(number, f"unknown {kind}field{plural} {names}{expected}")
            continue
        yield number, obj


def _jsonl(lines: Lines, errors: Errors) -> list[JudgmentRecord]:
    records: list[JudgmentRecord] = []
    seen = _seen()
    expected = f" (expected {', '.join(COLUMNS)})"
    for number, obj in _json_objects(lines, errors, allowed=COLUMNS, expected=expected):
        if _missing(obj, REQUIRED, number, errors):
            continue
        values = _json_fields(
            obj,
            {"qid": "qid", "docno": "docno", "judge": "judge", "grade": "grade"},
            number,
            errors,
        )
        if values is None:
            continue
        note = obj.get("note")
        if note is not None and not isinstance(note, str):
            errors.add(number, "note must be a string")
            continue
        values.update(note=(note or "").strip(), seconds=obj.get("seconds"))
        values["judged_at"] = obj.get("judged_at")
        record = _record(values, number, errors, seen)
        if record:
            records.append(record)
    return records


# --- TREC qrels: one judge ----------------------------------------------------------------


def _qrels(lines: Lines, errors: Errors) -> list[JudgmentRecord]:
    records: list[JudgmentRecord] = []
    seen = _seen()
    for number, line in text_lines(lines, errors):
        fields = line.split()
        if fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            errors.add(number, f"expected 4 fields (qid iter docno grade), found {len(fields)}")
            continue
        qid, _, docno, label = fields
        values = {"qid": qid, "docno": docno, "judge": "-", "grade": label}
        record = _record(values, number, errors, seen)
        if record:
            records.append(record._replace(judge=""))
    return records


# --- UMBRELA ------------------------------------------------------------------------------


def _umbrela(lines: Lines, errors: Errors, skipped: list) -> list[JudgmentRecord]:
    records: list[JudgmentRecord] = []
    seen = _seen()
    for number, obj in _json_objects(lines, errors, allowed=UMBRELA_KEYS, kind="UMBRELA "):
        if _missing(obj, ("model", "judgment", "result_status"), number, errors):
            continue
        status = obj["result_status"]
        if isinstance(status, bool) or status not in (0, 1):
            errors.add(number, f"result_status must be 1 or 0, found {quote(str(status))}")
            continue
        values = _json_fields(
            obj,
            {"model": "judge", "judgment": "grade", "qid": "qid", "docid": "docno"},
            number,
            errors,
        )
        if values is None:
            continue
        texts = {}
        for key in ("query", "passage", "prompt", "prediction", "reasoning"):
            value = obj.get(key)
            if isinstance(value, dict) and key == "query":  # {"text": …, "qid": …}
                if values.get("qid") is None and _text(value.get("qid")):
                    values["qid"] = _text(value.get("qid"))
                value = value.get("text")
            if value is not None and not isinstance(value, str):
                errors.add(number, f"{key} must be a string")
                break
            texts[key] = value or ""
        else:
            if values.get("qid") is None and not texts["query"].strip():
                errors.add(number, "missing 'query' (or 'qid')")
                continue
            if values.get("docno") is None and not texts["passage"].strip():
                errors.add(number, "missing 'passage' (or 'docid')")
                continue
            if status == 0:
                skipped.append((number, "result_status 0: UMBRELA could not read a grade"))
                continue
            values.update(query=texts["query"], passage=texts["passage"])
            details = {
                "model": values["judge"],
                "prompt": texts["prompt"],
                "prediction": texts["prediction"],
                "reasoning": texts["reasoning"],
            }
            record = _record(values, number, errors, seen, details)
            if record:
                records.append(record)
    return records


# --- autojudge-annotate -------------------------------------------------------------------


def _autojudge(lines: Lines, errors: Errors, skipped: list) -> list[JudgmentRecord]:
    records: list[JudgmentRecord] = []
    seen = _seen()
    for number, obj in _json_objects(lines, errors):
        if obj.get("docid") is None:
            skipped.append((number, "a report or citation annotation, not a document's"))
            continue
        if _missing(obj, ("topic_id", "username", "rating"), number, errors):
            continue
        values = _json_fields(
            obj,
            {"topic_id": "qid", "docid": "docno", "username": "judge", "rating": "grade"},
            number,
            errors,
        )
        if values is None:
            continue
        if values["grade"].casefold() == AUTOJUDGE_UNRATED:
            skipped.append((number, "rated 'Not rated'"))
            continue
        comment = obj.get("comment")
        if comment is not None and not isinstance(comment, str):
            errors.add(number, "comment must be a string")
            continue
        values["note"] = (comment or "").strip()
        details = {"rating": values["grade"]}
        for key in ("dataset", "request_id"):
            if isinstance(obj.get(key), str | int) and not isinstance(obj.get(key), bool):
                details[key] = obj[key]
        if isinstance(obj.get("spans"), list):
            details["spans"] = obj["spans"]
        record = _record(values, number, errors, seen, details)
        if record:
            records.append(record)
    return records
