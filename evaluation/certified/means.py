"""Certified means: each run's mean nDCG@k as all-human grades would give it, estimated from
a machine's grades on the whole pool and human grades on a sample, with a valid interval
(prediction-powered inference). Pure: numpy and scipy.

The estimator. For a total that is linear in the grades, such as a run's DCG@k on a topic,
the machine's total is corrected by the human-minus-machine residuals on the sample, each
weighted by 1 / its inclusion probability pi (the difference estimator of survey sampling;
prediction-powered inference, Angelopoulos et al., Science 2023; for IR, Oosterhuis et al.,
KDD 2024, arXiv 2407.02464):

    DCG^(r, t) = sum over pairs d of t of W[r, d] f(m_d)
               + sum over sampled pairs d of t of W[r, d] (h_d - f(m_d)) / pi_d

where m_d is the machine's grade, h_d the human's, and f(m) the grade predicted from the
machine's: f(m) = m with ``calibrate=False`` (classic PPI), or by default the mean human
grade of the sampled pairs the machine graded m (each weighted by 1 / pi; f(m) = m where no
sampled pair has machine grade m). Either way the correction makes the total unbiased over
the draws of the sample; calibrating removes the machine's systematic lean (a lenient
machine's "1"s that humans call 0) from the residuals, so the interval is narrower. The
ideal DCG@k depends on the grades through how many pairs of the topic are graded g or
higher (evaluation.certified.pool); each count is estimated the same way, with the predicted
distribution of human grades for each machine grade in place of f (the indicator of m when
not calibrating), and the ideal DCG computed from the estimated counts.

The normaliser, honestly. nDCG is a ratio and the ideal DCG a non-linear (piecewise linear,
concave) function of the counts, and with a few human grades a topic the estimated counts
swing by 1 / pi per disagreement, so the plug-in DCG^ / IDCG(counts^) can divide by a
near-zero ideal. Instead, per topic the ratio is expanded to first order around a stable
point: c0, the predicted counts moved towards the estimated ones by the empirical-Bayes
share of the topics' spread that is not sampling noise (per grade), kept within what the
sample shows (at least the pairs seen graded >= g, at most the topic's size minus those
seen below g), I0 = IDCG(c0), s0 its slopes, DCG0 the predicted DCG:

    nDCG^(r, t) = DCG^(r, t) / I0 - DCG0(r, t) * s0 . (counts^ - c0) / I0^2

This is linear in the weighted residuals, so its variance is exact for the linear part; the
bias left is second order in how far c0 is from the true counts (the concave ideal and the
convex 1 / I both push it down), and it vanishes when every pair is sampled (c0 is then the
truth). bench/machine_trust.py measures what is left: intervals covering 86-94% instead of
95% with 5-20% of a 3,000-pair pool over 50 topics. Each sampled pair d contributes the
influence

    u[r, d] = (1 / T_r) (W[r, d] e_d / I0 - DCG0 phi_d / I0^2)

with e_d the gain residual (h_d - f(m_d)), phi_d the residual of the pair's slope on the
ideal DCG, and T_r the run's topic count; then Var = sum over sampled d of
(1 - pi_d) / pi_d^2 u[r, d]^2 for independent (Poisson) draws, or
sum over strata h of N_h^2 (1 - n_h / N_h) s_h^2 / n_h (s_h^2 the spread of u within the
stratum's sample) for strata sampled to fixed sizes. The interval is the estimate
+- z_(1 - alpha/2) sqrt(Var). The same influences, differenced, give each pair of runs'
difference its own (paired) interval. The variance is estimated from the pairs where humans
and the machine disagree; with very few of those, the interval can be too narrow: see
README, "Machine judges". A topic whose expansion point has no relevant pair (I0 = 0)
counts 0, as trec_eval counts a topic with an empty ideal.

With every pair sampled (pi = 1) the estimate is the all-human value and the interval has
zero width.

Which pairs of runs are settled: the difference's interval excludes 0. With many runs,
many pairs are tested at once, so some "settled" pairs are settled by chance (about 5% of
the truly tied ones); ``settled_holm`` applies Holm's step-down correction to the
two-sided normal p-values over all pairs, which holds the chance of any false "settled" at
most 1 - level.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from evaluation.analysis.significance import adjust_holm

from .pool import Pool, check_grades, dcg, ideal_dcg, mean_over_scored, ndcg_means
from .sampling import Sample

__all__ = ["Certified", "RunEstimate", "Settlement", "certify_means"]

MISSING_HUMANS = "every chosen pair needs its human grade before the means can be certified"


@dataclass(frozen=True)
class RunEstimate:
    run: str
    estimate: float
    low: float
    high: float
    se: float
    machine_only: float  # the mean with the machine's grades alone, for comparison
    topics: int


@dataclass(frozen=True)
class Settlement:
    """Run ``a`` minus run ``b`` (a listed first in the leaderboard's order)."""

    a: str
    b: str
    difference: float
    low: float
    high: float
    p_value: float
    p_holm: float
    settled: bool  # the interval excludes 0
    settled_holm: bool  # still so after Holm's correction over all pairs


@dataclass(frozen=True)
class Certified:
    """The certified leaderboard: runs best first, and every pair of runs."""

    runs: tuple[RunEstimate, ...]
    pairs: tuple[Settlement, ...]
    level: float
    k: int
    humans: int  # sampled pairs (human grades used)
    pool_size: int
    calibrated: bool

    def settled_share(self, *, holm: bool = True) -> float:
        """The share of pairs of runs whose order is settled."""
        if not self.pairs:
            return 1.0
        return sum(p.settled_holm if holm else p.settled for p in self.pairs) / len(self.pairs)

    def estimates(self) -> dict[str, float]:
        return {r.run: r.estimate for r in self.runs}


def certify_means(
    pool: Pool,
    machine: np.ndarray,
    sample: Sample,
    human: np.ndarray,
    *,
    level: float = 0.95,
    calibrate: bool = True,
) -> Certified:
    """Each run's mean nDCG@k with a prediction-powered interval (see the module).

    machine: the machine's grade of every pool pair (``pool.pairs`` order); sample: the
    design that chose the human pairs; human: the human grade of each of ``sample.chosen``,
    in that order.
    """
    machine, human = _check(pool, machine, sample, human, level)
    chosen, pi = sample.chosen, sample.probability[sample.chosen]
    levels = pool.top_grade + 1
    predicted = _predictions(machine[chosen], human, pi, levels, calibrate)  # grade x grade
    expected_gain = predicted @ np.arange(levels)

    # Linear totals: the predicted part over the pool plus the weighted residuals.
    weight = np.zeros(pool.size)
    weight[chosen] = 1.0 / pi
    residual_gain = np.zeros(pool.size)
    residual_gain[chosen] = human - expected_gain[machine[chosen]]
    gains = expected_gain[machine] + weight * residual_gain
    dcg_hat = dcg(pool, gains)
    at_least_predicted = np.cumsum(predicted[:, ::-1], axis=1)[:, ::-1][:, 1:]  # P(h >= g | m)
    indicator = (np.arange(1, levels)[None, :] <= human[:, None]).astype(np.float64)
    count_residual = np.zeros((pool.size, levels - 1))
    count_residual[chosen] = indicator - at_least_predicted[machine[chosen]]
    by_topic = pool.starts[:-1]
    counts_hat = np.add.reduceat(
        at_least_predicted[machine] + weight[:, None] * count_residual, by_topic, axis=0
    )
    # The expansion point: the predicted counts, kept within what the humans have seen (a
    # topic has at least as many pairs graded g or higher as the sample shows, and at most
    # its size minus those the sample shows below g). Fully sampled, it is the truth.
    seen = np.zeros((pool.size, levels - 1))
    seen[chosen] = indicator
    seen_below = np.zeros((pool.size, levels - 1))
    seen_below[chosen] = 1.0 - indicator
    lower = np.add.reduceat(seen, by_topic, axis=0)
    upper = np.diff(pool.starts)[:, None] - np.add.reduceat(seen_below, by_topic, axis=0)
    counts_0 = _expansion_point(
        np.add.reduceat(at_least_predicted[machine], by_topic, axis=0),
        counts_hat,
        np.add.reduceat(
            weight[:, None] * (weight[:, None] - 1.0) * count_residual**2, by_topic, axis=0
        ),
        lower,
        upper,
    )
    ideal, slope = ideal_dcg(counts_0, pool.k)
    dcg_0 = dcg(pool, expected_gain[machine])

    positive = ideal > 0
    safe_ideal = np.where(positive, ideal, 1.0)
    ideal_step = (slope * (counts_hat - counts_0)).sum(axis=1)
    per_topic = np.where(positive, dcg_hat / safe_ideal - dcg_0 * ideal_step / safe_ideal**2, 0.0)
    estimate = mean_over_scored(pool, per_topic)

    # Influences of the sampled pairs (runs x sampled): the estimate is linear in the
    # weighted residuals, so these give its variance.
    t = pool.topic[chosen]
    counted = pool.scored / np.maximum(pool.scored.sum(axis=1), 1)[:, None]  # 1 / T_r
    scale = np.where(positive, 1.0, 0.0)[t] * counted[:, t]
    ideal_residual = (slope[t] * count_residual[chosen]).sum(axis=1)
    influence = scale * (
        pool.weights[:, chosen] * residual_gain[chosen] / safe_ideal[t]
        - dcg_0[:, t] * ideal_residual / safe_ideal[t] ** 2
    )
    covariance = _covariance(influence, sample)
    se = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    z = float(stats.norm.ppf(0.5 + level / 2))
    machine_only = ndcg_means(pool, machine)

    order = sorted(range(len(pool.runs)), key=lambda r: (-estimate[r], pool.runs[r]))
    runs = tuple(
        RunEstimate(
            pool.runs[r],
            float(estimate[r]),
            float(estimate[r] - z * se[r]),
            float(estimate[r] + z * se[r]),
            float(se[r]),
            machine_only[pool.runs[r]],
            int(pool.scored[r].sum()),
        )
        for r in order
    )
    return Certified(
        runs,
        _settle(pool, order, estimate, covariance, z, level),
        level,
        pool.k,
        int(chosen.size),
        pool.size,
        calibrate,
    )


def _settle(pool, order, estimate, covariance, z, level) -> tuple[Settlement, ...]:
    found = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            difference = float(estimate[a] - estimate[b])
            var = covariance[a, a] + covariance[b, b] - 2 * covariance[a, b]
            se = float(np.sqrt(max(var, 0.0)))
            if se > 0:
                p = float(2 * stats.norm.sf(abs(difference) / se))
            else:
                p = 0.0 if difference != 0 else 1.0
            found.append((a, b, difference, se, p))
    holm = adjust_holm([p for *_, p in found]) if found else []
    return tuple(
        Settlement(
            pool.runs[a],
            pool.runs[b],
            difference,
            difference - z * se,
            difference + z * se,
            p,
            float(adjusted),
            bool(difference - z * se > 0 or difference + z * se < 0),
            bool(adjusted < 1 - level),
        )
        for (a, b, difference, se, p), adjusted in zip(found, holm, strict=True)
    )


def _expansion_point(predicted, estimated, noise, lower, upper) -> np.ndarray:
    """Per topic and grade, the counts the ideal DCG is expanded around: the predicted
    counts moved towards the estimated ones by the empirical Bayes share of the
    topics' spread that is real (James-Stein, per grade), kept within what the humans have
    seen."""
    gap = estimated - predicted
    spread = gap.var(axis=0) if gap.shape[0] > 1 else np.zeros(gap.shape[1])
    share = np.clip(1.0 - noise.mean(axis=0) / np.maximum(spread, 1e-12), 0.0, 1.0)
    return np.clip(predicted + share * gap, lower, upper)


def _predictions(machine, human, pi, levels, calibrate) -> np.ndarray:
    """levels x levels: row m is the predicted distribution of the human grade when the
    machine says m (the identity when not calibrating, or where no sampled pair has m)."""
    predicted = np.eye(levels)
    if calibrate:
        mass = np.zeros((levels, levels))
        np.add.at(mass, (machine, human), 1.0 / pi)
        seen = mass.sum(axis=1) > 0
        predicted[seen] = mass[seen] / mass[seen].sum(axis=1, keepdims=True)
    return predicted


def _covariance(influence: np.ndarray, sample: Sample) -> np.ndarray:
    """runs x runs: the estimated covariance of the estimates (see the module)."""
    pi = sample.probability[sample.chosen]
    if sample.stratum is None:
        weighted = influence * np.sqrt(1.0 - pi) / pi
        return weighted @ weighted.T
    runs = influence.shape[0]
    covariance = np.zeros((runs, runs))
    sizes = np.bincount(sample.stratum)
    stratum = sample.stratum[sample.chosen]
    taken = np.bincount(stratum, minlength=sizes.size)
    for h in np.flatnonzero((taken > 1) & (taken < sizes)):
        block = influence[:, stratum == h]
        centred = block - block.mean(axis=1, keepdims=True)
        factor = sizes[h] ** 2 * (1.0 - taken[h] / sizes[h]) / taken[h] / (taken[h] - 1)
        covariance += factor * (centred @ centred.T)
    return covariance


def _check(pool, machine, sample, human, level):
    if not 0.0 < level < 1.0:
        raise ValueError(f"the level must be between 0 and 1, got {level}")
    machine = check_grades(np.asarray(machine), pool.top_grade)
    if machine.shape != (pool.size,):
        raise ValueError(f"expected {pool.size} machine grades (one per pool pair)")
    if sample.probability.shape != (pool.size,):
        raise ValueError("the sample was drawn from a pool of another size")
    if not ((sample.probability > 0) & (sample.probability <= 1)).all():
        raise ValueError("every inclusion probability must be in (0, 1]")
    human = np.asarray(human)
    if human.shape != sample.chosen.shape:
        raise ValueError(f"{MISSING_HUMANS}: {sample.chosen.size} chosen, {human.size} grades")
    if sample.stratum is not None:
        sizes = np.bincount(sample.stratum)
        taken = np.bincount(sample.stratum[sample.chosen], minlength=sizes.size)
        short = (taken < np.minimum(sizes, 2)) & (sizes > taken)
        if short.any():
            raise ValueError("every stratum sampled short of whole needs at least two pairs")
    return machine, check_grades(human, pool.top_grade)
