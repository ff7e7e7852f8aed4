"""The certified leaderboard (issue 33, item 1): each pooled run's mean nDCG@10 estimated
from the machine's grades on the pool and the human grades on the design's sample, with its
prediction-powered interval and which pairs of runs are settled (evaluation/certified/means.py),
or the state that keeps the campaign from one (annotation/services/certified.py draws the
sample and names the states)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace

import numpy as np

from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CertifiedDesign,
    DesignPair,
    SampleStrategy,
)
from annotation.services.certified import (
    LEVEL,
    MESSAGES,
    State,
    graded_machines,
    human_grade,
    human_grades,
    machine_grades,
    pool_arrays,
    pool_of,
    pooled_run_ids,
    run_labels,
)
from evaluation import certified as stats


@dataclass
class Progress:
    chosen: int = 0
    graded: int = 0
    assigned: int = 0  # sampled pairs some human holds, graded or not
    skipped_only: int = 0  # sampled pairs whose every assignment was skipped

    @property
    def left(self) -> int:
        return self.chosen - self.graded

    @property
    def share(self) -> float:
        return self.graded / self.chosen if self.chosen else 0.0


@dataclass
class Board:
    campaign: Campaign
    state: str
    message: str
    design: CertifiedDesign | None = None
    progress: Progress | None = None
    machines: list = field(default_factory=list)  # [(MachineJudge, graded)] before a draw
    pool_size: int = 0
    certified: stats.Certified | None = None
    labels: dict = field(default_factory=dict)  # str(run id) -> (label, url)

    def label(self, run: str) -> str:
        return self.labels.get(run, (run, ""))[0]

    def url(self, run: str) -> str:
        return self.labels.get(run, ("", ""))[1]

    @property
    def ready_machines(self) -> list:
        return [m for m, graded in self.machines if graded >= self.pool_size > 0]


def certified_board(*, campaign: Campaign, level: float = LEVEL) -> Board:
    """The campaign's certified leaderboard, or the state that keeps it from being one."""
    pairs = pool_of(campaign)
    design = (
        CertifiedDesign.objects.filter(campaign=campaign).select_related("machine__judge").first()
    )
    if design is None:
        machines = graded_machines(campaign)
        humans = len(human_grades([pk for pk, _, _ in pairs])) if pairs else 0
        message = MESSAGES["no_design"]
        if humans:
            message += MESSAGES["no_design_humans"].format(n=humans)
        return Board(campaign, State.NO_DESIGN, message, machines=machines, pool_size=len(pairs))
    board = Board(campaign, State.CERTIFIED, "", design=design, pool_size=len(pairs))
    rows = list(
        DesignPair.objects.filter(design=design).values_list(
            "pair_id", "probability", "stratum", "chosen"
        )
    )
    by_pair = {pk: (qid, docno) for pk, qid, docno in pairs}
    chosen_ids = [pk for pk, _, _, chosen in rows if chosen]
    humans = human_grades(chosen_ids)
    board.progress = _progress(chosen_ids, humans)
    if (
        len(pairs) != design.pool_size
        or len(rows) != len(pairs)
        or set(by_pair) != {r[0] for r in rows}
    ):
        board.state = State.POOL_CHANGED
        board.message = MESSAGES["pool_changed"].format(now=len(pairs), then=design.pool_size)
        return board
    grades = machine_grades(design.machine)
    graded = sum(1 for pk in by_pair if pk in grades)
    if graded < len(pairs):
        board.state = State.MACHINE_UNFINISHED
        board.message = MESSAGES["machine_unfinished"].format(
            label=design.machine.judge.label, graded=graded, total=len(pairs)
        )
        return board
    run_ids = pooled_run_ids(campaign)
    if not run_ids:
        board.state, board.message = State.NO_RUNS, MESSAGES["no_runs"]
        return board
    if board.progress.left:
        board.state = State.HUMANS_PENDING
        board.message = MESSAGES["humans_pending"].format(
            graded=board.progress.graded, chosen=board.progress.chosen, left=board.progress.left
        )
        return board
    pool, ids = pool_arrays(campaign, pairs, run_ids)
    row_of = {pk: (p, s, c) for pk, p, s, c in rows}
    order = [ids[pair] for pair in pool.pairs]
    probability = np.array([row_of[pk][0] for pk in order])
    stratum = None
    if design.strategy != SampleStrategy.ACTIVE:
        stratum = np.array([row_of[pk][1] or 0 for pk in order], dtype=np.int64)
    chosen = np.flatnonzero([row_of[pk][2] for pk in order])
    sample = stats.Sample(design.strategy, probability, chosen, stratum, design.strata or "none")
    machine = np.array([grades[pk] for pk in order], dtype=np.int64)
    human = np.array([human_grade(humans[order[i]]) for i in chosen], dtype=np.int64)
    board.certified = bounded(
        stats.certify_means(pool, machine, sample, human, level=level, seed=design.seed)
    )
    board.labels = run_labels(run_ids)
    board.message = MESSAGES["certified"].format(
        chosen=int(chosen.size),
        share=chosen.size / pool.size,
        pool=pool.size,
        machine=design.machine.judge.label,
    )
    return board


def bounded(result: stats.Certified) -> stats.Certified:
    """The intervals cut to where the values can lie (nDCG in [0, 1], a difference of two in
    [-1, 1]): the true value is inside both, so the cut interval covers it as often. The
    estimates are left as the estimator gives them (one may overshoot 1 when the sample's
    residuals correct a machine strongly; the page says so)."""
    runs = tuple(replace(r, low=max(0.0, r.low), high=min(1.0, r.high)) for r in result.runs)
    pairs = tuple(replace(p, low=max(-1.0, p.low), high=min(1.0, p.high)) for p in result.pairs)
    return replace(result, runs=runs, pairs=pairs)


def _progress(chosen_ids: list[int], humans: dict[int, list[int]]) -> Progress:
    progress = Progress(chosen=len(chosen_ids))
    progress.graded = sum(1 for pk in chosen_ids if humans.get(pk))
    statuses: dict[int, set[str]] = defaultdict(set)
    for start in range(0, len(chosen_ids), 2000):
        for pair_id, status in Assignment.objects.filter(
            pair_id__in=chosen_ids[start : start + 2000]
        ).values_list("pair_id", "status"):
            statuses[pair_id].add(status)
    progress.assigned = len(statuses)
    progress.skipped_only = sum(
        1
        for pk, held in statuses.items()
        if held == {AssignmentStatus.SKIPPED} and not humans.get(pk)
    )
    return progress


def as_dict(board: Board) -> dict:
    """The board as plain data (the API's answer, ``manage.py certify --json``): the same
    numbers as the page."""
    design, result = board.design, board.certified
    return {
        "state": board.state,
        "message": board.message,
        "design": None
        if design is None
        else {
            "machine": design.machine.judge.label,
            "strategy": design.strategy,
            "seed": design.seed,
            "budget": design.budget,
            "budget_is_share": design.budget_is_share,
            "strata": design.strata,
            "pool_size": design.pool_size,
            "chosen": design.chosen,
            "expected_size": design.expected_size,
            "withdrawn": design.withdrawn,
            "redraws": design.redraws,
            "created_by": design.created_by.get_username() if design.created_by else None,
            "created_at": design.created_at.isoformat(),
        },
        "progress": None
        if board.progress is None
        else {
            "chosen": board.progress.chosen,
            "graded": board.progress.graded,
            "assigned": board.progress.assigned,
            "skipped_only": board.progress.skipped_only,
        },
        "level": result.level if result else None,
        "runs": [
            {
                "run": int(r.run),
                "run_label": board.label(r.run),
                "ndcg_cut_10": r.estimate,
                "low": r.low,
                "high": r.high,
                "se": r.se,
                "machine_only": r.machine_only,
                "topics": r.topics,
            }
            for r in (result.runs if result else ())
        ],
        "pairs": [
            {
                "a": int(p.a),
                "b": int(p.b),
                "a_label": board.label(p.a),
                "b_label": board.label(p.b),
                "difference": p.difference,
                "low": p.low,
                "high": p.high,
                "p_value": p.p_value,
                "p_holm": p.p_holm,
                "settled": p.settled,
                "settled_holm": p.settled_holm,
            }
            for p in (result.pairs if result else ())
        ],
    }
