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

The formats are registered once, in :data:`JUDGMENT_FORMAT_LIST` (name, label, description,
reader): the model's choices (annotation.models.ImportFormat), the import form, the API, the
command line, their help texts and this reader all come from it, so a reader added there is
offered and read everywhere alike.

Modules: records (a record and the checks its values pass), readers (one per format), grades
(the importer's mapping and a label's grade on the scale); this one reads a file whole.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from typing import NamedTuple

from evaluation.trec.errors import MAX_ERRORS

from ..checks import Errors
from ..source import Kind, Lines, first_content_line, read
from .grades import map_grade, parse_mapping
from .readers import _autojudge, _jsonl, _qrels, _table, _umbrela
from .records import MAX_JUDGE_CHARS, JudgmentRecord

__all__ = [
    "JUDGMENT_FORMATS",
    "JUDGMENT_FORMAT_LIST",
    "MAX_JUDGE_CHARS",
    "MAX_JUDGMENT_LINE_BYTES",
    "JudgmentFormat",
    "JudgmentRecord",
    "describe_judgment_formats",
    "detect_judgment_format",
    "map_grade",
    "parse_mapping",
    "read_judgments",
]


class JudgmentFormat(NamedTuple):
    """One format of judgments made elsewhere: its ``name`` (``fmt``, stored with each
    import), a short ``label`` (the model's choice), a ``description`` of what a line holds
    (the import form's options, the help texts, the refusal naming the formats accepted) and
    its ``reader``: (lines, error log, skipped lines) to records (see readers)."""

    name: str
    label: str
    description: str
    reader: Callable[[Lines, Errors, list], list[JudgmentRecord]]


JUDGMENT_FORMAT_LIST = (
    JudgmentFormat(
        "table",
        "CSV/TSV: qid, docno, judge, grade",
        "CSV or TSV with a header: qid, docno, judge, grade [, note, seconds, judged_at]",
        _table,
    ),
    JudgmentFormat(
        "jsonl",
        "JSONL: qid, docno, judge, grade",
        "JSONL objects: qid, docno, judge, grade [, note, seconds, judged_at]",
        _jsonl,
    ),
    JudgmentFormat(
        "qrels",
        "TREC qrels file (one named judge)",
        "TREC qrels lines (qid iter docno grade) of one named judge",
        _qrels,
    ),
    JudgmentFormat(
        "umbrela",
        "UMBRELA JSONL",
        "UMBRELA JSONL (model, query, passage, prompt, prediction, judgment, …)",
        _umbrela,
    ),
    JudgmentFormat(
        "autojudge",
        "autojudge-annotate JSONL",
        "autojudge-annotate JSONL (topic_id, docid, username, rating, comment)",
        _autojudge,
    ),
)
# {name: description}, the shape of TOPIC_FORMATS and DOCUMENT_FORMATS.
JUDGMENT_FORMATS = {f.name: f.description for f in JUDGMENT_FORMAT_LIST}
# A line of an LLM tool's output holds the whole prompt and passage.
MAX_JUDGMENT_LINE_BYTES = 1024 * 1024


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
    check: Callable[[list[JudgmentRecord], str], Iterable[tuple[int, str]]] | None = None,
) -> JudgmentFile:
    """Every grade of the file (and the lines skipped, with why), or
    :class:`~evaluation.trec.TrecFormatError` listing every problem. ``check(records, fmt)``:
    the caller's checks of the records read well (source.read), given the format read."""
    skipped: list[tuple[int, str]] = []
    detected = [fmt]

    def detect(first: bytes, file_name: str) -> str | None:
        detected[0] = detect_judgment_format(first, file_name)
        return detected[0]

    parsers = {f.name: functools.partial(f.reader, skipped=skipped) for f in JUDGMENT_FORMAT_LIST}
    kind = Kind("judgments", JUDGMENT_FORMATS, detect, parsers)
    records = read(
        source,
        name=name,
        fmt=fmt,
        max_errors=max_errors,
        max_bytes=max_bytes,
        kind=kind,
        max_line_bytes=max_line_bytes,
        check=None if check is None else lambda records: check(records, detected[0]),
    )
    return JudgmentFile(records, skipped, detected[0])


def describe_judgment_formats() -> str:
    """The formats in a sentence, for help texts: ``table`` (CSV or TSV with …); …"""
    return "; ".join(f"{f.name} ({f.description})" for f in JUDGMENT_FORMAT_LIST)


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
