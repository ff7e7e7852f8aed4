"""The grammar of TREC lines, line by line: the reference that the vectorised readers must
agree with (the rules are in the package docstring). One checker serves every format: runs and
qrels (Format) and trec_eval's other inputs (fields.FieldsFormat: preferences, qrels_jg,
z-scores); both describe their fields, their key and the words for it."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import polars as pl

from .errors import EXTRA_FIELDS, RANK_NOT_INTEGER, ErrorLog, NoticeLog, show
from .source import line_problem

__all__ = [
    "QRELS",
    "QRELS_SCHEMA",
    "RUN",
    "RUN_SCHEMA",
    "Checked",
    "Format",
    "QrelsLine",
    "RunLine",
    "check_line",
    "duplicate_message",
    "has_duplicate_pairs",
    "pair_hash",
    "parse",
    "parse_float",
    "parse_int",
]

RUN_SCHEMA = {
    "qid": pl.String,
    "docno": pl.String,
    "rank": pl.Int64,
    "score": pl.Float64,
    "tag": pl.String,
}
QRELS_SCHEMA = {"qid": pl.String, "iteration": pl.String, "docno": pl.String, "grade": pl.Int64}

# The number grammar, as bytes patterns for the line parser and as polars patterns.
INT_PATTERN = r"^[+-]?[0-9]+$"
SCORE_PATTERN = r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_INT_RE = re.compile(INT_PATTERN[1:-1].encode())
_SCORE_RE = re.compile(SCORE_PATTERN[1:-1].encode())
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_NON_FINITE = {"nan", "inf", "infinity"}  # spellings to name in "is not finite" messages
# The kinds of number a field of fields.FieldsFormat holds; a statistic may be nan or inf.
INT, FLOAT, STATISTIC = "int", "float", "statistic"
NON_FINITE_PATTERN = r"(?i)^[+-]?(?:nan|inf|infinity)$"  # what a z-score's statistic may be
_NON_FINITE_RE = re.compile(NON_FINITE_PATTERN)
# How duplicate messages name a key's fields ("docno 'D1' already appears for topic '301'").
KEY_LABELS = {
    "qid": "topic",
    "jg": "judgment group",
    "jsg": "subgroup",
    "docno": "docno",
    "measure": "measure",
}


class RunLine(NamedTuple):
    qid: str
    docno: str
    rank: int | None  # None when the rank field is not an integer (trec_eval never reads it)
    score: float
    tag: str
    line: int


class QrelsLine(NamedTuple):
    qid: str
    iteration: str
    docno: str
    grade: int
    line: int


class Format(NamedTuple):
    """What differs between runs and qrels."""

    kind: str  # "run" or "qrels", as in "file has no run lines"
    n_fields: int
    usage: str  # the expected fields, for the field-count message
    raw_names: tuple[str, ...]  # the fields in file order
    raw_types: tuple[type[pl.DataType], ...]  # how polars reads them in the fast path
    ints: tuple[int, ...]  # positions of integer fields
    floats: tuple[int, ...]  # positions of score fields
    columns: tuple[str, ...]  # the frame's columns (a subset of raw_names)
    schema: dict[str, type[pl.DataType]]
    record: type
    # Run files follow trec_eval: fields after the last are ignored and the rank is never
    # read, so both are accepted, with a notice. A rank that is an integer is kept.
    extra_fields: bool = False
    free_ints: tuple[int, ...] = ()  # integer fields read when they can be, else null
    key: tuple[str, ...] = ("qid", "docno")  # the fields a line may not repeat together


RUN = Format(
    kind="run",
    n_fields=6,
    usage="qid Q0 docno rank score tag",
    raw_names=("qid", "q0", "docno", "rank", "score", "tag"),
    raw_types=(pl.String, pl.String, pl.String, pl.Int64, pl.Float64, pl.String),
    ints=(),
    floats=(4,),
    columns=tuple(RUN_SCHEMA),
    schema=RUN_SCHEMA,
    record=RunLine,
    extra_fields=True,
    free_ints=(3,),
)
QRELS = Format(
    kind="qrels",
    n_fields=4,
    usage="qid iteration docno grade",
    raw_names=("qid", "iteration", "docno", "grade"),
    raw_types=(pl.String, pl.String, pl.String, pl.Int64),
    ints=(3,),
    floats=(),
    columns=tuple(QRELS_SCHEMA),
    schema=QRELS_SCHEMA,
    record=QrelsLine,
)


def parse_int(what: str, field: bytes) -> tuple[int | None, str | None]:
    if _INT_RE.fullmatch(field) is None:
        return None, f"{what} {show(field.decode())} is not an integer"
    # int() refuses strings of over 4,300 digits: drop leading zeros, and past 19 digits the
    # value is out of range anyway.
    digits = field.lstrip(b"+-").lstrip(b"0") or b"0"
    value = None
    if len(digits) <= 19:
        value = -int(digits) if field[:1] == b"-" else int(digits)
    if value is None or not _INT64_MIN <= value <= _INT64_MAX:
        return None, f"{what} {show(field.decode())} is out of range"
    return value, None


def parse_float(
    what: str, field: bytes, *, non_finite: bool = False
) -> tuple[float | None, str | None]:
    """A decimal number (a run's score, a preference's level); with ``non_finite`` also nan
    and inf, any case, signed (a z-score file's statistics)."""
    text = field.decode()
    if _SCORE_RE.fullmatch(field) is None:
        if text.lstrip("+-").lower() in _NON_FINITE:
            if non_finite and _NON_FINITE_RE.fullmatch(text):  # the vectorised path's rule
                return float(text), None
            return None, f"{what} {show(text)} is not finite"
        return None, f"{what} {show(text)} is not a number"
    value = float(field)
    if not math.isfinite(value) and not non_finite:
        return None, f"{what} {show(text)} is not finite"
    return value, None


class Checked(NamedTuple):
    problems: list[str]
    key: tuple[str, ...] | None  # the key's fields (qid, docno) when the line has its shape
    values: tuple | None  # the record's fields (without the line number) when valid
    notes: tuple[str, ...] = ()  # notice codes (EXTRA_FIELDS, RANK_NOT_INTEGER)


def check_line(fmt, raw: bytes) -> Checked | None:
    """The grammar for one line (without its ``\\n``) of a run or qrels file (Format) or of
    one of trec_eval's other inputs (fields.FieldsFormat): None for a blank or comment line."""
    fields = raw.split()
    if fields and fields[0][:1] == b"#":
        return None
    # A blank line can only be too long: whitespace holds no NUL and is valid UTF-8.
    problem = line_problem(raw)
    if problem is not None:
        return Checked([problem], None, None)
    if not fields:
        return None
    if len(fields) < fmt.n_fields or (len(fields) > fmt.n_fields and not fmt.extra_fields):
        at_least = "at least " if fmt.extra_fields else ""
        message = f"expected {at_least}{fmt.n_fields} fields ({fmt.usage}), found {len(fields)}"
        return Checked([message], None, None)
    qid, docno = fields[0].decode(), fields[2].decode()
    if fmt is RUN:
        problems = []
        notes = [EXTRA_FIELDS] if len(fields) > fmt.n_fields else []
        rank, problem = parse_int("rank", fields[3])
        if problem:
            notes.append(RANK_NOT_INTEGER)
        score, problem = parse_float("score", fields[4])
        if problem:
            problems.append(problem)
        values = (qid, docno, rank, score, fields[5].decode())
        return Checked(problems, (qid, docno), None if problems else values, tuple(notes))
    if fmt is QRELS:
        grade, problem = parse_int("grade", fields[3])
        problems = [problem] if problem else []
        values = (qid, fields[1].decode(), docno, grade)
        return Checked(problems, (qid, docno), None if problems else values)
    return _check_fields(fmt, fields)


def _check_fields(fmt, fields: list[bytes]) -> Checked:
    """A line of fields.FieldsFormat: every field a string or a number of its kind."""
    kinds = dict(fmt.numbers)
    problems, values = [], []
    for name, field in zip(fmt.names, fields, strict=True):
        kind = kinds.get(name)
        if kind is None:
            values.append(field.decode())
            continue
        if kind == INT:
            value, problem = parse_int(name, field)
        else:
            value, problem = parse_float(name, field, non_finite=kind == STATISTIC)
        if problem:
            problems.append(problem)
        values.append(value)
    named = dict(zip(fmt.names, values, strict=True))
    key = tuple(named[name] for name in fmt.key)
    return Checked(problems, key, None if problems else tuple(values))


def duplicate_message(fmt, key: tuple[str, ...], first: int) -> str:
    """A line repeating an earlier line's key: "docno 'D1' already appears for topic '301'
    on line 3" (the key's last field, then the others)."""
    *context, (last, value) = zip(fmt.key, key, strict=True)
    where = ", ".join(f"{KEY_LABELS[name]} {show(part)}" for name, part in context)
    return f"{KEY_LABELS[last]} {show(value)} already appears for {where} on line {first}"


def parse(
    fmt: Format,
    lines: Iterable[tuple[int, bytes]],
    log: ErrorLog,
    notices: NoticeLog | None = None,
) -> Iterator:
    """Check numbered lines one by one, yield the valid records, log every problem (and
    every notice, when given a NoticeLog)."""
    seen: dict[str, dict[str, int]] = {}
    content_lines = 0
    record = fmt.record
    for number, raw in lines:
        checked = check_line(fmt, raw)
        if checked is None:
            continue
        content_lines += 1
        if notices is not None:
            for code in checked.notes:
                notices.add(code, number)
        for problem in checked.problems:
            log.add(number, problem)
        if checked.key is None:
            continue
        qid, docno = checked.key
        topic = seen.get(qid)
        if topic is None:
            topic = seen[qid] = {}
        first = topic.get(docno)
        if first is not None:
            log.add(number, duplicate_message(fmt, checked.key, first))
            continue
        topic[docno] = number
        if checked.values is not None:
            yield record(*checked.values, number)
    if content_lines == 0:
        log.fail(f"file has no {fmt.kind} lines")


def has_duplicate_pairs(frame: pl.DataFrame) -> bool:
    """Whether some (qid, docno) pair occurs twice.

    Counting distinct 64-bit hashes of the pairs is several times faster than polars' exact
    duplicate search on two string columns; only when two hashes collide is that search run.
    """
    hashes = frame.select(pair_hash()).to_series()
    if hashes.n_unique() == len(hashes):
        return False
    return bool(frame.select(pl.struct("qid", "docno").is_duplicated().any()).item())


def pair_hash() -> pl.Expr:
    return pl.col("qid").hash(0x5EED) ^ pl.col("docno").hash(0xD0C)
