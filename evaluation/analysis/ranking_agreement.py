"""How far two system rankings agree: the meta-evaluation of judges and qrels versions as
the TREC AutoJudge track does it, and more (pure: numpy, no Django).

A *leaderboard* here is ``{system: score}``; ``reference`` is the trusted one (the humans'
qrels, the old version, our own numbers), ``other`` the one being judged (a machine's qrels,
the new version, a leaderboard computed elsewhere). Only the systems both hold are compared;
higher scores rank first. Coefficients (each also "@k": over the k systems the reference
ranks first, ties at the edge broken by system name, as in ``top_by_reference``):

- ``kendall``: Kendall's tau-b, (C - D) / sqrt((C + D + Tx)(C + D + Ty)) with C, D the
  concordant and discordant pairs and Tx, Ty the pairs tied in one ranking only (equals
  scipy.stats.kendalltau);
- ``spearman``: Pearson's r of the two rankings' average ranks (scipy.stats.spearmanr);
- ``pearson``: Pearson's r of the scores themselves (scipy.stats.pearsonr);
- ``tauap_b``: tau-AP for ties (Urbano & Marrero, "The treatment of ties in AP
  correlation", ICTIR 2017), symmetrised as pyircore and autojudge-evaluate 1.1 compute
  it: the mean of tau_AP,b(x, y) and tau_AP,b(y, x), with systems ranked from the top::

      tau_AP,b(x, y) = 2 / |P| * sum_{i in P} C_i / p_i - 1

  where p_i counts the systems y ranks strictly above i, P the systems with p_i > 0, and
  C_i those j of them with sign(rx_i - rx_j) == sign(ry_i - ry_j) (pyircore's count), rx
  being x's average ranks and ry y's ordinal ranks (ties in y by position, so by name).
  0.0 when every system ties in y (pyircore's convention);
- ``tau_gap``: Gao and Oard's head-weighted, gap-sensitive coefficient (SIGIR 2015)::

      tau_GAP = 2 / |I| * sum_{i in I} ( sum_{j<i} |CG_ji| / sum_{j<i} |G_ji| ) - 1

  over the positions i of ``other``'s ordering (ties by system name), G_ji the reference's
  score gap between the systems at positions j and i, CG_ji = G_ji when ``other`` orders
  the pair as the reference does and 0 otherwise, I the positions with a non-zero gap
  mass above them; NaN when there is none. Asymmetric: the reference gives the gaps;
- ``rbo``: rank-biased overlap (evaluation.analysis.rundiff.rbo_ext, p = 0.9) of the two orderings
  (ties by system name).

Means equal within a relative TIE_TOLERANCE (1e-12) are ties everywhere systems are ranked
here (tied_means): the order of means that differ only by rounding says nothing.

Undefined values are NaN (never a made-up 0): fewer than 3 systems (autojudge-evaluate
refuses them too), or a ranking with no spread for the correlations that need one.

Beyond the coefficients: ``swapped_pairs`` (pairs the two rankings order oppositely),
``bootstrap`` (percentile intervals of each coefficient over topics resampled with
replacement, the same resample for both leaderboards), ``per_topic`` (one coefficient on
each topic's own system ranking) and ``per_topic_coefficients`` (tau-b, Spearman, Pearson
and tauap_b on each topic, NaN where a topic's ranking has no spread under either).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.analysis import rundiff
from evaluation.analysis.significance import RESAMPLES

__all__ = [
    "COEFFICIENTS",
    "MIN_SYSTEMS",
    "TOPIC_COEFFICIENTS",
    "Agreement",
    "Interval",
    "Swap",
    "agreement",
    "bootstrap",
    "coefficient",
    "kendall_tau_b",
    "pearson",
    "per_topic",
    "per_topic_coefficients",
    "spearman",
    "swapped_pairs",
    "tau_gap",
    "tauap_b",
    "tied_leaderboard",
    "tied_means",
    "top_by_reference",
]

COEFFICIENTS = ("kendall", "spearman", "pearson", "tauap_b", "tau_gap", "rbo")
# Per topic: the correlations of the two orderings (tau_gap and RBO weigh the whole
# leaderboard's head, which a single topic's handful of systems does not have).
TOPIC_COEFFICIENTS = ("kendall", "spearman", "pearson", "tauap_b")
MIN_SYSTEMS = 3
DEFAULT_SEED = 20150809  # fixed, so the same inputs give the same intervals
# Means closer than this (relative to the larger) are ties: 40/50 and 36.8/46 are both 0.8,
# stored as 0.7999999999999997 and 0.7999999999999998 after adding up per-topic values.
TIE_TOLERANCE = 1e-12


def tied_means(values) -> np.ndarray:
    """The values with each group of near-equal ones (consecutive in sorted order, each
    within TIE_TOLERANCE of the next, relative to the larger) replaced by the group's
    smallest, so rankings see ties where only rounding told the means apart."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return values.copy()
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    scale = np.maximum(np.abs(ordered[1:]), np.abs(ordered[:-1]))
    finite = np.isfinite(ordered)
    joins = finite[1:] & finite[:-1] & ((ordered[1:] - ordered[:-1]) <= TIE_TOLERANCE * scale)
    group = np.concatenate([[0], np.cumsum(~joins)])
    firsts = ordered[np.flatnonzero(np.concatenate([[True], ~joins]))]
    snapped = np.empty_like(values)
    snapped[order] = firsts[group]
    return snapped


def tied_leaderboard(scores: Mapping[str, float]) -> dict[str, float]:
    """A leaderboard ({system: mean}) with near-equal means made equal (tied_means)."""
    names = list(scores)
    return dict(zip(names, tied_means([scores[n] for n in names]).tolist(), strict=True))


# --- the coefficients on aligned score vectors (position i: the same system) --------------


def _pair_signs(x: np.ndarray) -> np.ndarray:
    return np.sign(x[:, None] - x[None, :])


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    x, y = _vectors(x, y)
    if x.size < 2:
        return math.nan
    upper = np.triu(np.ones((x.size, x.size), dtype=bool), 1)
    sx, sy = _pair_signs(x)[upper], _pair_signs(y)[upper]
    product = sx * sy
    concordant_minus_discordant = product.sum()
    untied_x, untied_y = np.count_nonzero(sx), np.count_nonzero(sy)
    if untied_x == 0 or untied_y == 0:
        return math.nan
    return float(concordant_minus_discordant / math.sqrt(untied_x * untied_y))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size)
    sorted_x = x[order]
    start = 0
    for end in range(1, x.size + 1):
        if end == x.size or sorted_x[end] != sorted_x[start]:
            ranks[order[start:end]] = (start + end + 1) / 2  # 1-based average
            start = end
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    x, y = _vectors(x, y)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:  # no spread: undefined
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float(dx @ dx) * float(dy @ dy))
    if denominator == 0:
        return math.nan
    return float(np.clip((dx @ dy) / denominator, -1.0, 1.0))


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    x, y = _vectors(x, y)
    return pearson(_average_ranks(x), _average_ranks(y))


def _tauap_b_one_way(x: np.ndarray, y: np.ndarray) -> float:
    """pyircore's tauap_b_ties on ascending scores: rx average ranks of x, ry ordinal
    ranks of y (ties by position), p the 0-based minimum rank of y's tie group."""
    rx = _average_ranks(x)
    ry = np.empty(y.size)
    ry[np.argsort(y, kind="stable")] = np.arange(1, y.size + 1)
    p = np.empty(y.size)  # the 0-based first place of each system's tie group in y
    order = np.argsort(y, kind="stable")
    sorted_y = y[order]
    start = 0
    for end in range(1, y.size + 1):
        if end == y.size or sorted_y[end] != sorted_y[start]:
            p[order[start:end]] = start
            start = end
    pivots = p > 0
    if not pivots.any():
        return 0.0
    above = p[None, :] < p[:, None]  # [i, j]: j in a group before i's
    agree = np.sign(rx[:, None] - rx[None, :]) == np.sign(ry[:, None] - ry[None, :])
    c = (above & agree).sum(axis=1)
    return float(2.0 / pivots.sum() * (c[pivots] / p[pivots]).sum() - 1.0)


def tauap_b(x: Sequence[float], y: Sequence[float]) -> float:
    x, y = _vectors(x, y)
    if x.size < 2:
        return math.nan
    # pyircore ranks decreasing scores by negating them.
    return (_tauap_b_one_way(-x, -y) + _tauap_b_one_way(-y, -x)) / 2


def tau_gap(reference: Sequence[float], other: Sequence[float]) -> float:
    """Gao and Oard's tau_GAP; ``other``'s ties are broken by position (the caller aligns
    systems by name, so by name)."""
    truth, predicted = _vectors(reference, other)
    n = truth.size
    if n < 2:
        return math.nan
    order = np.lexsort((np.arange(n), -predicted))
    t = truth[order]
    gaps = np.abs(t[:, None] - t[None, :])  # [j, i]
    correct = np.where(t[:, None] > t[None, :], gaps, 0.0)
    below = np.tril(np.ones((n, n), dtype=bool), -1).T  # [j, i]: j < i
    mass = (gaps * below).sum(axis=0)[1:]
    right = (correct * below).sum(axis=0)[1:]
    used = mass > 0
    if not used.any():
        return math.nan
    return float(2.0 / used.sum() * (right[used] / mass[used]).sum() - 1.0)


def _rbo(names: list[str], x: np.ndarray, y: np.ndarray) -> float:
    if len(names) == 0:
        return math.nan
    return rundiff.rbo_ext(_ordering(names, x), _ordering(names, y))


def _ordering(names: list[str], scores: np.ndarray) -> list[str]:
    """Systems best first, ties by name."""
    return [names[i] for i in sorted(range(len(names)), key=lambda i: (-scores[i], names[i]))]


_FUNCTIONS = {
    "kendall": kendall_tau_b,
    "spearman": spearman,
    "pearson": pearson,
    "tauap_b": tauap_b,
    "tau_gap": tau_gap,
}


def _vectors(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"two score vectors of one length are needed, got {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("scores must be finite numbers")
    return x, y


# --- leaderboards --------------------------------------------------------------------------


def _aligned(reference: Mapping[str, float], other: Mapping[str, float]):
    """The common systems and their means under each, near-equal means tied."""
    names = sorted(reference.keys() & other.keys())
    x = tied_means([reference[n] for n in names])
    y = tied_means([other[n] for n in names])
    return names, x, y


def top_by_reference(reference: Mapping[str, float], k: int) -> list[str]:
    """The k systems the reference ranks first (ties, near-equal means too, by name)."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    reference = tied_leaderboard(reference)
    return sorted(reference, key=lambda n: (-reference[n], n))[:k]


def coefficient(
    name: str, reference: Mapping[str, float], other: Mapping[str, float], *, k: int | None = None
) -> float:
    """One coefficient (COEFFICIENTS) of two leaderboards over their common systems, or over
    the k of them the reference ranks first; NaN with fewer than MIN_SYSTEMS."""
    if name not in COEFFICIENTS:
        raise ValueError(f"unknown coefficient {name!r}: one of {', '.join(COEFFICIENTS)}")
    if k is not None:
        common = {n: reference[n] for n in reference.keys() & other.keys()}
        keep = set(top_by_reference(common, k))
        reference = {n: v for n, v in reference.items() if n in keep}
    names, x, y = _aligned(reference, other)
    if len(names) < MIN_SYSTEMS:
        return math.nan
    if name == "rbo":
        return _rbo(names, x, y)
    return _FUNCTIONS[name](x, y)


@dataclass(frozen=True)
class Swap:
    """Two systems the leaderboards order oppositely: the reference puts ``first`` above
    ``second``; ``gap`` is the reference's score difference, ``other_gap`` the other's
    (negative)."""

    first: str
    second: str
    gap: float
    other_gap: float


def swapped_pairs(reference: Mapping[str, float], other: Mapping[str, float]) -> list[Swap]:
    """Every pair of common systems ordered strictly one way by the reference and strictly
    the other way by ``other``; largest reference gap first (then by names)."""
    names, x, y = _aligned(reference, other)
    swaps = []
    for i in range(len(names)):
        for j in range(len(names)):
            if x[i] > x[j] and y[i] < y[j]:
                swaps.append(Swap(names[i], names[j], float(x[i] - x[j]), float(y[i] - y[j])))
    return sorted(swaps, key=lambda s: (-s.gap, s.first, s.second))


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class Agreement:
    """All coefficients of two leaderboards: ``values[name]`` over the common systems,
    ``at_k[name]`` over the reference's top k (None when k was not asked), ``intervals``
    from ``bootstrap`` (empty without per-topic values)."""

    systems: int
    k: int | None
    values: dict[str, float]
    at_k: dict[str, float] | None
    swaps: list[Swap]
    intervals: dict[str, Interval]
    intervals_at_k: dict[str, Interval]
    samples: int
    # With per-topic values: the topics every system has under both, which the values and
    # intervals are computed over, and the topics some system lacks, left out of both.
    topics: int | None = None
    topics_left_out: int = 0


def agreement(
    reference: Mapping[str, float],
    other: Mapping[str, float],
    *,
    k: int | None = None,
    reference_topics: Mapping[str, Mapping[str, float]] | None = None,
    other_topics: Mapping[str, Mapping[str, float]] | None = None,
    samples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Agreement:
    """Every coefficient, @k too when ``k`` is given, the swapped pairs, and with both
    ``*_topics`` ({system: {qid: value}}) bootstrap intervals over topics.

    With per-topic values, the point estimates are computed over the same topics as the
    intervals, those every common system has under both: when some system lacks a topic,
    each system's mean over those topics replaces the leaderboards' means (which are over
    each system's own topics), so a value never falls outside its own interval for that
    reason alone; ``topics_left_out`` says how many topics were left out."""
    topics, left_out = None, 0
    if reference_topics is not None and other_topics is not None:
        names, qids = _common(reference_topics, other_topics)
        seen = {q for side in (reference_topics, other_topics) for n in names for q in side[n]}
        topics, left_out = len(qids), len(seen - set(qids))
        if left_out and qids:
            x, y = _matrix(reference_topics, names, qids), _matrix(other_topics, names, qids)
            reference = dict(zip(names, x.mean(axis=1).tolist(), strict=True))
            other = dict(zip(names, y.mean(axis=1).tolist(), strict=True))
    values = {name: coefficient(name, reference, other) for name in COEFFICIENTS}
    at_k = {name: coefficient(name, reference, other, k=k) for name in COEFFICIENTS} if k else None
    intervals: dict[str, Interval] = {}
    intervals_k: dict[str, Interval] = {}
    if reference_topics is not None and other_topics is not None and samples:
        intervals = bootstrap(reference_topics, other_topics, samples=samples, seed=seed)
        if k:
            intervals_k = bootstrap(reference_topics, other_topics, samples=samples, seed=seed, k=k)
    return Agreement(
        systems=len(reference.keys() & other.keys()),
        k=k,
        values=values,
        at_k=at_k,
        swaps=swapped_pairs(reference, other),
        intervals=intervals,
        intervals_at_k=intervals_k,
        samples=samples if intervals else 0,
        topics=topics,
        topics_left_out=left_out,
    )


def _matrix(topics: Mapping[str, Mapping[str, float]], names: list[str], qids: list[str]):
    return np.array([[topics[n][q] for q in qids] for n in names], dtype=float)


def _common(reference_topics, other_topics) -> tuple[list[str], list[str]]:
    names = sorted(reference_topics.keys() & other_topics.keys())
    qids: set[str] | None = None
    for topics in (reference_topics, other_topics):
        for n in names:
            qids = set(topics[n]) if qids is None else qids & set(topics[n])
    return names, sorted(qids or (), key=str.encode)


def bootstrap(
    reference_topics: Mapping[str, Mapping[str, float]],
    other_topics: Mapping[str, Mapping[str, float]],
    *,
    samples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
    k: int | None = None,
) -> dict[str, Interval]:
    """Percentile intervals of each coefficient: ``samples`` times, draw the topics every
    system has under both ({system: {qid: value}}) with replacement, rank the systems by
    their mean over the draw under each, and compute the coefficient (@k: the reference's
    top k of that draw). NaN draws are left out; a coefficient with none has no interval."""
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise ValueError(f"samples must be a whole number >= 1, got {samples!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    names, qids = _common(reference_topics, other_topics)
    if len(names) < MIN_SYSTEMS or not qids:
        return {}
    x = _matrix(reference_topics, names, qids)
    y = _matrix(other_topics, names, qids)
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {name: [] for name in COEFFICIENTS}
    for _ in range(samples):
        pick = rng.integers(0, len(qids), len(qids))
        mx, my = x[:, pick].mean(axis=1), y[:, pick].mean(axis=1)
        reference = dict(zip(names, mx.tolist(), strict=True))
        other = dict(zip(names, my.tolist(), strict=True))
        for name in COEFFICIENTS:
            value = coefficient(name, reference, other, k=k)
            if not math.isnan(value):
                draws[name].append(value)
    tail = (1 - level) / 2
    return {
        name: Interval(float(np.quantile(v, tail)), float(np.quantile(v, 1 - tail)))
        for name, v in draws.items()
        if v
    }


def per_topic(
    reference_topics: Mapping[str, Mapping[str, float]],
    other_topics: Mapping[str, Mapping[str, float]],
    name: str = "kendall",
) -> dict[str, float]:
    """The coefficient of the two system rankings on each topic every system has under
    both (NaN where undefined, e.g. all systems tied)."""
    names, qids = _common(reference_topics, other_topics)
    return {
        q: coefficient(
            name,
            {n: reference_topics[n][q] for n in names},
            {n: other_topics[n][q] for n in names},
        )
        for q in qids
    }


def per_topic_coefficients(
    reference_topics: Mapping[str, Mapping[str, float]],
    other_topics: Mapping[str, Mapping[str, float]],
    names: Sequence[str] = TOPIC_COEFFICIENTS,
) -> dict[str, dict[str, float]]:
    """{qid: {name: value}} for each topic every system has under both ({system: {qid:
    value}}): the coefficients (TOPIC_COEFFICIENTS) of the two system rankings on that
    topic alone. NaN with fewer than MIN_SYSTEMS systems, and NaN for every coefficient when
    either ranking has no spread on the topic (all systems tied, e.g. a topic with no
    relevant document): tauap_b included, where pyircore's whole-leaderboard convention (0.0
    when one side ties everywhere, -0.5 when the other does) would read as disagreement on a
    topic that merely cannot tell the systems apart."""
    unknown = [n for n in names if n not in TOPIC_COEFFICIENTS]
    if unknown:
        raise ValueError(
            f"unknown per-topic coefficient {unknown[0]!r}: one of {', '.join(TOPIC_COEFFICIENTS)}"
        )
    systems, qids = _common(reference_topics, other_topics)
    if not qids:
        return {}
    x = _matrix(reference_topics, systems, qids)
    y = _matrix(other_topics, systems, qids)
    undefined = dict.fromkeys(names, math.nan)
    out = {}
    for column, qid in enumerate(qids):
        xs, ys = tied_means(x[:, column]), tied_means(y[:, column])
        if len(systems) < MIN_SYSTEMS or np.ptp(xs) == 0 or np.ptp(ys) == 0:
            out[qid] = dict(undefined)
        else:
            out[qid] = {name: _FUNCTIONS[name](xs, ys) for name in names}
    return out
