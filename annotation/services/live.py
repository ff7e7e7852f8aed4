"""A running campaign's live leaderboard: the runs pooled into it (PooledRun), scored against
the grades so far, with the bounds the undecided pairs allow, bootstrap intervals, and which
pairs of systems are settled (annotation.live_board does the numbers).

The grades so far are what publishing would use today (services.final_grades.pair_states):
a lead's decision, a gold pair's known grade, or the campaign's rule over a pair's grades
once every judge assigned to it has graded or skipped it. Every other pool pair is
undecided, including one some of whose judges have graded it.

Computing takes a moment (read the pooled runs, three evaluations per run), and judges grade
every few seconds, so neither a grade nor a page computes it: the board is stored
(LiveBoardSnapshot, one per measure) under a fingerprint of the campaign's grades,
decisions, pool and pooled runs, and recomputed by a background task
(tasks.refresh_live_board_task) that a page view queues when it finds the fingerprint
changed (at most one queued per campaign and measure, held in the cache for
QUEUE_SECONDS). The page polls and shows the stored board meanwhile. With the inline task
backend (no worker) the page computes it itself, as the agreement report does.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import polars as pl
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Sum
from django.utils import timezone

from annotation import live_board as settling
from annotation.background import REFRESH_LIVE_BOARD, background
from annotation.models import (
    Assignment,
    Campaign,
    Judgment,
    LeadDecision,
    LiveBoardSnapshot,
    Pair,
    PooledRun,
)
from annotation.services import stopping
from annotation.services.agreement import tasks_inline
from annotation.services.final_grades import pair_states
from evaluation import measures
from evaluation.models import Run
from evaluation.services import load_run_frame

DEFAULT_MEASURE = "ndcg_cut_10"
# What the page offers: trec_eval's specs, and the output names the page and the boards
# know them by (ndcg_cut.10 is ndcg_cut_10), from the parser.
_LIVE_SPECS = ("ndcg_cut.10", "ndcg_cut.5", "P.10", "P.5", "recip_rank", "map")
_SPEC_OF = {measures.outputs([spec])[0].name: spec for spec in _LIVE_SPECS}
LIVE_MEASURES = tuple(_SPEC_OF)
QUEUE_SECONDS = 60

MESSAGES = {
    "unknown_measure": "Choose one of {choices}.",
    "no_runs": (
        "No stored run was pooled into this campaign: the live leaderboard ranks the runs "
        "pooled from the pool page (or manage.py pool_runs)."
    ),
}


def measure_spec(name: str) -> str:
    """trec_eval's spec of one of LIVE_MEASURES: ndcg_cut_10 → ndcg_cut.10, map → map."""
    return _SPEC_OF[name]


def read_measure(raw: str | None) -> str:
    """The page's measure: one of LIVE_MEASURES (default nDCG@10); ValueError otherwise."""
    if not raw:
        return DEFAULT_MEASURE
    if raw not in LIVE_MEASURES:
        choices = ", ".join(measures.display_name(m) for m in LIVE_MEASURES)
        raise ValueError(MESSAGES["unknown_measure"].format(choices=choices))
    return raw


@dataclass(frozen=True)
class LiveState:
    """What the page, the API and the CSV show: the board (None while the first one is
    being computed), when it was computed, whether a newer one is pending, the judgments
    spent, and the runs' labels (board names are run ids)."""

    campaign: Campaign
    measure: str
    board: settling.LiveBoard | None
    computed_at: object
    pending: bool
    spent: int
    labels: dict[str, str]
    pooled: int

    @property
    def stop(self) -> dict:
        """The campaign's stop rule and what it did (services.stopping.stop_status)."""
        return stopping.stop_status(self.campaign)

    @property
    def display_measure(self) -> str:
        return measures.display_name(self.measure)

    @property
    def to_settle_judgments(self) -> int:
        """The pairs still to judge, each by the campaign's overlap of judges."""
        return self.board.to_settle * self.campaign.overlap if self.board else 0

    def label(self, name: str) -> str:
        return self.labels.get(name, name)


def _pooled_runs(campaign: Campaign) -> list[tuple[int, int]]:
    return list(
        PooledRun.objects.filter(campaign=campaign)
        .order_by("run_id")
        .values_list("run_id", "depth")
    )


def live_fingerprint(campaign: Campaign, measure: str) -> str:
    """Everything the board depends on: the campaign (its creation time tells a reused id),
    scale, threshold, rule, overlap and seed; the measure; its judgments (how many, the
    latest change, their grades' and ids' sums), assignments, lead decisions, pool and
    gold pairs, and the runs pooled. Four aggregate queries and one list."""
    judged = Judgment.objects.filter(assignment__pair__campaign=campaign).aggregate(
        n=Count("pk"), latest=Max("updated_at"), total=Sum("grade"), ids=Sum("pk")
    )
    assigned = Assignment.objects.filter(pair__campaign=campaign).aggregate(
        n=Count("pk"), ids=Sum("pk")
    )
    decided = LeadDecision.objects.filter(pair__campaign=campaign).aggregate(
        n=Count("pk"), last=Max("pk")
    )
    pool = Pair.objects.filter(campaign=campaign).aggregate(
        n=Count("pk"), ids=Sum("pk"), gold=Sum("gold_grade"), golds=Count("gold_grade")
    )
    parts = (
        campaign.pk,
        campaign.created_at.isoformat(),
        list(campaign.grades),
        campaign.relevance_threshold,
        str(campaign.adjudication_rule),
        campaign.overlap,
        campaign.seed,
        measure,
        judged["n"],
        judged["latest"].isoformat() if judged["latest"] else "",
        judged["total"],
        judged["ids"],
        tuple(assigned.values()),
        tuple(decided.values()),
        tuple(pool.values()),
        tuple(_pooled_runs(campaign)),
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def compute_live_board(*, campaign: Campaign, measure: str) -> settling.LiveBoard | None:
    """The board from the campaign's state now (None when no run was pooled)."""
    run_ids = [run_id for run_id, _ in _pooled_runs(campaign)]
    if not run_ids:
        return None
    known, unknown = [], []
    for state in pair_states(campaign=campaign):
        if state.grade is not None:
            known.append((state.qid, state.docno, state.grade))
        else:
            unknown.append((state.qid, state.docno))
    known_frame = pl.DataFrame(
        known, schema={"qid": pl.String, "docno": pl.String, "grade": pl.Int64}, orient="row"
    )
    unknown_frame = pl.DataFrame(
        unknown, schema={"qid": pl.String, "docno": pl.String}, orient="row"
    )
    frames = {
        str(run.pk): load_run_frame(run)
        for run in Run.objects.filter(pk__in=run_ids).order_by("pk")
    }
    options = measures.Options(relevance_level=campaign.relevance_threshold)
    return settling.settle(
        known_frame,
        unknown_frame,
        frames,
        measure_spec(measure),
        options,
        top_grade=max(campaign.grades[-1], 1),
        seed=campaign.seed,
    )


def refresh_live_board(*, campaign: Campaign, measure: str) -> LiveBoardSnapshot:
    """Compute the board now and store it. The fingerprint is taken first, so a grade
    given meanwhile leaves the stored board stale rather than wrongly current."""
    started = time.perf_counter()
    fingerprint = live_fingerprint(campaign, measure)
    board = compute_live_board(campaign=campaign, measure=measure)
    fields = {
        "fingerprint": fingerprint,
        "computed_at": timezone.now(),
        "seconds": time.perf_counter() - started,
        "numbers": board.as_dict() if board else {},
    }
    key = {"campaign": campaign, "measure": measure}
    if not LiveBoardSnapshot.objects.filter(**key).update(**fields):
        try:
            with transaction.atomic():
                LiveBoardSnapshot.objects.create(**key, **fields)
        except IntegrityError:  # another refresh stored it first: ours is as new
            LiveBoardSnapshot.objects.filter(**key).update(**fields)
    cache.delete(_queue_key(campaign.pk, measure))
    if board is not None and measure == stopping.STOP_MEASURE and stopping.rule_armed(campaign):
        # The stop rule is evaluated here, in the background, on the board just computed.
        stopping.apply_stop_rule(campaign=campaign, board=board, spent=_spent(campaign))
    return LiveBoardSnapshot.objects.get(**key)


def refresh_for_stop_rule(*, campaign: Campaign) -> bool:
    """In the background after a burst of grades (tasks.refresh_agreement_task): recompute
    the stop rule's board if the campaign has an armed rule and its board is stale, so the
    rule is checked even when no lead is watching the live board. True if recomputed."""
    if not stopping.rule_armed(campaign) or not _pooled_runs(campaign):
        return False
    stored = LiveBoardSnapshot.objects.filter(
        campaign=campaign, measure=stopping.STOP_MEASURE
    ).values_list("fingerprint", flat=True)
    if list(stored) == [live_fingerprint(campaign, stopping.STOP_MEASURE)]:
        return False
    refresh_live_board(campaign=campaign, measure=stopping.STOP_MEASURE)
    return True


def _spent(campaign: Campaign) -> int:
    return Judgment.objects.filter(assignment__pair__campaign=campaign, grade__isnull=False).count()


def _queue_key(campaign_id: int, measure: str) -> str:
    return f"live-board-queued:{campaign_id}:{measure}"


def queue_live_refresh(*, campaign_id: int, measure: str) -> bool:
    """Enqueue tasks.refresh_live_board_task after the commit, unless one was queued in the
    last QUEUE_SECONDS (then a lost one is queued again after that). True if queued."""
    if not cache.add(_queue_key(campaign_id, measure), 1, QUEUE_SECONDS):
        return False
    transaction.on_commit(
        lambda: background(REFRESH_LIVE_BOARD).enqueue(campaign_id=campaign_id, measure=measure)
    )
    return True


def live_board(
    *, campaign: Campaign, measure: str = DEFAULT_MEASURE, wait: bool = False
) -> LiveState:
    """The campaign's live board for ``measure`` (one of LIVE_MEASURES): the stored one when
    current; else computed here when ``wait`` or tasks run inline, or else the stored one
    (possibly none yet) with ``pending`` set and a refresh queued."""
    fingerprint = live_fingerprint(campaign, measure)
    snapshot = LiveBoardSnapshot.objects.filter(campaign=campaign, measure=measure).first()
    pending = snapshot is None or snapshot.fingerprint != fingerprint
    if pending and (wait or tasks_inline()):
        snapshot, pending = refresh_live_board(campaign=campaign, measure=measure), False
    elif pending:
        queue_live_refresh(campaign_id=campaign.pk, measure=measure)
    board = (
        settling.LiveBoard.from_dict(snapshot.numbers) if snapshot and snapshot.numbers else None
    )
    pooled = _pooled_runs(campaign)
    labels = {
        str(run.pk): str(run)
        for run in Run.objects.filter(pk__in=[r for r, _ in pooled]).select_related("system")
    }
    spent = _spent(campaign)
    return LiveState(
        campaign=campaign,
        measure=measure,
        board=board,
        computed_at=snapshot.computed_at if snapshot else None,
        pending=pending,
        spent=spent,
        labels=labels,
        pooled=len(pooled),
    )
