"""Path 1 of the package docstring: polars' CSV reader on files in the usual layouts, a piece
at a time, after byte-level checks that make its result exact (or decline the file). Run
pieces in the plainest layout are read by runscan.c instead (native.py), where it is built."""

from __future__ import annotations

import collections
import mmap
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
import polars as pl

from . import native
from .grammar import Format, pair_hash
from .source import BOM, MAX_LINE_BYTES, has_long_line

__all__ = ["AHEAD", "PIECE_BYTES", "ParsedPieces", "joined_pieces", "read_canonical"]

# Polars parses one piece of about this size at a time: memory stays bounded (a piece's bytes
# and its all-column frame are dropped once checked), and the byte checks scan a piece while
# it is in the processor's cache.
PIECE_BYTES = 16 << 20
# Pieces read at once (two cores), and pieces read ahead of the one the caller has (see
# ParsedPieces): enough to keep both cores busy while the caller scores a chunk of topics,
# each holding a piece's frame (about 25 MB for 16 MiB of run lines).
_WORKERS = 2
AHEAD = 6
# Runs of whitespace, or whitespace at the start or end of a line; looked for in the first
# _HEAD_BYTES only (a regular expression over 64 KiB already costs milliseconds).
_UNUSUAL_LAYOUT = re.compile(rb"[ \t\x0b\x0c]{2}|^[ \t\x0b\x0c]|[ \t\x0b\x0c]\r?$", re.MULTILINE)
_HEAD_BYTES = 4096
_TABS_TO_SPACES = bytes.maketrans(b"\t\x0b\x0c", b"   ")
# Columns that usually hold one value on every line (the run's tag, the qrels' iteration).
_OFTEN_CONSTANT = ("tag", "iteration")


def read_canonical(
    fmt: Format, data, columns: tuple[str, ...] | None = None, piece_bytes: int | None = None
) -> pl.DataFrame | None:
    """The frame of a valid file in the usual layouts (``columns`` of it, default all), or
    None when not sure.

    Polars' CSV reader splits on single spaces (or single tabs, in pieces without spaces) and
    parses the numbers. That is sound only without long lines, NUL bytes, CR other than in CRLF
    line ends (polars trims some whitespace around numbers), a byte-order mark polars would
    drop (it drops one at the start of what it is given), and with one separator byte, so
    tabs, VT and FF in pieces that also hold spaces are first turned into spaces (1:1, so the
    lines keep their lengths). Blank lines come out as all-null rows; any other null means a
    field was missing or empty (runs of whitespace, leading whitespace): the next path's
    business. Every field is parsed, also those not in ``columns``, so that every line is
    checked. Repeated (qid, docno) pairs are found by sorting 64-bit hashes of the pairs; any
    repeated hash, even a mere collision, leaves the file to the next path.
    """
    if not len(data):
        return None
    head = data[:_HEAD_BYTES]
    if _UNUSUAL_LAYOUT.search(head[: head.rfind(b"\n") + 1]):
        return None  # runs of whitespace in the first lines: bound to fail, skip the attempt
    columns = fmt.columns if columns is None else columns
    schema = dict(zip(fmt.raw_names, fmt.raw_types, strict=True))
    frames, hashes = [], []
    with ParsedPieces(fmt, data, schema, columns, piece_bytes or PIECE_BYTES) as pieces:
        for parsed in pieces:
            if parsed is None:
                return None
            frames.append(parsed[0])
            hashes.append(parsed[1])
    return joined_pieces(frames, hashes)


def joined_pieces(frames: list[pl.DataFrame], hashes: list[np.ndarray]) -> pl.DataFrame | None:
    """The frame of a whole file from its pieces' frames and pair hashes (ParsedPieces), or
    None when there is no line at all or a (qid, docno) pair may repeat. Empties ``hashes``."""
    if not any(frame.height for frame in frames):
        return None
    pairs = np.concatenate(hashes)
    hashes.clear()
    pairs.sort()
    if (pairs[1:] == pairs[:-1]).any():
        return None
    return frames[0] if len(frames) == 1 else pl.concat(frames, rechunk=False)


class ParsedPieces:
    """Each piece's frame (``columns``) and pair hashes (``_parsed``), in file order, as an
    iterator; None in place of the first piece polars might not read exactly, and nothing
    after it. With ``pairs_within``, also None for a piece in which a pair hash repeats (the
    workers sort each piece's hashes): the caller then only has to look for pairs repeated
    across pieces.

    Worker threads copy, check and parse the pieces, in file order, up to ``ahead`` pieces
    (default ``AHEAD``) beyond the one the caller has, from the moment this is made, not
    only once the first piece is asked for: the caller can do other work meanwhile (import
    the scoring engine, score the pieces it has). Polars parses (and hashes) without the
    interpreter lock, so the workers keep both cores busy; memory stays bounded by pieces,
    not the file. ``close`` (or leaving a ``with`` block) stops them, after the pieces being
    parsed, so the data may be let go then.
    """

    def __init__(
        self,
        fmt: Format,
        data,
        schema: dict,
        columns: tuple[str, ...],
        piece_bytes: int,
        ahead: int | None = None,
        *,
        pairs_within: bool = False,
    ) -> None:
        self._parse = (fmt, data, schema, columns, pairs_within)
        self._ahead = AHEAD if ahead is None else ahead
        self._ends = _pieces(data, piece_bytes)
        self._pending: collections.deque = collections.deque()
        self._done = False
        self._pool = None
        if len(data) > piece_bytes:  # one piece has nothing to overlap: parsed when asked
            self._pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="trec-piece")
            self._fill()

    def _fill(self) -> None:
        # Before a piece is handed out, so the workers go on while the caller works.
        fmt, data, schema, columns, pairs_within = self._parse
        while len(self._pending) <= self._ahead:
            start_end = next(self._ends, None)
            if start_end is None:
                return
            start, end = start_end
            self._pending.append(
                self._pool.submit(
                    _checked_and_parsed, fmt, data, start, end, schema, columns, pairs_within
                )
            )

    def __iter__(self) -> Iterator[tuple[pl.DataFrame, np.ndarray] | None]:
        return self

    def __next__(self) -> tuple[pl.DataFrame, np.ndarray] | None:
        if self._done:
            raise StopIteration
        try:
            if self._pool is None:
                start_end = next(self._ends, None)
                if start_end is None:
                    raise StopIteration
                fmt, data, schema, columns, pairs_within = self._parse
                parsed = _checked_and_parsed(fmt, data, *start_end, schema, columns, pairs_within)
            else:
                if not self._pending:
                    raise StopIteration
                parsed = self._pending.popleft().result()
                if parsed is not None:
                    self._fill()
        except BaseException:
            self.close()
            raise
        if parsed is None:
            self.close()  # nothing after a piece polars might misread
        return parsed

    def close(self) -> None:
        """Stop the workers: pieces not yet begun are dropped; this returns once the pieces
        being parsed are done (they read the data)."""
        self._done = True
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def __enter__(self) -> ParsedPieces:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _checked(data, start: int, end: int) -> _Piece | None:
    """The piece of ``data`` from ``start`` to ``end``, copied and checked (``_scanned``)."""
    raw = data[start:end]
    _release(data, start, end)
    # Long lines are looked for piece by piece (pieces end at line ends), in bytes just
    # copied, rather than in the whole file first: one pass over the file fewer, and a
    # memory map's pages never all count in this process's memory at once.
    if has_long_line(raw, start=start == 0):
        return None
    return _scanned(raw, first=start == 0)


def _checked_and_parsed(fmt, data, start, end, schema, columns, pairs_within=False):
    parsed = _natively_parsed(fmt, data, start, end, columns)
    if parsed is None:
        piece = _checked(data, start, end)
        parsed = None if piece is None else _parsed(fmt, piece, schema, columns)
    if pairs_within and parsed is not None and _repeats(parsed[1]):
        return None
    return parsed


def _natively_parsed(fmt, data, start, end, columns) -> tuple[pl.DataFrame, np.ndarray] | None:
    """What _parsed gives for a run piece in the usual layout, read by runscan.c in place (no
    copy, no byte scans: it declines whatever they look for), or None when it is not built or
    declines the piece (the caller then reads it the polars way)."""
    if fmt.kind != "run" or not {"qid", "docno"} <= set(columns):
        return None
    frame = native.scan_run(data, start, end, columns, MAX_LINE_BYTES)
    if frame is None:
        return None
    _release(data, start, end)
    return frame, frame.select(pair_hash()).to_series().to_numpy()


def _repeats(hashes: np.ndarray) -> bool:
    """Whether a value repeats in ``hashes`` (sorted here, a copy)."""
    ordered = np.sort(hashes)
    return bool((ordered[1:] == ordered[:-1]).any())


def _pieces(data, size: int) -> Iterator[tuple[int, int]]:
    """(start, end) of consecutive pieces of at most ``size`` bytes, each ending after a
    newline (the last one at the end of the data); a longer line makes a longer piece."""
    start, length = 0, len(data)
    while start < length:
        end = length
        if length - start > size:
            newline = data.rfind(b"\n", start, start + size)
            if newline < 0:  # a line longer than the piece: the piece ends with it
                newline = data.find(b"\n", start + size)
            if newline >= 0:
                end = newline + 1
        yield start, end
        start = end


def _release(data, start: int, end: int) -> None:
    """Let the kernel drop a memory map's pages read so far from this process (the file stays
    in the page cache): otherwise the whole file ends up counted in the process's memory."""
    if isinstance(data, mmap.mmap):
        low, high = start - start % mmap.PAGESIZE, end - end % mmap.PAGESIZE
        if high > low:
            data.madvise(mmap.MADV_DONTNEED, low, high - low)


class _Piece(NamedTuple):
    data: bytes  # whole lines, no leading blank line; empty when there is nothing but those
    separator: str
    comments: bool  # whether a line may be a comment


def _scanned(piece: bytes, *, first: bool) -> _Piece | None:
    """A piece ready for polars, or None when polars might not read it exactly."""
    if first:
        piece = piece.removeprefix(BOM)
    if piece.find(b"\x00") >= 0:
        return None
    # Counting CRLF is a slow two-byte search: only for pieces that hold CR at all.
    if piece.find(b"\r") >= 0 and piece.count(b"\r") != piece.count(b"\r\n"):
        return None
    # Polars counts the fields of the first line and fails when it is blank; every CR is part
    # of a CRLF by now, so these are whole blank lines.
    piece = piece.lstrip(b"\r\n")
    if piece.startswith(BOM):  # polars would drop it; here it belongs to the first field
        return None
    separator = " "
    if piece.find(b"\x0b") >= 0 or piece.find(b"\x0c") >= 0:
        piece = piece.translate(_TABS_TO_SPACES)
    elif piece.find(b"\t") >= 0:
        if piece.find(b" ") < 0:
            separator = "\t"
        else:
            piece = piece.translate(_TABS_TO_SPACES)
    return _Piece(piece, separator, piece.find(b"#") >= 0)


def _parsed(
    fmt: Format, piece: _Piece, schema: dict, columns: tuple[str, ...]
) -> tuple[pl.DataFrame, np.ndarray] | None:
    """A piece's frame (``columns`` of it) and the hashes of its (qid, docno) pairs, or None
    when a line is not valid or polars might have read it wrongly."""
    if not piece.data:
        return pl.DataFrame(schema=schema).select(columns), np.empty(0, dtype=np.uint64)
    try:
        frame = pl.read_csv(
            piece.data,
            has_header=False,
            separator=piece.separator,
            quote_char=None,
            # Looking for comments costs polars about a fifth of its time: only when needed.
            comment_prefix="#" if piece.comments else None,
            schema=schema,
            raise_if_empty=False,
            glob=False,
        )
    except pl.exceptions.PolarsError:
        return None
    if frame.null_count().sum_horizontal().item():
        frame = frame.filter(~pl.all_horizontal(pl.all().is_null()))
        if frame.null_count().sum_horizontal().item():
            return None
    if fmt.floats and frame.height:
        finite = pl.all_horizontal(pl.col(fmt.raw_names[i]).is_finite().all() for i in fmt.floats)
        if not frame.select(finite).item():
            return None
    hashes = frame.select(pair_hash()).to_series().to_numpy()
    return _constants_folded(frame.select(columns)), hashes


def _constants_folded(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with each often-constant String column that holds one value throughout made a
    constant column, which polars keeps as one value instead of a view per row (16 bytes a
    line)."""
    for name in _OFTEN_CONSTANT:
        if name in frame.columns and frame.height:
            column = frame.get_column(name)
            value = column[0]
            if (column == value).all():
                frame = frame.with_columns(pl.lit(value, dtype=pl.String).alias(name))
    return frame
