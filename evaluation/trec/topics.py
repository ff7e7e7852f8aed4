"""A run file read in chunks of whole topics, cut between topics: for scoring a chunk while
worker threads read the next pieces (evaluate scores every run file this way), and for runs too
large to hold whole (tens of millions of lines) in bounded memory.

    for chunk in iter_run_topics("run.txt", chunk_lines=2_000_000):
        ...  # qid, docno, score, tag of whole topics, in file order

Each chunk holds every line of its topics, so per-topic work on one chunk needs no other. It
reads the way path 1 of the package docstring does (polars' CSV reader on 16 MiB pieces, after
the same byte checks, read a few pieces ahead on worker threads), so memory holds one chunk and
a few pieces, not the file.

It only ever says yes for certain: a file that path 1 would decline (unusual layouts, anything
to notice or to report as an error, including a repeated (qid, docno) pair), or whose topics
are not each in one block of consecutive lines (a topic that comes back after another), makes
the generator raise :class:`NotInTopicBlocks`, possibly after some chunks have been yielded.
The caller then reads the file whole, which reports every error exactly: read_run, or
:meth:`RunTopics.read_whole`, which with ``keep`` goes on from the pieces already read. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import polars as pl

from .canonical import _UNUSUAL_LAYOUT, PIECE_BYTES, ParsedPieces, joined_pieces
from .errors import MAX_ERRORS, Notice
from .grammar import RUN
from .reading import read_declined, read_run
from .source import display_name, whole_input

__all__ = ["CHUNK_LINES", "NotInTopicBlocks", "RunTopics", "iter_run_topics", "regroup_topics"]

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
    reader = RunTopics(
        source, name=name, chunk_lines=chunk_lines, columns=columns, piece_bytes=piece_bytes
    )
    with reader:
        yield from reader


class RunTopics:
    """A run file's chunks of whole topics (iterate it, inside ``with``), as iter_run_topics
    gives them; and when it raises NotInTopicBlocks, the whole file from ``read_whole``.

    With ``keep``, every piece read is kept until the end, so that ``read_whole`` goes on
    from where the chunks stopped instead of reading the file again: a file whose topics
    are not in blocks is then read once, as read_run reads it. Without, memory holds a chunk
    and a few pieces (for runs too large to hold whole), and ``read_whole`` starts over.
    """

    def __init__(
        self,
        source,
        *,
        name: str | None = None,
        chunk_lines: int = CHUNK_LINES,
        columns: Sequence[str] = ("qid", "docno", "score", "tag"),
        piece_bytes: int | None = None,
        keep: bool = False,
    ) -> None:
        if chunk_lines < 1:
            raise ValueError(f"chunk_lines must be at least 1, got {chunk_lines!r}")
        columns = tuple(columns)
        if "qid" not in columns or "docno" not in columns:
            raise ValueError(f"columns must include qid and docno, got {columns!r}")
        self.source, self.name = source, display_name(source, name)
        self.chunk_lines, self.columns, self.keep = chunk_lines, columns, keep
        self.piece_bytes = piece_bytes or PIECE_BYTES
        self._input = None
        self._data = None
        self._started = False
        self._pieces: ParsedPieces | None = None
        self._kept: list[tuple[pl.DataFrame, np.ndarray]] | None = [] if keep else None
        self._declined = False  # path 1 declined a piece: read_whole takes paths 2 and 3
        self.finished = False  # every chunk was given: the file is valid

    def __enter__(self) -> RunTopics:
        # Entering an entered reader (one started by someone else, say) changes nothing.
        if self._input is None:
            data_input = whole_input(self.source, name=self.name)
            self._data = data_input.__enter__()
            self._input = data_input
        return self

    def __exit__(self, *exc) -> None:
        if self._pieces is not None:
            self._pieces.close()  # stops the workers
        if self._input is not None:
            data_input, self._input = self._input, None
            data_input.__exit__(*exc)

    def start(self) -> None:
        """Begin reading (inside ``with``): the worker threads parse the first pieces before
        any chunk is asked for, while the caller does something else."""
        if self._data is None:
            raise RuntimeError("start a RunTopics inside its with block")
        if self._pieces is not None or self._declined:
            return
        data = self._data
        head = data[:_HEAD_BYTES]
        if not len(data) or _UNUSUAL_LAYOUT.search(head[: head.rfind(b"\n") + 1]):
            self._declined = True
            return
        schema = dict(zip(RUN.raw_names, RUN.raw_types, strict=True))
        # Kept pieces stay in memory anyway: then the workers read on without waiting for
        # the caller, so no core idles while a chunk is scored.
        self._pieces = ParsedPieces(
            RUN,
            data,
            schema,
            self.columns,
            self.piece_bytes,
            ahead=len(data) // self.piece_bytes + 1 if self.keep else None,
            pairs_within=True,
        )

    def __iter__(self) -> Iterator[pl.DataFrame]:
        if self._data is None:
            raise RuntimeError("iterate a RunTopics inside its with block")
        if self._started:
            raise RuntimeError("a RunTopics is iterated once")
        self._started = True
        self.start()
        if self._declined:
            raise NotInTopicBlocks
        blocks = _TopicBlocks(self.chunk_lines)
        for parsed in self._pieces:
            if parsed is None:
                self._declined = True
                raise NotInTopicBlocks
            if self._kept is not None:
                self._kept.append(parsed)
            yield from blocks.add(*parsed)
        yield from blocks.finish()
        self.finished = True

    def read_whole(self, notices: list[Notice] | None = None) -> pl.DataFrame:
        """What read_run(source, columns=columns, notices=notices) returns (or raises): once
        iterating has raised NotInTopicBlocks, or instead of iterating. With ``keep`` it goes
        on from the pieces already read."""
        if self._kept is None or (self._pieces is None and not self._declined):
            if self._pieces is not None:
                self._pieces.close()  # its pieces are not kept: read again from the start
            return read_run(self.source, name=self.name, columns=self.columns, notices=notices)
        frame = None
        kept, self._kept = self._kept, []
        if not self._declined:
            frames = [parsed[0] for parsed in kept]
            hashes = [parsed[1] for parsed in kept]
            del kept
            for parsed in self._pieces:
                if parsed is None:
                    break
                frames.append(parsed[0])
                hashes.append(parsed[1])
            else:
                frame = joined_pieces(frames, hashes)
        # The pieces read are let go before the other paths read the file again.
        frames = hashes = kept = None
        if frame is None:
            frame = read_declined(RUN, self._data, self.name, MAX_ERRORS, self.columns, notices)
        return frame


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
    topic is one block of lines and, with ``check_pairs``, that no (qid, docno) pair repeats
    within a topic: the pieces come checked within themselves (parsed_pieces' pairs_within),
    so only a topic that goes on from one piece into the next is looked at here."""

    def __init__(self, chunk_lines: int, *, check_pairs: bool = True) -> None:
        self.chunk_lines = chunk_lines
        self.check_pairs = check_pairs
        self.frames: list[pl.DataFrame] = []
        self.lines = 0
        self.seen: set[str] = set()  # topics whose block has started
        self.open: str | None = None  # the topic of the last line so far
        self.open_lines = 0  # its lines gathered so far
        self.open_hashes: list[np.ndarray] = []  # their pair hashes (with check_pairs)
        self.any_lines = False

    def add(self, frame: pl.DataFrame, hashes: np.ndarray | None) -> Iterator[pl.DataFrame]:
        if not frame.height:
            return
        self.any_lines = True
        runs = frame.get_column("qid").rle().struct.unnest()
        qids = runs.get_column("value").to_list()
        going_on = qids[0] == self.open
        starting = qids[1:] if going_on else qids
        if len(set(starting)) < len(starting) or not self.seen.isdisjoint(starting):
            raise NotInTopicBlocks
        self.seen.update(starting)
        last = int(runs.get_column("len")[-1])
        if self.check_pairs:
            self._check_pairs(hashes, int(runs.get_column("len")[0]) if going_on else 0)
            self.open_hashes = [*self.open_hashes, hashes] if not starting else [hashes[-last:]]
        self.open_lines = self.open_lines + last if not starting else last
        self.open = qids[-1]
        self.frames.append(frame)
        self.lines += frame.height
        if self.lines >= self.chunk_lines and self.lines > self.open_lines:
            # Everything but the open topic's lines, which may go on in the next piece.
            yield self._take(self.lines - self.open_lines)

    def _check_pairs(self, hashes: np.ndarray, going_on: int) -> None:
        """The open topic's lines before this piece and its first ``going_on`` lines in it
        must not repeat a pair hash (each piece has none repeated within it)."""
        if going_on:
            pairs = np.sort(np.concatenate([*self.open_hashes, hashes[:going_on]]))
            if (pairs[1:] == pairs[:-1]).any():
                raise NotInTopicBlocks  # a repeated pair, or a mere hash collision: read whole

    def finish(self) -> Iterator[pl.DataFrame]:
        if not self.any_lines and self.check_pairs:
            raise NotInTopicBlocks  # nothing but blank lines and comments: reported whole
        if self.lines:
            yield self._take(self.lines)

    def _take(self, count: int) -> pl.DataFrame:
        """The first ``count`` rows gathered so far."""
        frame = pl.concat(self.frames, rechunk=False) if len(self.frames) > 1 else self.frames[0]
        self.frames = [frame.slice(count)] if count < frame.height else []
        self.lines = frame.height - count
        return frame.slice(0, count)
