"""Where agreement breaks down: per topic, per judge (grade use and leniency), and each
judge against gold grades. Pure: numpy and scipy only."""

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .core import (
    RESAMPLES,
    Block,
    Item,
    Judge,
    Ratings,
    Statistic,
    check_bootstrap,
    check_scale,
    check_weights,
    encode,
    finish,
    item_rows,
    ordered,
    run_blocks,
    undefined,
)
from .kappa import agreement_from_confusion, confusion_of, kappa_from_confusion, kappa_reason
from .multirater import krippendorff_alpha, observed_agreement

# --- per topic -------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicAgreement:
    """One topic's agreement. pairs: pairs of the topic with any judgment;
    multiply_judged: graded by two or more judges; disputed: of those, graded differently."""

    topic: Hashable
    pairs: int
    multiply_judged: int
    disputed: int
    observed: Statistic
    alpha_ordinal: Statistic


def agreement_by_topic(ratings: Ratings, topic_of: Mapping[Item, Hashable]) -> list[TopicAgreement]:
    """Per-topic agreement (no intervals: topics are small), worst first: by ordinal alpha
    ascending, then observed agreement; topics whose alpha is undefined come last."""
    missing = [item for item in ratings.items if item not in topic_of]
    if missing:
        raise ValueError(f"every pair needs a topic; {len(missing)} have none, e.g. {missing[0]!r}")
    rows_of: dict[Hashable, list[int]] = defaultdict(list)
    for row, item in enumerate(ratings.items):
        rows_of[topic_of[item]].append(row)
    result = []
    for topic in ordered(rows_of):
        part = ratings.subset(np.asarray(rows_of[topic]))
        counts = part.counts[part.judgments_per_item >= 2]
        result.append(
            TopicAgreement(
                topic=topic,
                pairs=len(part.items),
                multiply_judged=len(counts),
                disputed=int(((counts > 0).sum(axis=1) > 1).sum()),
                observed=observed_agreement(part, resamples=0),
                alpha_ordinal=krippendorff_alpha(part, level="ordinal", resamples=0),
            )
        )

    def worst_first(t: TopicAgreement):
        alpha, observed = t.alpha_ordinal.value, t.observed.value
        return (alpha is None, alpha or 0.0, observed is None, observed or 0.0)

    return sorted(result, key=worst_first)


# --- per judge -------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeProfile:
    """How one judge grades. grade_counts: judgments per grade of the scale. leniency: mean
    of (this judge's grade - the median of the other judges' grades of the same pair, the
    midpoint of the two middle grades when they are even in number) over the pairs others
    graded too; positive = lenient, negative = strict. (The lower median would be biased:
    with two other judges it is the lower of their grades, so a judge who grades exactly
    like the others would look lenient.)"""

    judge: Judge
    judged: int
    grade_counts: tuple[int, ...]
    leniency: Statistic


def lower_median(counts: np.ndarray) -> np.ndarray:
    """Per row of grade counts (rows with >= 1 grade), the position of the lower median:
    the ceil(m/2)-th smallest of the m grades."""
    need = (counts.sum(axis=1) + 1) // 2
    return np.argmax(np.cumsum(counts, axis=1) >= need[:, None], axis=1)


def median_grade(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row of grade counts (rows with >= 1 grade), the median grade: the middle one of
    an odd number, the midpoint of the two middle ones of an even number."""
    upper = np.argmax(np.cumsum(counts, axis=1) > (counts.sum(axis=1) // 2)[:, None], axis=1)
    return (values[lower_median(counts)] + values[upper]) / 2


def judge_profiles(ratings: Ratings) -> list[JudgeProfile]:
    """Grade distribution and leniency of every judge, in judge order."""
    k = len(ratings.scale)
    values = np.asarray(ratings.scale, dtype=np.float64)
    codes, counts = ratings.codes.astype(np.int64), ratings.counts
    profiles = []
    for j, judge in enumerate(ratings.judges):
        mine = codes[:, j]
        graded = np.flatnonzero(mine >= 0)
        own = mine[graded]
        others = counts[graded] - np.eye(k, dtype=counts.dtype)[own]
        compared = others.sum(axis=1) > 0
        if compared.any():
            diff = values[own[compared]] - median_grade(others[compared], values)
            leniency = Statistic(value=float(diff.mean()), n=int(compared.sum()))
        else:
            leniency = undefined("no other judge graded any of this judge's pairs")
        profiles.append(
            JudgeProfile(
                judge=judge,
                judged=len(graded),
                grade_counts=tuple(int(x) for x in np.bincount(own, minlength=k)),
                leniency=leniency,
            )
        )
    return profiles


# --- against gold ----------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """A judge against gold grades on the n pairs both graded. mean_absolute_error is in
    grades; kappa is unweighted, weighted_kappa uses ``weights``; rows are the judge."""

    n: int
    accuracy: Statistic
    mean_absolute_error: Statistic
    kappa: Statistic
    weighted_kappa: Statistic
    weights: str | None


def calibrate_judge(
    grades: Mapping[Item, int],
    gold: Mapping[Item, int],
    *,
    scale: Sequence[int],
    weights: str | None = "quadratic",
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> Calibration:
    """Compare a judge's grades with gold grades over the pairs in both, with percentile
    bootstrap intervals over those pairs."""
    grades_ = check_scale(scale)
    check_weights(weights)
    check_bootstrap(resamples, confidence)
    items = ordered(item for item in grades if item in gold)
    n, k = len(items), len(grades_)
    if n == 0:
        reason = "the judge graded none of the gold pairs"
        nothing = undefined(reason)
        return Calibration(0, nothing, nothing, nothing, nothing, weights)
    judge = encode((grades[i] for i in items), grades_)
    truth = encode((gold[i] for i in items), grades_)
    confusion = confusion_of(judge, truth, k)
    distance = np.abs(np.subtract.outer(np.asarray(grades_), np.asarray(grades_)))

    def evaluate(sums: np.ndarray) -> np.ndarray:
        c = sums.reshape(-1, k, k)
        return np.stack(
            [
                agreement_from_confusion(c),
                (c * distance).sum(axis=(1, 2)) / c.sum(axis=(1, 2)),
                kappa_from_confusion(c, None),
                kappa_from_confusion(c, weights),
            ],
            axis=-1,
        )

    block = Block(item_rows(n, judge * k + truth, k * k), evaluate)
    [(point, samples)] = run_blocks([block], resamples=resamples, seed=seed)

    def value(column: int, reason=lambda: "") -> Statistic:
        return finish(
            point[column],
            n=n,
            samples=None if samples is None else samples[:, column],
            confidence=confidence,
            reason=reason,
        )

    why = lambda: kappa_reason(confusion, grades_, who="the judge and gold")  # noqa: E731
    return Calibration(n, value(0), value(1), value(2, why), value(3, why), weights)


@dataclass(frozen=True)
class JudgeFlag:
    """A judge to look at: kappa against gold below the bar, or not checkable (reason)."""

    judge: Judge
    kappa: Statistic
    reason: str


def flag_judges(
    calibrations: Mapping[Judge, Calibration], *, min_kappa: float = 0.6
) -> list[JudgeFlag]:
    """Judges whose weighted kappa against gold is below ``min_kappa`` (lowest first), then
    those whose kappa is undefined. Kappa, not accuracy: accuracy rewards a judge who gives
    every pair the most common gold grade, kappa discounts agreement expected by chance."""
    low, unknown = [], []
    for judge, calibration in calibrations.items():
        kappa = calibration.weighted_kappa
        if kappa.value is None:
            unknown.append(JudgeFlag(judge, kappa, f"cannot be checked: {kappa.reason}"))
        elif kappa.value < min_kappa:
            reason = f"kappa {kappa.value:.4f} against gold is below {min_kappa:.4f}"
            low.append(JudgeFlag(judge, kappa, reason))
    low.sort(key=lambda flag: flag.kappa.value)
    return low + unknown
