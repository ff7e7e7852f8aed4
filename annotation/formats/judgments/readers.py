"""The readers of each format: our table (CSV or TSV) and JSONL, TREC qrels of one judge,
UMBRELA's JSONL and autojudge-annotate's JSONL. Each turns numbered lines into records
(and logs every problem); ``read_judgments`` picks one. Every reader takes the same three
arguments: the lines, the error log, and the list where it notes (line, why) of each line it
skips because it holds no grade to import (only UMBRELA's and autojudge's have such lines)."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from ..checks import Errors, json_object, quote
from ..source import Lines, decode, text_lines
from .records import JudgmentRecord, _json_fields, _missing, _record, _seen, _text

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


def _table(lines: Lines, errors: Errors, skipped: list) -> list[JudgmentRecord]:
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


def _jsonl(lines: Lines, errors: Errors, skipped: list) -> list[JudgmentRecord]:
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


def _qrels(lines: Lines, errors: Errors, skipped: list) -> list[JudgmentRecord]:
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
