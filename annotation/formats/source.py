"""From an input file to numbered lines, and from its first line to its format.

The bytes are evaluation.trec.source's: gzip (by content), concatenated members, the
decompressed size limit (checked while reading, so a gzip bomb stays small), a leading
byte-order mark, and the line checks (NUL bytes, UTF-8) with their messages. The TREC readers
and these readers thus refuse the same files with the same words.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from evaluation.trec.errors import CheckingStopped, LineError, TrecFormatError, check_max_errors
from evaluation.trec.source import BOM, WHITESPACE, display_name, iter_lines, line_problem

from .checks import Errors

__all__ = [
    "MAX_DOCUMENT_LINE_BYTES",
    "MAX_LINE_BYTES",
    "Check",
    "Kind",
    "Lines",
    "decode",
    "extension",
    "first_content_line",
    "read",
]

# Longest line a reader accepts, in bytes (without its line end). A line is one topic, pair
# or grade, which is short; a documents file holds a document's whole text on one line
# (JSONL, TSV), so it may be longer. Bounded so that one hostile line cannot fill memory or
# the database (the file as a whole is bounded by ``max_bytes``).
MAX_LINE_BYTES = 64 * 1024
MAX_DOCUMENT_LINE_BYTES = 1024 * 1024

# (line number from 1, the line's bytes without "\n" or "\r\n")
Lines = Iterable[tuple[int, bytes]]
# A caller's checks of the records read well: (line, problem) of each problem found.
Check = Callable[[list], Iterable[tuple[int, str]]]


class Kind(NamedTuple):
    """What a reader reads: its noun ("file has no topics"), its formats (name: description,
    for the message naming the formats accepted), how it detects one from the first non-blank
    line and the file's name, and the parser of each."""

    noun: str
    formats: dict[str, str]
    detect: Callable[[bytes, str], str | None] | None
    parsers: dict[str, Callable[[Lines, Errors], list]]


class _TooLong(bytes):
    """Stands in for a line longer than the limit: holds only the line's first byte that is
    not whitespace (enough to detect the format or tell a ``#`` comment, as
    evaluation.trec's long lines do); :func:`decode` reports it."""

    limit: int


def read(
    source,
    *,
    name: str | None,
    fmt: str | None,
    max_errors: int,
    max_bytes: int | None,
    kind: Kind,
    max_line_bytes: int,
    check: Check | None = None,
) -> list:
    """Every record of the file, or TrecFormatError listing its problems. A line longer than
    ``max_line_bytes`` bytes is one of them.

    ``check``: the caller's own checks of the records read well (a topic the campaign does
    not have, a grade off its scale): called with them once the file is read, it gives
    (line, problem) pairs that join the file's errors, in line order under the same caps,
    so that one answer lists every problem of the file."""
    name = display_name(source, name)
    check_max_errors(max_errors)
    if (
        not isinstance(max_line_bytes, int)
        or isinstance(max_line_bytes, bool)
        or max_line_bytes < 1
    ):
        raise ValueError(f"max_line_bytes must be a positive integer, got {max_line_bytes!r}")
    if fmt is not None and fmt not in kind.parsers:
        raise ValueError(
            f"unknown {kind.noun} format {fmt!r}; choose one of {sorted(kind.parsers)}"
        )
    lines = _lines(source, name=name, max_bytes=max_bytes, max_line_bytes=max_line_bytes)
    if fmt is None:
        first, lines = _peek(lines)
        if first is None:
            raise TrecFormatError([LineError(name, 0, f"file has no {kind.noun}")])
        fmt = kind.detect(first, name)
        if fmt is None:
            # Read to the end first: a file that is too large or broken gzip says so instead.
            long_lines = [number for number, raw in lines if isinstance(raw, _TooLong)]
            accepted = "; ".join(kind.formats.values())
            problems = [
                LineError(name, 0, f"cannot tell the format of the file; accepted: {accepted}")
            ]
            # The first line may be one too long to tell its format from: say that too.
            problems += [
                LineError(name, number, f"line is longer than {max_line_bytes:,} bytes")
                for number in long_lines[: max_errors - 1]
            ]
            raise TrecFormatError(problems[:max_errors], 1 + len(long_lines))
    errors = Errors(name, max_errors)
    try:
        records = kind.parsers[fmt](lines, errors)
        if check is not None and records:
            for line, problem in check(records):
                errors.add(line, problem)
    except CheckingStopped:  # too many errors: the rest of the file is not read
        errors.raise_if_any()
    if not records and not errors.total:
        errors.fail(f"file has no {kind.noun}")
    errors.raise_if_any()
    return records


def decode(raw: bytes, number: int, errors: Errors) -> str | None:
    """The line as text, or None after reporting why it is not (too long, a NUL byte, not
    UTF-8)."""
    if isinstance(raw, _TooLong):
        errors.add(number, f"line is longer than {raw.limit:,} bytes")
        return None
    problem = line_problem(raw, max_line_bytes=None)
    if problem:
        errors.add(number, problem)
        return None
    return raw.decode()


def text_lines(lines, errors: Errors):
    """(number, text) of each line that decodes and is not blank; undecodable lines are
    reported through ``decode``."""
    for number, raw in lines:
        line = decode(raw, number, errors)
        if line is not None and line.strip():
            yield number, line


def first_content_line(data: bytes) -> bytes:
    """The first of the first 1000 lines that is not blank, stripped; empty if none is."""
    for raw in data.removeprefix(BOM).split(b"\n", 1000)[:1000]:
        stripped = raw.strip()
        if stripped:
            return stripped
    return b""


def extension(name: str) -> str:
    """``".tsv"`` for ``topics.TSV.gz``: lower case, ``.gz`` ignored."""
    base = os.path.basename(name or "").lower().removesuffix(".gz")
    return os.path.splitext(base)[1]


def _lines(
    source, *, name: str, max_bytes: int | None, max_line_bytes: int
) -> Iterator[tuple[int, bytes]]:
    # iter_lines checks its arguments at once, so a wrong source fails before any reading.
    # It keeps at most max_line_bytes + 1 bytes of a long line (see split_lines), so memory
    # stays bounded whatever the file holds.
    numbered = iter_lines(source, name=name, max_bytes=max_bytes, max_line_bytes=max_line_bytes)
    return (_line(number, raw, max_line_bytes) for number, raw in numbered)


def _line(number: int, raw: bytes, max_line_bytes: int) -> tuple[int, bytes]:
    raw = raw.removesuffix(b"\r")
    if len(raw) > max_line_bytes:
        raw = _TooLong(raw.lstrip(WHITESPACE)[:1])
        raw.limit = max_line_bytes
    return number, raw


def _peek(lines: Iterator[tuple[int, bytes]]) -> tuple[bytes | None, Lines]:
    """The first non-blank line (stripped; None if there is none) and all the lines again.

    The blank lines before it come back empty rather than kept: every parser skips a blank
    line, so only their numbers matter, and a file of blank lines then costs no memory.
    """
    for number, raw in lines:
        stripped = raw.strip()
        if stripped:
            blanks = ((n, b"") for n in range(1, number))
            return stripped, itertools.chain(blanks, [(number, raw)], lines)
    return None, iter(())
