"""Bookkeeping of a file's lines while evaluation/trec/lines.py reads it a piece at a time:
which line claimed each (qid, docno) pair first (``Claims``), and where line k starts
(``LineIndex``), without a list of every line's offset."""

from __future__ import annotations

import bisect
import itertools

import numpy as np

from .canonical import _release
from .source import BOM

PIECE_BYTES = 4 << 20


class Claims:
    """The (qid, docno) pairs met so far, as their sorted 64-bit hashes, each with the first
    line that claimed it (16 bytes a pair): every line with the right number of fields
    claims its pair, valid or not."""

    def __init__(self, hashes: np.ndarray, numbers: np.ndarray) -> None:
        self.hashes = np.empty(0, dtype=np.uint64)
        self.firsts = np.empty(0, dtype=np.int64)
        self.add(hashes, numbers)

    def first(self, hashes: np.ndarray) -> np.ndarray:
        """The first line that claimed each hash, or 0 where none did."""
        if not len(self.hashes):
            return np.zeros(len(hashes), dtype=np.int64)
        at = np.searchsorted(self.hashes, hashes)
        found = at < len(self.hashes)
        found[found] = self.hashes[at[found]] == hashes[found]
        return np.where(found, self.firsts[np.minimum(at, len(self.hashes) - 1)], 0)

    def add(self, hashes: np.ndarray, numbers: np.ndarray) -> None:
        """Claim the hashes of lines ``numbers`` (ascending, after every line claimed so far)
        that are not claimed yet."""
        if len(self.hashes):
            new = self.first(hashes) == 0
            hashes, numbers = hashes[new], numbers[new]
        # A stable sort keeps the lines of one hash in line order: the first comes first.
        order = np.argsort(hashes, kind="stable")
        hashes, numbers = hashes[order], numbers[order]
        first = np.ones(len(hashes), dtype=bool)
        first[1:] = hashes[1:] != hashes[:-1]
        hashes = np.concatenate([self.hashes, hashes[first]])
        numbers = np.concatenate([self.firsts, numbers[first]])
        order = np.argsort(hashes, kind="stable")
        self.hashes, self.firsts = hashes[order], numbers[order]


class LineIndex:
    """The bytes of line k of the input, split as the reference parser splits lines, found
    through per-block newline counts rather than a list of every line's offset."""

    _BLOCK = 1 << 16

    def __init__(self, data) -> None:
        self.data = data
        self.first = len(BOM) if data[: len(BOM)] == BOM else 0
        counts = []
        for start in range(0, len(data), PIECE_BYTES):
            piece = data[start : start + PIECE_BYTES]
            _release(data, start, start + len(piece))  # a memory map's pages, read
            counts += (
                piece[at : at + self._BLOCK].count(b"\n")
                for at in range(0, len(piece), self._BLOCK)
            )
        self.newlines = list(itertools.accumulate(counts))  # newlines up to each block's end
        total = self.newlines[-1] if self.newlines else 0
        after_last = data.rfind(b"\n") + 1 if total else self.first
        self.count = total + (1 if len(data) > after_last else 0)

    def line(self, number: int) -> bytes:
        start = self.first
        if number > 1:
            # Jump to the block holding newline number - 1, then step through that block.
            block = bisect.bisect_left(self.newlines, number - 1)
            start = block * self._BLOCK
            for _ in range(number - 1 - (self.newlines[block - 1] if block else 0)):
                start = self.data.find(b"\n", start) + 1
        end = self.data.find(b"\n", start)
        return bytes(self.data[start : end if end >= 0 else len(self.data)])
