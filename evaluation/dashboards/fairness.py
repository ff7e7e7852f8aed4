"""The leave-one-run-out test as the leaderboard, a run's page and the API show it: the
stored report for a scoring (evaluation.services.fairness), one row per run on one measure."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation import measures, services
from evaluation.dashboards.scoring import Scoring

# A run whose score falls by more than this when left out of the pool is flagged: new
# systems outside the pool are likely judged unfairly low by this much.
FAIRNESS_WARNING = 0.01

MESSAGES = {
    "badge_fair": "Pool-fair: left out of the pool, its {measure} would drop by {drop:.4f}.",
    "badge_unfair": (
        "Pool bias: left out of the pool, its {measure} would drop by {drop:.4f} "
        "(rank {rank_full} → {rank_reduced}): a system that never entered this pool is likely "
        "scored too low by as much."
    ),
}


@dataclass(frozen=True)
class FairnessRow:
    run_id: int
    unique_judged: int
    unique_relevant: int
    full: float
    reduced: float
    drop: float
    rank_full: int
    rank_reduced: int

    @property
    def rank_drop(self) -> int:
        return self.rank_reduced - self.rank_full

    @property
    def flagged(self) -> bool:
        return self.drop > FAIRNESS_WARNING


@dataclass(frozen=True)
class FairnessView:
    stored: services.StoredFairness
    measure: str
    rows: dict[int, FairnessRow]

    @property
    def display_measure(self) -> str:
        return measures.display_name(self.measure)

    @property
    def depth(self) -> int:
        return self.stored.row.depth

    @property
    def largest(self) -> FairnessRow | None:
        return max(self.rows.values(), key=lambda r: r.drop, default=None)

    @property
    def mean_drop(self) -> float:
        return sum(r.drop for r in self.rows.values()) / len(self.rows) if self.rows else 0.0

    def badge(self, run_id: int) -> tuple[str, bool] | None:
        row = self.rows.get(run_id)
        if row is None:
            return None
        key = "badge_unfair" if row.flagged else "badge_fair"
        text = MESSAGES[key].format(
            measure=self.display_measure,
            drop=row.drop,
            rank_full=row.rank_full,
            rank_reduced=row.rank_reduced,
        )
        return text, row.flagged


def fairness_depth(scoring: Scoring, wanted: int | None = None) -> tuple[int, str]:
    return services.pool_depth(scoring.qrels, wanted)


def build_fairness(
    scoring: Scoring,
    measure: str,
    *,
    depth: int | None = None,
    evaluations=None,
    resolved: bool = False,
) -> FairnessView | None:
    """The stored report for the scoring at its depth on ``measure``, or None when the test
    has not been run (or the measure is not in it). ``resolved``: ``depth`` is already the
    one fairness_depth chose (saves its query)."""
    if not resolved:
        depth, _ = fairness_depth(scoring, depth)
    stored = services.find_pool_fairness(
        qrels=scoring.qrels, key=scoring.key, depth=depth, evaluations=evaluations
    )
    if stored is None or measure not in stored.report.measures:
        return None
    rows = {}
    for run in stored.report.runs:
        rows[int(run.run)] = FairnessRow(
            run_id=int(run.run),
            unique_judged=run.unique_judged,
            unique_relevant=run.unique_relevant,
            full=run.full[measure],
            reduced=run.reduced[measure],
            drop=run.drop(measure),
            rank_full=run.rank_full[measure],
            rank_reduced=run.rank_reduced[measure],
        )
    return FairnessView(stored, measure, rows)
