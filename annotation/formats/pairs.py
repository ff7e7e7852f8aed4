"""Pairs files: ``qid docno`` per line, for adding chosen pairs to a campaign's pool; and
gold files: ``qid docno grade`` (or TREC qrels ``qid iter docno grade``) per line, for
calibration pairs with a known grade.

Either may start with a header naming its columns, as a topics TSV file may (``qid<TAB>query``):
a first line holding data whose qid field is one of :data:`QID_HEADERS` and whose docno field
is one of :data:`DOCNO_HEADERS` (any case; in a gold file the grade field is then a name, not
a number) is skipped, e.g. ``qid docno``, ``topic_id doc_id grade``, ``qid iter docno rel``."""

from __future__ import annotations

import re
from typing import NamedTuple

from evaluation.trec.errors import MAX_ERRORS

from .checks import MAX_DOCNO_CHARS, MAX_QID_CHARS, Errors, Seen, check_id, quote
from .source import MAX_LINE_BYTES, Check, Kind, Lines, decode, read

__all__ = ["DOCNO_HEADERS", "QID_HEADERS", "GoldRecord", "PairRecord", "read_gold", "read_pairs"]

# A header's names for the qid and the docno columns (compared in lower case).
QID_HEADERS = frozenset({"qid", "topic", "topic_id", "query_id"})
DOCNO_HEADERS = frozenset({"docno", "docid", "doc_id"})

# A pairs file that is really a qrels or run file is a likely mistake: say so.
_HINTS = {4: " (a qrels line?)", 6: " (a run line? pool runs on the pool page)"}


class PairRecord(NamedTuple):
    qid: str
    docno: str
    line: int


def read_pairs(
    source,
    *,
    name: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    check: Check | None = None,
) -> list[PairRecord]:
    """Read a pairs file (``qid docno`` per line) into records in file order. Raises
    :class:`~evaluation.trec.TrecFormatError` listing every problem, the caller's ``check``
    of the records (source.read) among them."""
    return read(
        source,
        name=name,
        fmt="pairs",
        max_errors=max_errors,
        max_bytes=max_bytes,
        kind=_PAIRS,
        max_line_bytes=max_line_bytes,
        check=check,
    )


def _fields(lines: Lines, errors: Errors, header=lambda fields: False):
    """(line number, fields) of each line that holds data. Blank lines and comments are
    skipped before any check, as in TREC files; an undecodable line is reported; the first
    line holding data is skipped when ``header(fields)`` says it names the columns."""
    first = True
    for number, raw in lines:
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        line = decode(raw, number, errors)
        if line is None:
            first = False
            continue
        fields = line.split()
        if first and header(fields):
            first = False
            continue
        first = False
        yield number, fields


def _names_columns(fields: list[str], docno_at: int) -> bool:
    """Whether the line names the qid column first and the docno column at ``docno_at``."""
    return (
        len(fields) > docno_at
        and fields[0].lower() in QID_HEADERS
        and fields[docno_at].lower() in DOCNO_HEADERS
    )


def _pair_checker(errors: Errors):
    """``check(number, qid, docno, *problems)``: reports the line's problems (bad ids, then
    those given) and a pair met before; True when the line is fine."""
    seen = Seen(lambda pair: f"pair {quote(pair[0])} {quote(pair[1])}")

    def check(number: int, qid: str, docno: str, *more: str | None) -> bool:
        ids = (check_id("qid", qid, MAX_QID_CHARS), check_id("docno", docno, MAX_DOCNO_CHARS))
        problems = [problem for problem in (*ids, *more) if problem]
        for problem in problems:
            errors.add(number, problem)
        return not problems and seen.check((qid, docno), number, errors)

    return check


def _pairs(lines: Lines, errors: Errors) -> list[PairRecord]:
    records = []
    check = _pair_checker(errors)
    for number, fields in _fields(lines, errors, _pairs_header):
        if len(fields) != 2:
            errors.add(
                number,
                f"expected 2 fields (qid docno), found {len(fields)}{_HINTS.get(len(fields), '')}",
            )
            continue
        qid, docno = fields
        if check(number, qid, docno):
            records.append(PairRecord(qid, docno, number))
    return records


def _pairs_header(fields: list[str]) -> bool:
    return len(fields) == 2 and _names_columns(fields, 1)


_PAIRS = Kind("pairs", {"pairs": "qid docno per line"}, None, {"pairs": _pairs})


# --- gold ---------------------------------------------------------------------------------

# A grade is a whole number; the database keeps it in a small integer (Pair.gold_grade).
_GRADE = re.compile(r"[+-]?[0-9]+")
_GRADE_LIMIT = 32767
_GOLD_LAYOUTS = {3: "qid docno grade", 4: "qid iter docno grade"}


class GoldRecord(NamedTuple):
    qid: str
    docno: str
    grade: int
    line: int


def read_gold(
    source,
    *,
    name: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    check: Check | None = None,
) -> list[GoldRecord]:
    """Read a gold file into records in file order: ``qid docno grade`` per line, or TREC
    qrels lines ``qid iter docno grade`` (the iteration field is ignored, as trec_eval does).
    The first line fixes the layout; every other line must follow it. Raises
    :class:`~evaluation.trec.TrecFormatError` listing every problem, the caller's ``check``
    of the records (source.read) among them."""
    return read(
        source,
        name=name,
        fmt="gold",
        max_errors=max_errors,
        max_bytes=max_bytes,
        kind=_GOLDEN,
        max_line_bytes=max_line_bytes,
        check=check,
    )


def _gold_header(fields: list[str]) -> bool:
    """``qid docno grade`` or ``qid iter docno grade`` naming the columns: the grade field
    a name, not a number."""
    docno_at = {3: 1, 4: 2}.get(len(fields))
    return (
        docno_at is not None
        and _names_columns(fields, docno_at)
        and _GRADE.fullmatch(fields[-1]) is None
    )


def _gold(lines: Lines, errors: Errors) -> list[GoldRecord]:
    records = []
    check = _pair_checker(errors)
    layout: tuple[int, int] | None = None  # (fields per line, the first line with them)
    for number, fields in _fields(lines, errors, _gold_header):
        if layout is None and len(fields) in _GOLD_LAYOUTS:
            layout = (len(fields), number)
        if layout is None or len(fields) != layout[0]:
            expected = (
                f"3 fields ({_GOLD_LAYOUTS[3]}) or 4 ({_GOLD_LAYOUTS[4]})"
                if layout is None
                else f"{layout[0]} fields ({_GOLD_LAYOUTS[layout[0]]}) as on line {layout[1]}"
            )
            errors.add(number, f"expected {expected}, found {len(fields)}")
            continue
        if layout[0] == 3:
            qid, docno, grade_text = fields
        else:
            qid, _, docno, grade_text = fields
        if check(number, qid, docno, _grade_problem(grade_text)):
            records.append(GoldRecord(qid, docno, int(grade_text), number))
    return records


def _grade_problem(text: str) -> str | None:
    if _GRADE.fullmatch(text) is None:
        return f"grade {quote(text)} is not an integer"
    # Checked on the digits first: int() of thousands of digits is slow or refused.
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > 5 or abs(int(text)) > _GRADE_LIMIT:
        return f"grade {quote(text)} is out of range"
    return None


_GOLDEN = Kind(
    "gold grades",
    {"gold": "qid docno grade, or qid iter docno grade (TREC qrels), per line"},
    None,
    {"gold": _gold},
)
