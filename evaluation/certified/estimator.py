"""The certified estimator, computed (evaluation.certified.means says what it estimates and
why). Pure: numpy and scipy.

Cross-fitting. The sampled pairs are dealt into ``FOLDS`` folds (seeded, every topic's pairs
spread over the folds). For fold k, an *expansion point* is built without fold k: the humans'
grades of the other folds' pairs, and for every other pair a predicted distribution of its
human grade (the calibration, fitted on the other folds, shifted per topic by what the other
folds' humans found in that topic). Each topic's nDCG is the model's expected value there
(the predicted DCG over the expected ideal DCG), corrected to first order by fold k's pairs,
each weighted by 1 / P(in fold k | not in the other folds). The estimate is the mean over
the folds. Because a fold's correction is drawn independently of its expansion point, the
correction is (for Poisson sampling exactly, for fixed-size strata nearly) unbiased for the
first-order term; what is left is second order in how far the prediction is from the truth.

A pair sampled with certainty (pi = 1) is in no fold and in every expansion point: with
every pair sampled, each expansion point is the all-human grades and the estimate is exact.

The anticipated covariance (means.py says why it is used): the covariance the correction
would have under Poisson sampling if every pool pair's human grade were drawn from its
predicted distribution, sum over pool pairs d of (1 / pi_d - 1) E[u_r,d u_s,d], u being the
pair's first-order term (its residuals on the DCG and on the ideal, over the ideal). Its
moments come from the same predictions as the estimate, per topic and machine grade, so the
pool's pairs enter only through per-cell sums of their weights (``unsampled``).
"""

from dataclasses import dataclass

import numpy as np

from .pool import Pool, discounts
from .sampling import Sample

FOLDS = 4
TOPIC_VARIANCE = 4.0  # prior variance of a topic's shift of the calibration, logit scale
NEWTON = 4  # Newton steps fitting that shift


@dataclass(frozen=True, eq=False)
class Parts:
    """The sample and the pool as the estimate reads them (``*_out[k]``: the sampled pairs
    outside fold k, plus the ones sampled with certainty)."""

    levels: int
    k: int
    calibrate: bool
    fold: np.ndarray  # sampled: its fold, -1 for a pair sampled with certainty (pi = 1)
    pi: np.ndarray  # sampled: inclusion probability
    machine: np.ndarray  # sampled: the machine's grade
    human: np.ndarray  # sampled: the human grade
    at_or_above: np.ndarray  # sampled x G: human grade >= g
    weights: np.ndarray  # runs x sampled: W of the sampled pairs
    topic: np.ndarray  # sampled: topic index (non-decreasing: pool order)
    by_grade: np.ndarray  # runs x topics x levels: sum of W over the topic's pairs graded m
    grade_counts: np.ndarray  # topics x levels: the topic's pairs the machine graded m
    seen_out: np.ndarray  # folds x topics x levels x levels: pairs by machine x human grade
    sampled_w_out: np.ndarray  # folds x runs x topics x levels: their W summed per m
    known_dcg_out: np.ndarray  # folds x runs x topics: their W h summed
    lower_out: np.ndarray  # folds x topics x G: their count graded >= g
    scored: np.ndarray  # runs x topics
    # Over all pool pairs, per topic x machine grade, with f = 1 / pi - 1: sum f, sum f W_r
    # (runs x ...) and sum f W_r W_s (runs x runs x ...): the anticipated covariance's input.
    f_count: np.ndarray
    f_weight: np.ndarray
    f_products: np.ndarray


def gather_parts(
    pool: Pool, machine: np.ndarray, sample: Sample, human: np.ndarray, calibrate: bool, seed
) -> Parts:
    levels, g = pool.top_grade + 1, pool.top_grade
    chosen = sample.chosen
    topics, runs = len(pool.topics), len(pool.runs)
    by_topic = pool.starts[:-1]
    one_hot = np.eye(levels)[machine]
    by_grade = np.stack(
        [np.add.reduceat(pool.weights * one_hot[:, m], by_topic, axis=1) for m in range(levels)],
        axis=2,
    )
    pi = sample.probability[chosen]
    topic = pool.topic[chosen]
    fold = _folds(topic, pi, seed)
    at_or_above = (np.arange(1, levels)[None, :] <= human[:, None]).astype(np.float64)
    weights = pool.weights[:, chosen]
    seen_out = np.zeros((FOLDS, topics, levels, levels))
    sampled_w_out = np.zeros((FOLDS, runs, topics, levels))
    known_dcg_out = np.zeros((FOLDS, runs, topics))
    lower_out = np.zeros((FOLDS, topics, g))
    for k in range(FOLDS):
        out = fold != k
        t, m, h = topic[out], machine[chosen][out], human[out]
        np.add.at(seen_out[k], (t, m, h), 1.0)
        np.add.at(lower_out[k], t, at_or_above[out])
        for r in range(runs):
            np.add.at(sampled_w_out[k, r], (t, m), weights[r, out])
            np.add.at(known_dcg_out[k, r], t, weights[r, out] * h)
    f = 1.0 / sample.probability - 1.0  # 0 for a pair sampled with certainty
    cell = pool.topic * levels + machine  # topic x machine grade, flattened
    size = topics * levels

    def per_cell(values):
        return np.bincount(cell, weights=values, minlength=size)

    weighted = pool.weights * f[None, :]
    f_products = np.zeros((runs, runs, size))
    for r in range(runs):  # one pass over the pool per run: no runs x runs x pairs array
        for s in range(r, runs):
            f_products[r, s] = f_products[s, r] = per_cell(weighted[r] * pool.weights[s])
    return Parts(
        levels,
        pool.k,
        calibrate,
        fold,
        pi,
        machine[chosen],
        human,
        at_or_above,
        weights,
        topic,
        by_grade,
        np.add.reduceat(one_hot, by_topic, axis=0),
        seen_out,
        sampled_w_out,
        known_dcg_out,
        lower_out,
        pool.scored,
        per_cell(f).reshape(topics, levels),
        np.stack([per_cell(w) for w in weighted]).reshape(runs, topics, levels),
        f_products.reshape(runs, runs, topics, levels),
    )


def _folds(topic: np.ndarray, pi: np.ndarray, seed) -> np.ndarray:
    """Each sampled pair's fold: each topic's pairs in a seeded random order, dealt round the
    folds from a seeded first fold; -1 for a pair sampled with certainty."""
    if not topic.size:
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(topic.size), topic))
    first = rng.integers(0, FOLDS, size=topic.max() + 1)
    rank = np.empty(topic.size, dtype=np.int64)
    rank[order] = np.arange(topic.size) - np.searchsorted(topic[order], topic[order])
    return np.where(pi >= 1.0, -1, (rank + first[topic]) % FOLDS)


def estimate(parts: Parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimates, contributions, anticipated): each run's estimate, each sampled pair's
    first-order contribution to it (runs x sampled; the delta method's input, see
    means._covariance), and the anticipated covariance of the estimates (runs x runs, see
    the module), the mean over the folds' predictions."""
    runs, topics = parts.scored.shape
    grades = np.arange(parts.levels, dtype=np.float64)
    per_topic = np.zeros((runs, topics))
    contribution = np.zeros((runs, parts.fold.size))
    anticipated = np.zeros((runs, runs))
    for k in range(FOLDS):
        inside = np.flatnonzero(parts.fold == k)
        local = _topic_shift(_calibration(parts, parts.fold != k), parts.seen_out[k])
        gain = local @ grades  # topics x levels
        at_least = np.cumsum(local[..., ::-1], axis=-1)[..., ::-1][..., 1:]  # T x levels x G
        unjudged = parts.grade_counts - parts.seen_out[k].sum(axis=2)
        dcg_0 = (
            np.einsum("rtm,tm->rt", parts.by_grade - parts.sampled_w_out[k], gain)
            + parts.known_dcg_out[k]
        )
        ideal, slope = expected_ideal(parts.lower_out[k], unjudged, at_least, parts.k)
        positive = ideal > 0
        safe = np.where(positive, ideal, 1.0)
        point = np.where(positive[None, :], dcg_0 / safe[None, :], 0.0)
        if inside.size:
            t, m = parts.topic[inside], parts.machine[inside]
            gain_residual = parts.human[inside] - gain[t, m]
            ideal_residual = (slope[t] * (parts.at_or_above[inside] - at_least[t, m])).sum(axis=1)
            # 1 / P(in fold k | not in the other folds) = K / pi - (K - 1)
            weight = FOLDS / parts.pi[inside] - (FOLDS - 1)
            scale = np.where(positive[t], weight / safe[t], 0.0)
            terms = (
                parts.weights[:, inside] * (scale * gain_residual)[None, :]
                - dcg_0[:, t] * (scale * ideal_residual / safe[t])[None, :]
            )
            point = point + _by_topic(terms, t, topics)
            # Over all folds a pair weighs 1 / pi to first order (K / pi - (K - 1) in its
            # own fold, 1 in each of the other K - 1 folds' expansion points).
            contribution[:, inside] = terms * (1.0 / parts.pi[inside] / weight)[None, :]
        per_topic += point / FOLDS
        anticipated += _anticipated(parts, local, gain, at_least, slope, dcg_0, positive, safe)
    counted = parts.scored.sum(axis=1)
    share = np.divide(1.0, counted, out=np.zeros(runs), where=counted > 0)
    estimates = np.where(parts.scored, per_topic, 0.0).sum(axis=1) * share
    contribution *= share[:, None] * parts.scored[:, parts.topic]
    anticipated *= np.outer(share, share) / FOLDS
    return estimates, contribution, anticipated


def _anticipated(parts, local, gain, at_least, slope, dcg_0, positive, safe) -> np.ndarray:
    """runs x runs: sum over pool pairs of (1 / pi - 1) E[u_r u_s] under one fold's
    predictions, u = (W_r a - c_r b) / ideal with a = h - E[h] (the DCG's residual), b the
    ideal's residual through its slope, c_r the run's predicted DCG over the ideal; each
    topic counted for the runs it scores (the same topics as the estimate)."""
    grades = np.arange(parts.levels, dtype=np.float64)
    a = grades[None, None, :] - gain[:, :, None]  # topics x machine grade x human grade
    reaches = (grades[:, None] >= np.arange(1, parts.levels)[None, :]).astype(np.float64)
    b = np.einsum("tg,tmhg->tmh", slope, reaches[None, None] - at_least[:, :, None, :])
    aa, ab, bb = ((local * x * y).sum(axis=-1) for x, y in ((a, a), (a, b), (b, b)))
    c = np.where(parts.scored & positive[None, :], dcg_0 / safe[None, :], 0.0)  # runs x topics
    on = (parts.scored & positive[None, :]) / safe[None, :]  # runs x topics: 1 / ideal or 0
    moments = (
        np.einsum("rstm,tm->rst", parts.f_products, aa)
        - np.einsum("rtm,st,tm->rst", parts.f_weight, c, ab)
        - np.einsum("stm,rt,tm->rst", parts.f_weight, c, ab)
        + np.einsum("rt,st,tm,tm->rst", c, c, parts.f_count, bb)
    )
    return np.einsum("rst,rt,st->rs", moments, on, on)


def expected_ideal(lower, unjudged, at_least, k) -> tuple[np.ndarray, np.ndarray]:
    """Per topic, (E[IDCG@k], E[slope] per grade) when each pair not judged takes a grade from
    its predicted distribution, independently: the count graded >= g is the judged count plus
    one binomial per machine grade; E[IDCG] = sum over g of E[cum(min(C_g, k))], and grade g's
    slope is the expected discount of the next rank, E[disc(C_g + 1)] (0 from rank k on).
    The expectation, not the ideal at the expected counts: the ideal is concave in the counts,
    and the gap (Jensen's) was most of the bias the bench measured before."""
    topics, levels, g = at_least.shape
    disc, cum = discounts(k)
    top = int(min(k, lower.max(initial=0) + unjudged.sum(axis=1).max(initial=0)))
    support = np.arange(top + 1)
    # scipy.stats is imported here: it costs about a second of every process's start.
    from scipy import stats

    pmf = stats.binom.pmf(
        support, unjudged.astype(np.int64)[:, :, None, None], np.clip(at_least, 0, 1)[..., None]
    )  # topics x levels x G x (top + 1)
    pmf[..., top] += np.clip(1.0 - pmf.sum(axis=-1), 0.0, None)  # the tail lumped at top
    total = np.zeros((topics, g, top + 1))
    np.put_along_axis(total, np.minimum(lower, top).astype(np.int64)[..., None], 1.0, axis=-1)
    for m in range(levels):
        total = _add_counts(total, pmf[:, m])
    # Counts stop at top (no topic can hold more, or k): cum and the next rank's discount
    # are needed up to there.
    return (total @ cum[: top + 1]).sum(axis=1), total @ np.append(disc, 0.0)[: top + 1]


def _add_counts(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The distribution of the sum of two counts (last axis: 0..top), the mass past top
    lumped at top (only min(C, k) matters, and top <= k)."""
    top = first.shape[-1] - 1
    out = np.zeros_like(first)
    for i in range(top + 1):
        out[..., i:] += first[..., i : i + 1] * second[..., : top + 1 - i]
        out[..., top] += first[..., i] * second[..., top + 1 - i :].sum(axis=-1)
    return out


def _topic_shift(predicted: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """topics x levels x levels: per topic, the calibration's P(h >= g | m) shifted on the
    logit scale by the topic's own effect (one per grade g, Gaussian prior of variance
    TOPIC_VARIANCE, fitted by Newton's method to the topic's judged pairs): topics differ in
    how many relevant pairs they hold far more than one calibration can say."""
    levels = predicted.shape[-1]
    # A calibration certain of a grade (shares of 0 or 1) stays certain: logit +-inf.
    p = np.clip(np.cumsum(predicted[:, ::-1], axis=-1)[:, ::-1][:, 1:], 0.0, 1.0)
    above = (np.arange(levels)[:, None] >= np.arange(1, levels)[None, :]).astype(np.float64)
    observed = np.einsum("tmh,hg->tg", seen, above)
    n = seen.sum(axis=2)  # topics x levels
    with np.errstate(divide="ignore"):
        base = (np.log(p) - np.log1p(-p))[None]  # 1 x levels x G
    shift = np.zeros((seen.shape[0], levels - 1))
    for _ in range(NEWTON):
        q = 1.0 / (1.0 + np.exp(-(base + shift[:, None, :])))
        information = np.einsum("tm,tmg->tg", n, q * (1 - q)) + 1.0 / TOPIC_VARIANCE
        expected = np.einsum("tm,tmg->tg", n, q)
        shift = shift + (observed - expected - shift / TOPIC_VARIANCE) / information
    q = np.minimum.accumulate(1.0 / (1.0 + np.exp(-(base + shift[:, None, :]))), axis=-1)
    ones, zeros = np.ones((*q.shape[:-1], 1)), np.zeros((*q.shape[:-1], 1))
    full = np.concatenate([ones, q, zeros], axis=-1)
    return full[..., :-1] - full[..., 1:]


def _calibration(parts: Parts, use: np.ndarray) -> np.ndarray:
    """levels x levels: row m is the predicted distribution of the human grade when the
    machine says m, from the sampled pairs in ``use`` weighted by 1 / pi (the machine's own
    grade where none of them has m, or when not calibrating)."""
    predicted = np.eye(parts.levels)
    if not parts.calibrate or not use.any():
        return predicted
    mass = np.zeros((parts.levels, parts.levels))
    np.add.at(mass, (parts.machine[use], parts.human[use]), 1.0 / parts.pi[use])
    total = mass.sum(axis=1)
    predicted[total > 0] = mass[total > 0] / total[total > 0, None]
    return predicted


def _by_topic(terms: np.ndarray, topic: np.ndarray, topics: int) -> np.ndarray:
    """Sums along the last axis by ``topic`` (non-decreasing), zero for a topic with none."""
    out = np.zeros((*terms.shape[:-1], topics))
    starts = np.searchsorted(topic, np.arange(topics))
    has = np.diff(np.append(starts, topic.size)) > 0
    if has.any():
        out[..., has] = np.add.reduceat(terms, starts[has], axis=-1)
    return out
