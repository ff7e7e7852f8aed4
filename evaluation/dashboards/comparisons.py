"""Comparisons: a baseline against one or several runs on one measure, over the topics all
of them have, with evaluation.analysis.significance (Holm when several)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.analysis import significance
from evaluation.analysis.verdicts import COMPARISON_SEED, PERMUTATIONS, VERDICTS, verdict_of
from evaluation.dashboards.scoring import (
    MESSAGES,
    NotScored,
    Scoring,
    choose_measure,
    scored,
)
from evaluation.models import Run


@dataclass
class Contrast:
    """One candidate against the baseline on the topics both have."""

    run: Run
    comparison: significance.Comparison
    deltas: list[tuple[str, float, float, float]]  # (qid, baseline, candidate, delta), by delta

    def chart(self) -> dict:
        return {
            "label": str(self.run),
            "qids": [d[0] for d in self.deltas],
            "deltas": [d[3] for d in self.deltas],
        }

    @property
    def verdict(self) -> str:
        return verdict_of(self.comparison)

    @property
    def verdict_text(self) -> str:
        return VERDICTS[self.verdict]

    @property
    def losses(self) -> list[tuple[str, float, float, float]]:
        return [d for d in self.deltas if d[3] < 0][:10]

    @property
    def gains(self) -> list[tuple[str, float, float, float]]:
        return [d for d in reversed(self.deltas) if d[3] > 0][:10]


@dataclass
class ComparisonView:
    scoring: Scoring
    measure: str
    baseline: Run
    contrasts: list[Contrast]
    topics: int  # topics every run has, the ones compared
    left_out: int  # topics some run lacks (scored without -c), left out of every test

    @property
    def several(self) -> bool:
        return len(self.contrasts) > 1


def build_comparison(
    scoring: Scoring, baseline: Run, others: list[Run], *, measure: str | None = None
) -> ComparisonView:
    """The baseline against each other run on one measure, over the topics all of them have
    (in byte order): significance.compare_many with PERMUTATIONS sign flips, seed
    COMPARISON_SEED and a 95% bootstrap interval of the mean difference; Holm's correction
    across the runs when there are several. NotScored names runs without an evaluation."""
    others = [run for run in others if run.pk != baseline.pk]
    if not others:
        raise ValueError(MESSAGES["same_run"])
    measure = choose_measure(scoring.names, measure)
    runs = [baseline, *others]
    stored = {
        e.run_id: e.per_topic
        for e in scored(scoring, trials=True).filter(run__in=runs).only("run_id", "per_topic")
    }
    missing = [run for run in runs if run.pk not in stored]
    if missing:
        raise NotScored(missing)
    every = set.union(*(set(stored[run.pk]) for run in runs))
    common = sorted(set.intersection(*(set(stored[run.pk]) for run in runs)))
    if not common:
        raise ValueError(MESSAGES["no_common_topics"])
    a = np.array([stored[baseline.pk][qid][measure] for qid in common])
    candidates = {
        str(run.pk): np.array([stored[run.pk][qid][measure] for qid in common]) for run in others
    }
    results = significance.compare_many(
        a, candidates, permutations=PERMUTATIONS, seed=COMPARISON_SEED
    )
    contrasts = []
    for run in others:
        b = candidates[str(run.pk)]
        deltas = sorted(
            (
                (qid, float(x), float(y), float(y - x))
                for qid, x, y in zip(common, a, b, strict=True)
            ),
            key=lambda d: (d[3], d[0].encode()),
        )
        contrasts.append(Contrast(run, results[str(run.pk)], deltas))
    return ComparisonView(
        scoring, measure, baseline, contrasts, len(common), len(every) - len(common)
    )
