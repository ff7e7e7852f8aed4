"""A run file read a few million lines at a time, cut between topics, for scoring runs too
large to hold whole (tens of millions of lines) in bounded memory.

    for chunk in iter_run_topics("run.txt", chunk_lines=2_000_000):
        ...  # qid, docno, score, tag of whole topics, in file order

Each chunk holds every line of its topics, so per-topic work on one chunk needs no other. It
reads the way path 1 of the package docstring does (polars' CSV reader on 16 MiB pieces, after
the same byte checks, parsed a few at a time on worker threads), so memory holds one chunk and a
few pieces, not the file.

It only ever says yes for certain: a file that path 1 would decline (unusual layouts, anything
to notice or to report as an error, including a repeated (qid, docno) pair), or whose topics
are not each in one block of consecutive lines (a topic that comes back after another), makes
the generator raise :class:`NotInTopicBlocks`, possibly after some chunks have been yielded.
The caller then reads the file whole (evaluation.trec.read_run), which reports every error
exactly. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import polars as pl

from .canonical import _UNUSUAL_LAYOUT, PIECE_BYTES, parsed_pieces
from .grammar import RUN
from .source import whole_input

__all__ = ["CHUNK_LINES", "NotInTopicBlocks", "iter_run_topics", "regroup_topics"]

CHUNK_LINES = 2_000_000
_HEAD_BYTES = 4096


class NotInTopicBlocks(Exception):
    """The file cannot be read in chunks of whole topics with certainty: read it whole."""


def iter_run_topics(
    source,
    *,
    name: str | None = None,
    chunk_lines: int = CHUNK_LINES,
    columns: Sequence[str] = ("qid", "docno", "score", "tag"),
    piece_bytes: int | None = None,
) -> Iterator[pl.DataFrame]:
    """The run's lines (``columns``, which must include qid and docno) in chunks of whole
    topics of about ``chunk_lines`` lines (a topic longer than that makes a longer chunk), in
    file order. Raises NotInTopicBlocks as the module says."""
    if chunk_lines < 1:
        raise ValueError(f"chunk_lines must be at least 1, got {chunk_lines!r}")
    columns = tuple(columns)
    if "qid" not in columns or "docno" not in columns:
        raise ValueError(f"columns must include qid and docno, got {columns!r}")
    schema = dict(zip(RUN.raw_names, RUN.raw_types, strict=True))
    with whole_input(source, name=name) as data:
        if not len(data):
            raise NotInTopicBlocks
        head = data[:_HEAD_BYTES]
        if _UNUSUAL_LAYOUT.search(head[: head.rfind(b"\n") + 1]):
            raise NotInTopicBlocks
        blocks = _TopicBlocks(chunk_lines)
        for parsed in parsed_pieces(RUN, data, schema, columns, piece_bytes or PIECE_BYTES):
            if parsed is None:
                raise NotInTopicBlocks
            yield from blocks.add(*parsed)
        yield from blocks.finish()


def regroup_topics(
    frames: Iterable[pl.DataFrame], *, chunk_lines: int = CHUNK_LINES
) -> Iterator[pl.DataFrame]:
    """Frames of consecutive lines of a checked run (a stored one, say, read in batches) as
    chunks of whole topics of about ``chunk_lines`` lines. Raises NotInTopicBlocks when a
    topic comes back after another (possibly after some chunks have been yielded)."""
    if chunk_lines < 1:
        raise ValueError(f"chunk_lines must be at least 1, got {chunk_lines!r}")
    blocks = _TopicBlocks(chunk_lines, check_pairs=False)
    for frame in frames:
        yield from blocks.add(frame, None)
    yield from blocks.finish()


class _TopicBlocks:
    """Pieces' rows gathered into chunks cut between topics, checking on the way that every
    topic is one block of lines and that no (qid, docno) pair repeats within a topic."""

    def __init__(self, chunk_lines: int, *, check_pairs: bool = True) -> None:
        self.chunk_lines = chunk_lines
        self.check_pairs = check_pairs
        self.frames: list[pl.DataFrame] = []
        self.hashes: list[np.ndarray] = []
        self.lines = 0
        self.seen: set[str] = set()  # topics whose block has started
        self.open: str | None = None  # the topic of the last line so far
        self.open_lines = 0  # its lines gathered so far
        self.any_lines = False

    def add(self, frame: pl.DataFrame, hashes: np.ndarray | None) -> Iterator[pl.DataFrame]:
        if not frame.height:
            return
        self.any_lines = True
        runs = frame.get_column("qid").rle().struct.unnest()
        qids = runs.get_column("value").to_list()
        starting = qids[1:] if qids[0] == self.open else qids
        if len(set(starting)) < len(starting) or not self.seen.isdisjoint(starting):
            raise NotInTopicBlocks
        self.seen.update(starting)
        last = int(runs.get_column("len")[-1])
        self.open_lines = self.open_lines + last if not starting else last
        self.open = qids[-1]
        self.frames.append(frame)
        if self.check_pairs:
            self.hashes.append(hashes)
        self.lines += frame.height
        if self.lines >= self.chunk_lines and self.lines > self.open_lines:
            # Everything but the open topic's lines, which may go on in the next piece.
            yield self._take(self.lines - self.open_lines)

    def finish(self) -> Iterator[pl.DataFrame]:
        if not self.any_lines and self.check_pairs:
            raise NotInTopicBlocks  # nothing but blank lines and comments: reported whole
        if self.lines:
            yield self._take(self.lines)

    def _take(self, count: int) -> pl.DataFrame:
        """The first ``count`` rows gathered so far, checked for repeated pairs."""
        frame = pl.concat(self.frames, rechunk=False) if len(self.frames) > 1 else self.frames[0]
        self.frames = [frame.slice(count)] if count < frame.height else []
        self.lines = frame.height - count
        if self.check_pairs:
            hashes = np.concatenate(self.hashes) if len(self.hashes) > 1 else self.hashes[0]
            self.hashes = [hashes[count:].copy()] if count < frame.height else []
            taken = np.sort(hashes[:count])
            if (taken[1:] == taken[:-1]).any():
                raise NotInTopicBlocks  # a repeated pair, or a mere hash collision: read whole
        return frame.slice(0, count)
