"""Step 3 of evaluation/measures/ranking.py: which lines of a run are judged. Each line's
(topic, 64-bit docno hash) is looked up in a table of the judgments laid out topic by topic
(open addressing, sized per topic), and every match is confirmed by comparing the docno
strings, so a hash collision can never judge a line. Pure: numpy and polars."""

import collections
from collections.abc import Iterable

import numpy as np
import polars as pl

# Columns of up to this many lines are read in Python rather than by polars (here, in
# ranking.QidBlocks and in scoring): there each polars call costs more than the work.
FEW = 512


def few(*lengths: int) -> bool:
    """Whether columns of these lengths, together, are few enough to read in Python."""
    return sum(lengths) <= FEW


_SPREAD = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it mixes topic numbers
_HASH_SEED = 0x7EC


def _docno_hashes(docno: pl.Series) -> np.ndarray:
    """A 64-bit hash of each docno (equal strings hash alike), a slice at a time."""
    hashes = np.empty(docno.len(), dtype=np.uint64)
    for start in range(0, docno.len(), _SLICE):
        piece = docno.slice(start, _SLICE).hash(_HASH_SEED).to_numpy()
        hashes[start : start + piece.size] = piece
    return hashes


_SLICE = 1 << 20


def series_slices(series: pl.Series):
    """(offset, numpy array) for consecutive slices of a series: a series made of many
    chunks is copied into one array a slice at a time instead of whole."""
    for start in range(0, series.len(), _SLICE):
        yield start, series.slice(start, _SLICE).to_numpy()


def judged_lines(
    judgments: pl.DataFrame, topics: pl.Series, docno: pl.Series, line_topic: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The lines whose (topic, docno) is judged, in line order, and their grades.

    Every line's docno is hashed once and looked up in a table of the judged documents'
    hashes (see JudgedTable); a line whose topic and 64-bit hash match a judgment is judged
    once the docno strings agree too, so a mere hash collision never counts.
    """
    if few(judgments.height, docno.len()):
        return _few_judged_lines(judgments, topics, docno, line_topic)
    judged_docno = judgments.get_column("docno")
    judged_topic = judgments.get_column("topic").to_numpy()
    judged_hash = _docno_hashes(judged_docno)
    _reject_repeated_judgments(judgments, judged_topic, judged_hash, topics)
    table = JudgedTable(judged_topic, judged_hash, topics.len())
    line, judgment = table.lookup(line_topic, docno)
    same = (docno.gather(line) == judged_docno.gather(judgment)).to_numpy()
    line, judgment = line[same], judgment[same]
    return line, judgments.get_column("grade").to_numpy()[judgment]


def _few_judged_lines(
    judgments: pl.DataFrame, topics: pl.Series, docno: pl.Series, line_topic: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """judged_lines for a few lines and judgments: (topic, docno) looked up in a dict."""
    topic, judged_docno = judgments.get_column("topic"), judgments.get_column("docno")
    keys = list(zip(topic.to_list(), judged_docno.to_list(), strict=True))
    index: dict[tuple[int, str], int] = {}
    for number, key in enumerate(keys):
        index.setdefault(key, number)
    if len(index) < len(keys):
        counts = collections.Counter(keys)
        topic, repeated = next(key for key in keys if counts[key] > 1)
        raise ValueError(f"qrels: topic {topics[topic]!r} judges document {repeated!r} twice")
    found = [
        (line, index[key])
        for line, key in enumerate(zip(line_topic.tolist(), docno.to_list(), strict=True))
        if key in index
    ]
    line = np.array([line for line, _ in found], dtype=np.int64)
    judgment = np.array([number for _, number in found], dtype=np.int64)
    return line, judgments.get_column("grade").to_numpy()[judgment]


class JudgedTable:
    """Judgments by (topic, docno hash), for looking up millions of run lines.

    A polars join, or a binary search, of every run line against the judgments costs several
    random memory accesses per line. Here each topic owns a contiguous region of at least
    eight slots per judgment, and a judgment sits in its topic's region at the slot its hash
    picks (one judgment: its index; several: a marker). Run lines come grouped by topic, so
    their lookups stay within one small region at a time and hit the cache; only the few
    lines whose slot is shared are matched by a join.
    """

    _SHARED = -2

    def __init__(self, topic: np.ndarray, hashes: np.ndarray, n_topics: int) -> None:
        self.topic, self.hashes = topic, hashes
        per_topic = np.bincount(topic, minlength=n_topics)
        size = np.left_shift(1, _bit_length(np.maximum(per_topic, 1) * 8 - 1))
        self.mask = (size - 1).astype(np.uint64)
        self.base = np.cumsum(size) - size
        self.slot = self._slots(topic, hashes)
        self.table = np.full(int(size.sum()), -1, dtype=np.int32)
        self.table[self.slot] = np.arange(topic.size, dtype=np.int32)
        ordered = np.sort(self.slot)
        self.table[ordered[1:][ordered[1:] == ordered[:-1]]] = self._SHARED

    def _slots(self, topic: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        slot = (hashes & self.mask[topic]).view(np.int64)
        slot += self.base[topic]
        return slot

    def lookup(self, topic: np.ndarray, docno: pl.Series) -> tuple[np.ndarray, np.ndarray]:
        """The lines (indices into topic and docno) whose topic and docno hash equal a
        judgment's, in line order, and that judgment's index. The docnos are hashed a slice
        at a time, which keeps the temporaries small and in the cache."""
        hashes = (
            _docno_hashes(docno.slice(start, _SLICE)) for start in range(0, topic.size, _SLICE)
        )
        return self.lookup_hashes(topic, hashes)

    def lookup_hashes(
        self, topic: np.ndarray, hash_slices: Iterable[np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """As lookup, for the lines' docno hashes given in consecutive slices."""
        # Empty to start with: a run with no line of a scored topic has no slice at all.
        lines, judgments, shared = [np.empty(0, np.int64)], [np.empty(0, np.int64)], []
        start = 0
        for hashes in hash_slices:
            piece_topic = topic[start : start + hashes.size]
            found = self.table[self._slots(piece_topic, hashes)]
            line = np.flatnonzero(found >= 0)
            judgment = found[line].astype(np.int64)
            # Regions are per topic, so a slot's judgment has the line's topic.
            hit = self.hashes[judgment] == hashes[line]
            lines.append(line[hit] + start)
            judgments.append(judgment[hit])
            line = np.flatnonzero(found == self._SHARED)
            if line.size:
                shared.append((line + start, piece_topic[line], hashes[line]))
            start += hashes.size
        if shared:
            joined = self._join(*(np.concatenate(parts) for parts in zip(*shared, strict=True)))
            lines.append(joined[0])
            judgments.append(joined[1])
        line, judgment = np.concatenate(lines), np.concatenate(judgments)
        if shared:
            order = np.argsort(line, kind="stable")
            line, judgment = line[order], judgment[order]
        return line, judgment

    def _join(self, line: np.ndarray, topic: np.ndarray, hashes: np.ndarray):
        lines = pl.LazyFrame({"topic": topic.astype(np.int64), "hash": hashes, "line": line})
        shared = np.flatnonzero(self.table[self.slot] == self._SHARED)
        judged = pl.LazyFrame(
            {
                "topic": self.topic[shared].astype(np.int64),
                "hash": self.hashes[shared],
                "judgment": shared.astype(np.int64),
            }
        )
        pairs = lines.join(judged, on=["topic", "hash"]).collect()
        return pairs.get_column("line").to_numpy(), pairs.get_column("judgment").to_numpy()


def _bit_length(values: np.ndarray) -> np.ndarray:
    """int.bit_length for each non-negative value (exact: no floating-point logarithm)."""
    length = np.zeros(values.shape, dtype=np.int64)
    rest = values.astype(np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        big = rest >= (1 << shift)
        length += np.where(big, shift, 0)
        rest = np.where(big, rest >> shift, rest)
    return length + (rest > 0)


def _reject_repeated_judgments(
    judgments: pl.DataFrame, topic: np.ndarray, docno_hash: np.ndarray, topics: pl.Series
) -> None:
    """trec_eval refuses a topic that judges a document twice; so do we. Repeated pairs
    hash alike, so only pairs whose hash repeats need comparing."""
    judged_hash = topic.astype(np.uint64) * _SPREAD
    judged_hash ^= docno_hash
    ordered = np.sort(judged_hash)
    if not (ordered[1:] == ordered[:-1]).any():
        return
    suspects = judgments.filter(pl.Series(judged_hash).is_duplicated())
    repeated = suspects.filter(pl.struct("topic", "docno").is_duplicated())
    if repeated.height:
        first = repeated.row(0, named=True)
        raise ValueError(
            f"qrels: topic {topics[first['topic']]!r} judges document {first['docno']!r} twice"
        )
