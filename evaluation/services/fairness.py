"""The leave-one-run-out test of a qrels version (evaluation.analysis.pool_fairness), stored once per
(qrels, options, depth) by a background task (evaluation.tasks.pool_fairness_task) and read
by the leaderboard, a run's page and the API; no page computes it.

The pool depth: when the qrels were published from a campaign whose pool was built from
stored runs, the depth they were pooled at (the deepest, if several); otherwise the depth
given, by default 100 (pool_fairness.DEFAULT_DEPTH, a common TREC pool depth). Evaluation
does not import annotation (DESIGN.md): it asks evaluation.judging, whose answers annotation
registers from its AppConfig.ready.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from evaluation import measures
from evaluation.analysis import pool_fairness
from evaluation.judging import judging
from evaluation.models import Evaluation, PoolFairnessReport, QrelsVersion, Run
from evaluation.services.qrels import load_qrels_frame
from evaluation.services.runs import load_run_frame

DEPTH_FROM_POOL = "pool"
DEPTH_FROM_PARAMETER = "parameter"


def pool_depth(qrels: QrelsVersion, wanted: int | None = None) -> tuple[int, str]:
    """(depth, where it comes from): the qrels' own pool depth when known, else ``wanted``,
    else pool_fairness.DEFAULT_DEPTH."""
    found = judging().pool_depth(qrels)
    if found:
        return found, DEPTH_FROM_POOL
    return (wanted or pool_fairness.DEFAULT_DEPTH), DEPTH_FROM_PARAMETER


def runs_key(evaluations) -> str:
    """Names the evaluations a report is computed from (their ids, sorted)."""
    ids = sorted(e.pk if hasattr(e, "pk") else e for e in evaluations)
    return hashlib.sha256(repr(ids).encode()).hexdigest()


@dataclass(frozen=True)
class StoredFairness:
    """A stored report, its runs by id, and whether runs were scored (or removed) since."""

    row: PoolFairnessReport
    report: pool_fairness.FairnessReport
    stale: bool

    def of(self, run: Run) -> pool_fairness.RunFairness | None:
        return self.report.of(str(run.pk))

    @property
    def depth_from_pool(self) -> bool:
        return self.row.depth_source == DEPTH_FROM_POOL


def find_pool_fairness(
    *, qrels: QrelsVersion, key: str, depth: int, evaluations=None
) -> StoredFairness | None:
    """The stored report for the qrels, options key and depth, or None. ``evaluations``:
    the current evaluations with that key (read when not given) to tell if it is stale."""
    row = PoolFairnessReport.objects.filter(qrels=qrels, options_key=key, depth=depth).first()
    if row is None:
        return None
    if evaluations is None:
        evaluations = Evaluation.objects.filter(qrels=qrels, options_key=key).values_list(
            "pk", flat=True
        )
    report = pool_fairness.FairnessReport.from_dict(row.report)
    return StoredFairness(row, report, stale=row.runs_key != runs_key(evaluations))


def compute_pool_fairness(
    *,
    qrels: QrelsVersion,
    key: str,
    measure_specs: list[str],
    options: measures.Options,
    depth: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> PoolFairnessReport:
    """Run the test over every run with an evaluation of ``qrels`` under ``key`` and store
    it (replacing the previous report for the same depth). ValueError when fewer than two
    runs are scored, or as pool_fairness.leave_one_run_out raises."""
    depth, source = pool_depth(qrels, depth)
    evaluations = list(
        Evaluation.objects.filter(qrels=qrels, options_key=key).select_related("run")
    )
    if len(evaluations) < 2:
        raise ValueError("the leave-one-run-out test needs at least two scored runs")
    started = time.perf_counter()
    frames = {}
    for done, evaluation in enumerate(evaluations):
        if progress:
            progress(f"Reading run {evaluation.run}", done, len(evaluations) + 1)
        frames[str(evaluation.run_id)] = load_run_frame(evaluation.run)
    if progress:
        progress(
            "Leaving each run out and scoring it again", len(evaluations), len(evaluations) + 1
        )
    report = pool_fairness.leave_one_run_out(
        load_qrels_frame(qrels), frames, measure_specs, options, depth=depth
    )
    row, _ = PoolFairnessReport.objects.update_or_create(
        qrels=qrels,
        options_key=key,
        depth=depth,
        defaults={
            "depth_source": source,
            "runs_key": runs_key(evaluations),
            "report": report.as_dict(),
            "seconds": time.perf_counter() - started,
        },
    )
    return row
