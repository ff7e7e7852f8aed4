"""Per-topic sequences and the arithmetic trec_eval's loops do on them, vectorised: running
sums added strictly in rank order, suffix maxima, C's log2, division that leaves 0 where
trec_eval leaves a value at its initial 0. Pure."""

import math

import numpy as np

__all__ = [
    "Events",
    "divide",
    "gains_of",
    "log",
    "log2",
    "log2_any",
    "running_sums",
    "suffix_maxima",
]


class Events:
    """Per-topic sequences (relevant documents, gains, ...) sorted by topic then rank, with
    running sums computed in order, as trec_eval's loops add them."""

    def __init__(self, topic: np.ndarray, rank: np.ndarray | None, n: int) -> None:
        self.n = n
        self.topic = topic
        self.rank = rank
        self.count = np.bincount(topic, minlength=n)
        self.start = np.cumsum(self.count) - self.count
        self.position = np.arange(topic.size) - self.start[topic] + 1  # 1-based, per topic
        self.running = np.zeros(0)

    def set_values(self, values: np.ndarray) -> None:
        self.running = running_sums(values, self.position)

    def set_whole_values(self, values: np.ndarray) -> None:
        """set_values for values that are whole numbers or halves (gains): their partial
        sums are exact in any order, so one np.cumsum less each topic's start will do."""
        values = np.asarray(values, dtype=np.float64)
        doubled = values * 2
        if values.size and not (
            np.all(doubled == np.floor(doubled)) and np.abs(values).sum() < 2.0**40
        ):
            self.set_values(values)
            return
        total = np.cumsum(values)
        before = total - values
        self.running = total - before[self.start[self.topic]] if values.size else total

    def count_within(self, k: int | np.ndarray) -> np.ndarray:
        """Per topic, events at rank <= k (k: one cutoff, or one per topic)."""
        limit = k if np.isscalar(k) else k[self.topic]
        return np.bincount(self.topic[self.rank <= limit], minlength=self.n)

    def sum_first(self, count: np.ndarray | None) -> np.ndarray:
        """Per topic, the running sum after its first `count` events (None: all of them)."""
        count = self.count if count is None else np.minimum(count, self.count)
        last = self.start + count - 1
        picked = np.where(count > 0, last, 0)
        if self.running.size == 0:
            return np.zeros(self.n)
        return np.where(count > 0, self.running[picked], 0.0)

    def sum_within(self, k: int) -> np.ndarray:
        return self.sum_first(self.count_within(k))

    def first(self, values: np.ndarray, position: np.ndarray) -> np.ndarray:
        """Per topic, values[the position-th event] (1-based); 0 where there is none."""
        exists = (position >= 1) & (position <= self.count)
        picked = np.where(exists, self.start + position - 1, 0)
        if values.size == 0:
            return np.zeros(self.n)
        return np.where(exists, values[picked], 0.0)

    def at_rank(self, topic: np.ndarray, k: np.ndarray) -> np.ndarray:
        """For each (topic, k) pair: the running sum over the topic's events at rank <= k."""
        return self.at_position(topic, k, self.rank)

    def at_position(self, topic: np.ndarray, k: np.ndarray, rank: np.ndarray) -> np.ndarray:
        if self.topic.size == 0:
            return np.zeros(topic.size)
        scale = int(max(rank.max(initial=0), np.max(k, initial=0))) + 1
        keys = self.topic.astype(np.int64) * scale + rank
        wanted = topic.astype(np.int64) * scale + np.minimum(k, scale - 1)
        last = np.searchsorted(keys, wanted, "right") - 1
        inside = (last >= 0) & (last >= self.start[topic])
        return np.where(inside, self.running[np.maximum(last, 0)], 0.0)


def gains_of(grade: np.ndarray, gain: str) -> np.ndarray:
    """gain(g) for judged grades g >= 0, as the double trec_eval divides (exact integers)."""
    if gain == "exp":
        return (np.left_shift(np.int64(1), grade.astype(np.int64)) - 1).astype(np.float64)
    return grade.astype(np.float64)


def log2(values: np.ndarray) -> np.ndarray:
    """log2 of whole numbers >= 1 from the C library, as trec_eval calls it (numpy's own
    log2 can differ in the last bit); computed once per distinct value."""
    values = np.asarray(values, dtype=np.int64)
    top = int(values.max(initial=1))
    if top <= 4 * values.size + 1024:
        table = np.array([math.log2(v) if v else 0.0 for v in range(top + 1)])
        return table[values]
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([math.log2(v) for v in distinct], dtype=np.float64)[inverse]


def log(values: np.ndarray) -> np.ndarray:
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([math.log(v) for v in distinct], dtype=np.float64)[inverse]


def divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0 (trec_eval leaves such a
    value at its initial 0)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def running_sums(values: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Cumulative sums restarting where position == 1, each added strictly in order.

    np.cumsum adds in order but does not restart; numpy's reductions add pairwise. So the
    sums advance one position at a time across all topics at once: as many vectorised steps
    as the longest sequence, or one np.cumsum per topic when there are fewer topics.
    """
    return _running(values, position, np.add)


def suffix_maxima(values: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Per topic, the maximum of values from each event to the topic's last one."""
    return _running(values[::-1], _reverse_positions(position), np.maximum)[::-1]


def _reverse_positions(position: np.ndarray) -> np.ndarray:
    """Positions counted from each topic's end, in reversed array order."""
    reversed_position = position[::-1]
    starts = np.flatnonzero(np.r_[True, reversed_position[1:] >= reversed_position[:-1]])
    lengths = np.diff(np.r_[starts, reversed_position.size])
    return np.arange(reversed_position.size) - np.repeat(starts, lengths) + 1


def _running(values: np.ndarray, position: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    out = np.array(values, dtype=np.float64)
    if out.size == 0:
        return out
    starts = np.flatnonzero(position == 1)
    longest = int(position.max())
    if longest <= starts.size:
        # Grouping by position needs no particular order within a position; a stable sort
        # of 16-bit integers is a radix sort, the fastest numpy has.
        narrow = position.astype(np.int16) if longest < 2**15 else position
        order = np.argsort(narrow, kind="stable")
        bounds = np.searchsorted(position[order], np.arange(1, longest + 2), "left")
        for step in range(1, longest):
            index = order[bounds[step] : bounds[step + 1]]
            out[index] = ufunc(out[index - 1], out[index])
    else:
        for start, stop in zip(starts, np.r_[starts[1:], out.size], strict=True):
            out[start:stop] = ufunc.accumulate(out[start:stop])
    return out


def sequential_sum(values: np.ndarray) -> float:
    total = float(np.cumsum(values)[-1]) if values.size else 0.0
    if math.isnan(total):
        # trec_eval adds each topic's value to the running sum as `value + sum`, and x86
        # returns the first of two NaNs: the last topic's NaN gives the sum its sign (which
        # glibc prints, "nan" or "-nan": z-scores read from a file's nan have either). With
        # none, inf - inf made the NaN, x86's default one, as numpy's.
        nans = np.flatnonzero(np.isnan(values))
        if nans.size:
            total = float(values[nans[-1]])
    return total


def log2_any(values: np.ndarray) -> np.ndarray:
    """log2 from the C library of any positive doubles (whole numbers through log2's table)."""
    values = np.asarray(values, dtype=np.float64)
    whole = values == np.floor(values)
    if whole.all():
        return log2(values.astype(np.int64))
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([math.log2(v) for v in distinct], dtype=np.float64)[inverse]
