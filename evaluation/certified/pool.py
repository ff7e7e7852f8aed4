"""A campaign's pool seen as arrays, and nDCG@k over it exactly as trec_eval's ndcg_cut
computes it. Pure: numpy only.

The pool is every (qid, docno) pair that is judged; ``rankings`` are the runs' ranked lists
(run -> qid -> docnos, best first, in trec_eval's order: score descending, ties by docno
descending; the shape the pool-ordering strategies read). A run's document at rank i gains
its grade (linear gain, trec_eval 9.0.8's default; a document outside the pool gains 0, as
an unjudged one does) discounted by 1 / log2(i + 1) when i <= k:

    DCG@k(r, t) = sum over pool pairs d of topic t of  W[r, d] * grade(d)
    W[r, d]     = 1 / log2(rank of d in r's list for t + 1)  if that rank <= k, else 0

so a run's DCG@k is linear in the grades. The ideal DCG@k of a topic depends on its grades
only through C_g = min(k, number of its pairs graded g or higher), g = 1..G (G the top
grade): the ideal list holds a document of grade >= g at each of the first C_g ranks, so

    IDCG@k(t) = sum over g = 1..G of  cum(C_g),   cum(c) = sum over ranks j <= c of 1/log2(j+1)

(``ideal_dcg``; exact for whole counts; for the estimated, fractional counts of
evaluation.certified.means, ``cum`` is interpolated linearly between whole ranks).
nDCG@k(r, t) = DCG@k / IDCG@k, 0 when the ideal is 0; a run's mean is over the topics its
rankings hold (trec_eval without -c), every topic of the pool when it holds them all.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Pool", "build_pool", "ideal_dcg", "ndcg_means", "ndcg_per_topic"]

Pair = tuple[str, str]


@dataclass(frozen=True, eq=False)
class Pool:
    """The pool's pairs sorted by topic (then docno), and each run's discounts on them.

    pairs: (qid, docno) in the order every per-pair array of this package follows;
    topic: per pair, the index of its topic in ``topics``; starts: topic t's pairs are
    ``starts[t]:starts[t + 1]``; weights: runs x pairs, W above; scored: runs x topics,
    whether the run's rankings hold the topic (it counts in the run's mean).
    """

    pairs: tuple[Pair, ...]
    topics: tuple[str, ...]
    topic: np.ndarray
    starts: np.ndarray
    runs: tuple[str, ...]
    weights: np.ndarray
    scored: np.ndarray
    k: int
    top_grade: int

    @property
    def size(self) -> int:
        return len(self.pairs)

    def index(self) -> dict[Pair, int]:
        """(qid, docno) -> its position in ``pairs``."""
        return {pair: i for i, pair in enumerate(self.pairs)}

    def grades(self, by_pair: Mapping[Pair, int]) -> np.ndarray:
        """A grade for every pair, from ``{(qid, docno): grade}`` (every pair needs one)."""
        missing = [pair for pair in self.pairs if pair not in by_pair]
        if missing:
            raise ValueError(f"{len(missing)} pool pairs have no grade, the first {missing[0]}")
        return check_grades(
            np.array([by_pair[pair] for pair in self.pairs], dtype=np.int64), self.top_grade
        )


def build_pool(
    pairs: Sequence[Pair],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    *,
    k: int = 10,
    top_grade: int = 3,
) -> Pool:
    """The Pool of ``pairs`` for the runs of ``rankings`` and nDCG@k (see the module)."""
    if k < 1:
        raise ValueError(f"the cutoff k must be at least 1, got {k}")
    if top_grade < 1:
        raise ValueError(f"the top grade must be at least 1, got {top_grade}")
    ordered = sorted({(str(q), str(d)) for q, d in pairs})
    if len(ordered) != len(pairs):
        raise ValueError("the pool lists a (qid, docno) pair twice")
    if not ordered:
        raise ValueError("the pool is empty")
    topics = tuple(sorted({q for q, _ in ordered}))
    topic_index = {q: t for t, q in enumerate(topics)}
    topic = np.array([topic_index[q] for q, _ in ordered], dtype=np.int64)
    starts = np.searchsorted(topic, np.arange(len(topics) + 1))
    index = {pair: i for i, pair in enumerate(ordered)}
    runs = tuple(sorted(rankings))
    weights = np.zeros((len(runs), len(ordered)))
    scored = np.zeros((len(runs), len(topics)), dtype=bool)
    for r, run in enumerate(runs):
        for qid, docnos in rankings[run].items():
            qid = str(qid)
            if qid not in topic_index or not len(docnos):
                continue
            if len(set(docnos)) != len(docnos):
                raise ValueError(f"run {run} ranks a document twice for topic {qid}")
            scored[r, topic_index[qid]] = True
            for rank, docno in enumerate(docnos[:k], start=1):
                at = index.get((qid, str(docno)))
                if at is not None:
                    weights[r, at] = 1.0 / np.log2(rank + 1)
    return Pool(tuple(ordered), topics, topic, starts, runs, weights, scored, k, top_grade)


def check_grades(grades: np.ndarray, top_grade: int) -> np.ndarray:
    grades = np.asarray(grades)
    if grades.dtype.kind not in "iu":
        raise ValueError("grades must be whole numbers")
    if grades.size and (grades.min() < 0 or grades.max() > top_grade):
        raise ValueError(
            f"grades must be between 0 and the top grade {top_grade}, "
            f"got {grades.min()}..{grades.max()}"
        )
    return grades.astype(np.int64)


def discounts(k: int) -> tuple[np.ndarray, np.ndarray]:
    """(disc, cum): disc[j] = 1/log2(j + 2), the discount of rank j + 1, j = 0..k-1;
    cum[c] = sum of the first c discounts, c = 0..k."""
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    return disc, np.concatenate([[0.0], np.cumsum(disc)])


def cumulative_discount(counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(cum(c), cum'(c)) at counts c clipped to [0, k], cum interpolated linearly between
    whole ranks; the slope is the next rank's discount, 0 at or past k and below 0."""
    disc, cum = discounts(k)
    c = np.clip(counts, 0.0, float(k))
    whole = np.minimum(np.floor(c).astype(np.int64), k)
    next_disc = np.append(disc, 0.0)[whole]
    value = cum[whole] + (c - whole) * next_disc
    slope = np.where((counts >= 0) & (counts < k), next_disc, 0.0)
    return value, slope


def ideal_dcg(at_least: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per topic, IDCG@k from ``at_least`` (topics x G: how many pairs are graded g or
    higher, g = 1..G, whole or estimated) and its slopes (topics x G: d IDCG / d C_g)."""
    # An estimate can make a higher grade's count exceed a lower one's; the ideal list
    # cannot, so each count is at least the one above it.
    ordered = np.maximum.accumulate(at_least[:, ::-1], axis=1)[:, ::-1]
    value, slope = cumulative_discount(ordered, k)
    return value.sum(axis=1), slope


def grade_counts(pool: Pool, grades: np.ndarray) -> np.ndarray:
    """topics x G: the number of each topic's pairs graded g or higher, g = 1..G."""
    levels = np.arange(1, pool.top_grade + 1)
    at_least = (grades[:, None] >= levels[None, :]).astype(np.float64)
    return np.add.reduceat(at_least, pool.starts[:-1], axis=0)


def dcg(pool: Pool, gains: np.ndarray) -> np.ndarray:
    """runs x topics: sum over each topic's pairs of W * gain."""
    return np.add.reduceat(pool.weights * gains[None, :], pool.starts[:-1], axis=1)


def ndcg_per_topic(pool: Pool, grades: np.ndarray) -> np.ndarray:
    """runs x topics: nDCG@k with ``grades`` (one per pair) as the qrels (0 where the
    ideal is 0); NaN where the run's rankings do not hold the topic."""
    grades = check_grades(grades, pool.top_grade)
    if grades.shape != (pool.size,):
        raise ValueError(f"expected {pool.size} grades (one per pool pair), got {grades.shape}")
    ideal, _ = ideal_dcg(grade_counts(pool, grades), pool.k)
    gained = dcg(pool, grades.astype(np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(ideal > 0, gained / ideal, 0.0)
    return np.where(pool.scored, values, np.nan)


def ndcg_means(pool: Pool, grades: np.ndarray) -> dict[str, float]:
    """run -> mean nDCG@k over the topics its rankings hold (the all-human leaderboard when
    ``grades`` are the humans')."""
    return dict(zip(pool.runs, mean_over_scored(pool, ndcg_per_topic(pool, grades)), strict=True))


def mean_over_scored(pool: Pool, per_topic: np.ndarray) -> np.ndarray:
    counted = pool.scored.sum(axis=1)
    totals = np.where(pool.scored, per_topic, 0.0).sum(axis=1)
    return np.divide(totals, counted, out=np.zeros(len(pool.runs)), where=counted > 0)
