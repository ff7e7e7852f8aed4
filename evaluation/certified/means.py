"""Certified means: each run's mean nDCG@k as all-human grades would give it, estimated from
a machine's grades on the whole pool and human grades on a sample, with an interval, and the
leaderboard's order. Pure: numpy and scipy.

The estimate (prediction-powered: Angelopoulos et al., Science 2023; for IR, Oosterhuis et
al., KDD 2024, arXiv 2407.02464). nDCG@k of run r on topic t is DCG / IDCG: the DCG is linear
in the grades (evaluation.certified.pool), the ideal DCG is not (it depends on how many of
the topic's pairs are graded g or higher, through a concave function), and a few human
grades a topic leave it poorly known. So, per topic, the estimator (``estimator.py``):

1. predicts every pair's human grade from the machine's: a distribution per machine grade
   (the weighted shares of human grades among the sampled pairs the machine graded so;
   ``calibrate=False`` takes the machine's grade as the human's), shifted per topic on the
   logit scale by what the humans found in that topic (topics differ in how many relevant
   pairs they hold far more than one calibration can say);
2. takes the model's expected nDCG there: the predicted DCG over the *expected* ideal DCG
   (each unjudged pair's grade drawn from its prediction; the ideal at the expected counts
   would be too high, by Jensen's inequality, and was most of the bias measured before);
3. corrects it to first order by the human-minus-predicted residuals of sampled pairs
   (on the DCG, and on the ideal through its expected slope), each weighted by the inverse
   of its inclusion probability, as the difference estimator of survey sampling does;
4. cross-fits: the sample is dealt into 4 folds; each fold's residuals correct an expansion
   point built from the other folds' humans (their grades exact, and the calibration and
   topic shifts fitted on them), so a correction is never drawn from the pairs it is
   measured against. The estimate is the mean over the folds.

Validity, exactly. The correction is unbiased for the first-order term (exactly for Poisson
sampling, nearly for fixed-size strata), so the estimate's bias is second order in how far
the model's predicted grades are from the truth. It does not vanish with more topics at a
fixed number of human grades a topic; it vanishes when every pair is sampled (each
expansion point is then the all-human grades and the estimate is exact, interval width 0).
bench/machine_trust.py measures it: about -0.3 standard errors on average with 5-20% of a
3,000-pair pool over 50 topics (the estimates lean low); with the interval below, the 95%
intervals' coverage is 91.5-99.2% by setting (87-98% with the design's variance alone).
There is no unbiased estimator of a ratio under sampling; README, "What the certified
intervals mean, and when not to trust them", says when not to trust the intervals.

The interval. The estimate is linear in the weighted residuals to first order; each sampled
pair d contributes v[r, d] (its residual terms over the topic's expected ideal, times
1 / pi over the folds, over T_r, the run's topic count), and

    Var = sum over sampled d of (1 - pi_d) v[r, d]^2                 (Poisson draws)
    Var = sum over strata h of (1 - n_h / N_h) n_h / (n_h - 1) sum over the stratum's
          sampled d of (v[r, d] - mean_h v[r, .])^2             (fixed-size strata)

(the Horvitz-Thompson variance estimators). With a fixed truth and many samples, this
standard error matches the estimates' spread (ratio 0.91-1.16 in the measurements
bench/README.md reports), but from one sample it is noisy in the wrong direction: the
residuals are skewed (most pairs agree with the prediction, a few disagree by grades), so a
sample that missed the disagreements of a topic both leans low and claims a small variance
(the bench measured the errors' spread at up to 1.28 standard errors, with the standard
errors matching the spread across samples). So the interval also takes the *anticipated*
variance (Isaki and Fuller, JASA 1982): the same sum over every pool pair, not only the
sampled ones, of (1 / pi - 1) times the expected square of its term when its human grade is
drawn from its predicted distribution (estimator.py). It comes from the calibration, which
pools every topic, so it does not collapse with a topic's few pairs. The interval is
estimate +- z sqrt(max(Var, anticipated Var)): the larger of two estimates of the same
variance, the design's (valid whatever the model) and the model's (stable), so it is never
narrower than the design's. Both are 0 when every pair is sampled or the machine agrees with
every human grade.

The order (``ranking.py``). The leaderboard is sorted by a ranking score: the nDCG of the
filled-in qrels (the humans' grades where they judged, the machine's elsewhere: filling holes,
arXiv 2405.04727) plus the certified correction shrunk by empirical Bayes as far as it is
noise, runs that rank the same unjudged documents sharing their corrections. The intervals and settled pairs stay the certified estimate's; the score has none.

Which pairs of runs are settled: the difference's interval excludes 0 (its variance, too,
the larger of the two). With many runs,
many pairs are tested at once, so some "settled" pairs are settled by chance (about 5% of
the truly tied ones); ``settled_holm`` applies Holm's step-down correction to the
two-sided normal p-values over all pairs, which holds the chance of any false "settled" at
most 1 - level.
"""

from dataclasses import dataclass

import numpy as np
from scipy import special

from evaluation.analysis.significance import adjust_holm

from .estimator import estimate as estimate_runs
from .estimator import gather_parts
from .pool import Pool, check_grades, mean_over_scored, ndcg_means, ndcg_per_topic
from .ranking import shared_documents, shrink_corrections
from .sampling import Sample

__all__ = ["Certified", "RunEstimate", "Settlement", "certify_means"]

MISSING_HUMANS = "every chosen pair needs its human grade before the means can be certified"
NO_HUMANS = "no pair was chosen for the humans: a certified mean needs at least one human grade"


@dataclass(frozen=True)
class RunEstimate:
    run: str
    estimate: float
    low: float
    high: float
    se: float
    machine_only: float  # the mean with the machine's grades alone, for comparison
    topics: int
    # The score the leaderboard is sorted by (evaluation.certified.ranking); no interval.
    score: float = float("nan")


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
    """The certified leaderboard: runs best first (by ranking score), and every pair of runs."""

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

    def ranking_scores(self) -> dict[str, float]:
        """run -> the score the leaderboard is sorted by (evaluation.certified.ranking)."""
        return {r.run: r.score for r in self.runs}


def certify_means(
    pool: Pool,
    machine: np.ndarray,
    sample: Sample,
    human: np.ndarray,
    *,
    level: float = 0.95,
    calibrate: bool = True,
    seed: int = 0,
) -> Certified:
    """Each run's mean nDCG@k with a prediction-powered interval, and the leaderboard's order
    (see the module).

    machine: the machine's grade of every pool pair (``pool.pairs`` order); sample: the
    design that chose the human pairs; human: the human grade of each of ``sample.chosen``,
    in that order; seed: how the sample is dealt into folds (the same inputs and seed give
    the same result).
    """
    machine, human = _check(pool, machine, sample, human, level)
    parts = gather_parts(pool, machine, sample, human, calibrate, seed)
    estimate, contribution, anticipated = estimate_runs(parts)
    covariance = _covariance(contribution, sample)
    # The interval's variance: the larger of the design's estimate and the anticipated one
    # (see the module); the order's shrinking keeps the design's covariance.
    se = np.sqrt(np.maximum(np.maximum(np.diag(covariance), np.diag(anticipated)), 0.0))
    z = float(special.ndtri(0.5 + level / 2))
    machine_only = ndcg_means(pool, machine)

    # The order: the certified estimate shrunk towards the filled-in qrels (humans' grades
    # where they judged, the machine's elsewhere) as far as its correction is noise, the
    # runs that share unjudged documents sharing their corrections (ranking.py).
    filled = machine.copy()
    filled[sample.chosen] = human
    hybrid = mean_over_scored(pool, ndcg_per_topic(pool, filled))
    prior = shared_documents(pool, filled, sample.chosen)
    score = hybrid + shrink_corrections(estimate - hybrid, covariance, prior)

    order = sorted(range(len(pool.runs)), key=lambda r: (-score[r], pool.runs[r]))
    runs = tuple(
        RunEstimate(
            pool.runs[r],
            float(estimate[r]),
            float(estimate[r] - z * se[r]),
            float(estimate[r] + z * se[r]),
            float(se[r]),
            machine_only[pool.runs[r]],
            int(pool.scored[r].sum()),
            float(score[r]),
        )
        for r in order
    )
    return Certified(
        runs,
        _settle(pool, order, estimate, (covariance, anticipated), z, level),
        level,
        pool.k,
        int(sample.chosen.size),
        pool.size,
        calibrate,
    )


def _settle(pool, order, estimate, covariances, z, level) -> tuple[Settlement, ...]:
    """Every pair of runs; a difference's variance is the larger of its estimates under
    ``covariances`` (the design's and the anticipated one)."""
    found = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            difference = float(estimate[a] - estimate[b])
            var = max(c[a, a] + c[b, b] - 2 * c[a, b] for c in covariances)
            se = float(np.sqrt(max(var, 0.0)))
            if se > 0:
                p = float(2 * special.ndtr(-abs(difference) / se))
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


def _covariance(contribution: np.ndarray, sample: Sample) -> np.ndarray:
    """runs x runs: the delta method's covariance of the estimates from each sampled pair's
    contribution v (see the module)."""
    pi = sample.probability[sample.chosen]
    if sample.stratum is None:
        weighted = contribution * np.sqrt(1.0 - pi)
        return weighted @ weighted.T
    runs = contribution.shape[0]
    covariance = np.zeros((runs, runs))
    sizes = np.bincount(sample.stratum)
    stratum = sample.stratum[sample.chosen]
    taken = np.bincount(stratum, minlength=sizes.size)
    for h in np.flatnonzero((taken > 1) & (taken < sizes)):
        block = contribution[:, stratum == h]
        centred = block - block.mean(axis=1, keepdims=True)
        factor = (1.0 - taken[h] / sizes[h]) * taken[h] / (taken[h] - 1)
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
    chosen = np.asarray(sample.chosen)
    if chosen.ndim != 1 or (chosen.size and (chosen.min() < 0 or chosen.max() >= pool.size)):
        raise ValueError("the sample's chosen pairs must be positions in the pool")
    if (np.diff(chosen) <= 0).any():
        raise ValueError("the sample's chosen pairs must be ascending and each chosen once")
    if not chosen.size:
        raise ValueError(NO_HUMANS)
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
