"""The public readers: polars' CSV reader first (path 1 of the package docstring,
canonical.py), then the any-layout reader (path 2, lines.py), then the line-by-line parser
(path 3, grammar.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import polars as pl

from .canonical import read_canonical
from .errors import (
    MAX_ERRORS,
    CheckingStopped,
    ErrorLog,
    Notice,
    NoticeLog,
    TrecFormatError,
    check_max_errors,
)
from .grammar import QRELS, RUN, Format, QrelsLine, RunLine, parse
from .lines import read_any_layout
from .source import (
    check_max_bytes,
    display_name,
    drop_bom,
    iter_lines,
    slices,
    split_lines,
    whole_input,
)

__all__ = ["FEW_BYTES", "FEW_DECLINED_BYTES", "iter_qrels", "iter_run", "read_qrels", "read_run"]

# Inputs this small are read by path 3 alone, the reference, which gives the same frames,
# notices and errors: polars' fixed cost per call is more than the whole parse. Measured on
# this machine (2 cores): path 1 takes about 0.5-1 ms from the first byte, path 3 about 15 us
# a line, even below 2 KiB; path 2 takes 3-6 ms, path 3 as much at about 8 KiB.
FEW_BYTES = 2 << 10
FEW_DECLINED_BYTES = 8 << 10


def read_run(
    source,
    *,
    name: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
    columns: Sequence[str] | None = None,
    notices: list[Notice] | None = None,
) -> pl.DataFrame:
    """Read a run file into a frame with columns qid, docno, rank, score, tag, in file order.

    Run lines follow trec_eval's rules: fields after the sixth are ignored, and the rank is
    never read (a rank that is not an integer is null in the frame). Both are accepted, and
    when ``notices`` is a list, a :class:`Notice` (count and first line numbers) is appended to
    it for each, so that the caller can tell the user.

    ``source`` is a path (str or Path), bytes, or a binary file-like object; ``name`` is what
    errors call it (default: the path, or ``"<upload>"``). Raises :class:`TrecFormatError`
    listing every problem, including input larger than ``max_bytes`` (counted after
    decompression; reading stops there). ``columns`` keeps only those columns, in that order
    (scoring needs qid, docno and score): every line is still checked in full, but the other
    columns are never held for the whole file, which saves memory on large runs.
    """
    return _read(RUN, source, name, max_errors, max_bytes, columns, notices)


def read_qrels(
    source,
    *,
    name: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
    columns: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Read a qrels file into a frame with columns qid, iteration, docno, grade, in file order.

    Arguments and errors as for :func:`read_run`.
    """
    return _read(QRELS, source, name, max_errors, max_bytes, columns, None)


def iter_run(
    source,
    *,
    name: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
) -> Iterator[RunLine]:
    """Yield the valid lines of a run file one by one while reading it in chunks.

    The :class:`TrecFormatError` listing every problem is raised only once the input is
    exhausted, after the valid lines have been yielded: a caller that stores lines as they come
    must not commit them until the generator has finished. Memory grows with the number of
    distinct (qid, docno) pairs, which duplicate detection has to remember.
    """
    return _iterate(RUN, source, name, max_errors, max_bytes)


def iter_qrels(
    source,
    *,
    name: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
) -> Iterator[QrelsLine]:
    """Yield the valid lines of a qrels file; see :func:`iter_run` for the contract."""
    return _iterate(QRELS, source, name, max_errors, max_bytes)


def _read(fmt: Format, source, name, max_errors, max_bytes, columns, notices) -> pl.DataFrame:
    name = display_name(source, name)
    check_max_errors(max_errors)
    columns = _checked_columns(fmt, columns)
    with whole_input(source, name=name, max_bytes=max_bytes) as data:
        # Path 1 declines files with anything to notice (extra fields, a rank it cannot read).
        frame = None if len(data) <= FEW_BYTES else read_canonical(fmt, data, columns)
        if frame is None:
            frame = read_declined(fmt, data, name, max_errors, columns, notices)
    return frame


def read_declined(
    fmt: Format,
    data,
    name: str,
    max_errors: int,
    columns: tuple[str, ...],
    notices: list[Notice] | None,
) -> pl.DataFrame:
    """Paths 2 and 3 for ``data`` (bytes or a memory map) that path 1 declined: the frame
    (``columns``), with its notices appended to ``notices``, or TrecFormatError."""
    log = NoticeLog(name)
    frame = None
    if len(data) > FEW_DECLINED_BYTES:
        frame = read_any_layout(fmt, data, name, max_errors, log)
    if frame is None:
        log = NoticeLog(name)
        frame = read_line_by_line(fmt, data, name, max_errors, log)
    if notices is not None:
        notices.extend(log.notices())
    return frame.select(columns)


def _checked_columns(fmt: Format, columns) -> tuple[str, ...]:
    if columns is None:
        return fmt.columns
    if isinstance(columns, str) or not all(isinstance(column, str) for column in columns):
        raise ValueError(f"columns must be a sequence of column names, got {columns!r}")
    columns = tuple(columns)
    unknown = [column for column in columns if column not in fmt.columns]
    if unknown or not columns or len(set(columns)) < len(columns):
        raise ValueError(
            f"columns must name distinct {fmt.kind} columns ({', '.join(fmt.columns)}), "
            f"got {columns!r}"
        )
    return columns


def _iterate(fmt: Format, source, name, max_errors, max_bytes) -> Iterator:
    name = display_name(source, name)
    check_max_errors(max_errors)
    check_max_bytes(max_bytes)
    lines = iter_lines(source, name=name, max_bytes=max_bytes)

    def generate():
        log = ErrorLog(name, max_errors)
        try:
            yield from parse(fmt, lines, log)
        except TrecFormatError as error:  # the input as a whole: bad gzip, too large
            log.fail(error.errors[0].message)
        except CheckingStopped:
            pass
        log.raise_if_any()

    return generate()


def read_line_by_line(
    fmt: Format, data, name: str, max_errors: int, notices: NoticeLog | None = None
) -> pl.DataFrame:
    """Path 3: the reference parser over the whole input (bytes or a memory map)."""
    columns: list[list] = [[] for _ in fmt.columns]
    log = ErrorLog(name, max_errors)
    try:
        for record in parse(fmt, split_lines(drop_bom(slices(data))), log, notices):
            for values, value in zip(columns, record, strict=False):
                values.append(value)
    except CheckingStopped:
        pass
    log.raise_if_any()
    return pl.DataFrame(dict(zip(fmt.columns, columns, strict=True)), schema=fmt.schema)
