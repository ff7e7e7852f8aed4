"""A machine judge against humans: Cohen's kappa (unweighted, linear, quadratic) with
bootstrap intervals against another set of grades of the same pairs (a human judge, the
humans' consensus, the published qrels), per topic worst first, the confusion matrix, and the
machine's lean (does it grade higher or lower than the other?). Pure: numpy only.

Grades are mappings ``pair -> grade``; only the pairs both sides graded count. The humans'
consensus of a pair is the median of its human grades (the lower median on ties), as
``human_consensus`` makes it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .core import RESAMPLES, Statistic, check_scale, encode, undefined
from .kappa import cohen_kappa, confusion_of

WEIGHTINGS = {"unweighted": None, "linear": "linear", "quadratic": "quadratic"}


@dataclass(frozen=True)
class Lean:
    """How the machine's grades sit against the other's on the pairs both graded: the mean
    of (machine - other), and the shares of pairs graded higher, the same, lower."""

    mean_difference: float | None
    higher: float | None
    same: float | None
    lower: float | None

    @property
    def words(self) -> str:
        if self.mean_difference is None:
            return "no pair in common"
        if abs(self.mean_difference) < 0.05:
            return "no lean"
        direction = "higher" if self.mean_difference > 0 else "lower"
        return f"grades {direction} by {abs(self.mean_difference):.2f} on average"


@dataclass(frozen=True)
class TopicKappa:
    topic: Hashable
    n: int
    kappa: Statistic
    mean_difference: float | None


@dataclass(frozen=True)
class MachineComparison:
    """The machine against one other set of grades."""

    against: str
    n: int
    kappa: dict[str, Statistic]  # by weighting: unweighted, linear, quadratic
    confusion: list[list[int]]  # rows: the machine's grade; columns: the other's
    lean: Lean
    topics: list[TopicKappa]  # worst first (undefined last), with the report's weighting


def human_consensus(grades_by_judge: Mapping[Hashable, Mapping[Hashable, int]]) -> dict:
    """pair -> the median of its human grades (the lower median on ties)."""
    collected: dict[Hashable, list[int]] = defaultdict(list)
    for grades in grades_by_judge.values():
        for pair, grade in grades.items():
            collected[pair].append(grade)
    return {pair: sorted(values)[(len(values) - 1) // 2] for pair, values in collected.items()}


def lean_of(machine: Sequence[int], other: Sequence[int]) -> Lean:
    if not machine:
        return Lean(None, None, None, None)
    difference = np.asarray(machine, dtype=np.float64) - np.asarray(other, dtype=np.float64)
    n = len(difference)
    return Lean(
        mean_difference=float(difference.mean()),
        higher=float((difference > 0).sum() / n),
        same=float((difference == 0).sum() / n),
        lower=float((difference < 0).sum() / n),
    )


def compare_machine(
    machine: Mapping[Hashable, int],
    other: Mapping[Hashable, int],
    *,
    against: str,
    scale: Sequence[int],
    topic_of: Mapping[Hashable, Hashable] | None = None,
    weights: str | None = "linear",
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> MachineComparison:
    """The machine's grades against ``other``'s on the pairs both graded. ``topic_of`` maps a
    pair to its topic for the per-topic kappas (with ``weights``), worst first."""
    grades = check_scale(scale)
    shared = sorted((pair for pair in machine if pair in other), key=repr)
    a = [machine[pair] for pair in shared]
    b = [other[pair] for pair in shared]
    kappa = {
        name: cohen_kappa(
            a,
            b,
            scale=grades,
            weights=weighting,
            resamples=resamples,
            seed=seed,
            confidence=confidence,
        )
        for name, weighting in WEIGHTINGS.items()
    }
    k = len(grades)
    confusion = (
        confusion_of(encode(a, grades), encode(b, grades), k)
        if shared
        else np.zeros((k, k), dtype=int)
    )
    topics: list[TopicKappa] = []
    if topic_of is not None:
        by_topic: dict[Hashable, list[Hashable]] = defaultdict(list)
        for pair in shared:
            by_topic[topic_of[pair]].append(pair)
        for topic, pairs in by_topic.items():
            ta = [machine[p] for p in pairs]
            tb = [other[p] for p in pairs]
            statistic = (
                cohen_kappa(ta, tb, scale=grades, weights=weights, resamples=0, seed=seed)
                if len(pairs) >= 2
                else undefined("only 1 pair in common; kappa needs at least 2", n=len(pairs))
            )
            topics.append(TopicKappa(topic, len(pairs), statistic, lean_of(ta, tb).mean_difference))
        topics.sort(
            key=lambda t: (
                t.kappa.value is None,
                t.kappa.value if t.kappa.value is not None else 0.0,
                str(t.topic),
            )
        )
    return MachineComparison(
        against=against,
        n=len(shared),
        kappa=kappa,
        confusion=confusion.tolist(),
        lean=lean_of(a, b),
        topics=topics,
    )
