"""Pairs files: ``qid docno`` per line, for adding chosen pairs to a campaign's pool."""

from __future__ import annotations

from typing import NamedTuple

from evaluation.trec.errors import MAX_ERRORS

from .checks import MAX_DOCNO_CHARS, MAX_QID_CHARS, Errors, Seen, check_id, quote
from .source import Kind, Lines, decode, read

__all__ = ["PairRecord", "read_pairs"]

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
) -> list[PairRecord]:
    """Read a pairs file (``qid docno`` per line) into records in file order. Raises
    :class:`~evaluation.trec.TrecFormatError` listing every problem."""
    return read(
        source, name=name, fmt="pairs", max_errors=max_errors, max_bytes=max_bytes, kind=_PAIRS
    )


def _pairs(lines: Lines, errors: Errors) -> list[PairRecord]:
    records = []
    seen = Seen(lambda pair: f"pair {quote(pair[0])} {quote(pair[1])}")
    for number, raw in lines:
        # Blank lines and comments are skipped before any check, as in TREC files.
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        line = decode(raw, number, errors)
        if line is None:
            continue
        fields = line.split()
        if len(fields) != 2:
            errors.add(
                number,
                f"expected 2 fields (qid docno), found {len(fields)}{_HINTS.get(len(fields), '')}",
            )
            continue
        qid, docno = fields
        problems = [
            problem
            for problem in (
                check_id("qid", qid, MAX_QID_CHARS),
                check_id("docno", docno, MAX_DOCNO_CHARS),
            )
            if problem
        ]
        for problem in problems:
            errors.add(number, problem)
        if problems or not seen.check((qid, docno), number, errors):
            continue
        records.append(PairRecord(qid, docno, number))
    return records


_PAIRS = Kind("pairs", {"pairs": "qid docno per line"}, None, {"pairs": _pairs})
