"""The order judges get a campaign's pool in, for the strategy its lead chose
(annotation/strategies/). Recomputed in the background (tasks.reorder_pool_task, queued after
every ``POOL_REORDER_EVERY`` grades by the campaign's background refresh, and by
``manage.py reorder_pools`` on a timer), never in a grade request.

What a recomputation changes: only the positions of each judge's *open* assignments. Who
judges what stays as assignment made it (overlap distinct judges per pair, balanced work,
whole topics), so every guarantee of the assignment holds; a judge's calibration (gold) pairs
stay at seeded random places among their open pairs; judges still see no run, rank or score.
With the random strategy nothing changes: positions stay the per-topic shuffles of
assign_pending, and the queue goes topic by topic.
"""

from __future__ import annotations

import polars as pl
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.assignment import interleave, shuffled_order
from annotation.background import REORDER_POOL, background
from annotation.models import Assignment, AssignmentStatus, Campaign, Judgment, PoolOrdering
from annotation.services.common import set_positions
from annotation.strategies import plan_order

UNKNOWN_ORDERING = "Unknown pool ordering {value!r}; choose from {choices}."


def check_pool_ordering(value) -> None:
    """ValidationError keyed ``pool_ordering`` unless ``value`` is a strategy's name."""
    if value not in PoolOrdering.values:
        raise ValidationError(
            {
                "pool_ordering": UNKNOWN_ORDERING.format(
                    value=value, choices=", ".join(PoolOrdering.values)
                )
            }
        )


# Each choice a campaign offers: the strategy (annotation/strategies/) and its options.
STRATEGY_OF: dict[str, tuple[str, dict]] = {
    PoolOrdering.RANDOM: ("random", {}),
    PoolOrdering.MOVE_TO_FRONT: ("move_to_front", {}),
    PoolOrdering.BANDIT: ("bandit", {}),
    PoolOrdering.BANDIT_ACROSS_TOPICS: ("bandit", {"across_topics": True}),
    PoolOrdering.DISCRIMINATIVE: ("discriminative", {}),
}


def queue_reorder(*, campaign_id: int) -> None:
    """Recompute the campaign's pool order in the background once the transaction commits."""
    transaction.on_commit(lambda: background(REORDER_POOL).enqueue(campaign_id=campaign_id))


def queue_order(campaign: Campaign) -> tuple[str, ...]:
    """How a judge's assignments are ordered: topic by topic for the random strategy (today's
    order), one queue across topics for the adaptive ones."""
    if campaign.pool_ordering == PoolOrdering.RANDOM:
        return ("pair__topic_id", "position")
    return ("position", "pk")


def pool_rankings(campaign: Campaign, pool: set[tuple[str, str]]) -> dict:
    """run -> qid -> docnos in trec_eval's order (score descending, ties by docno
    descending), each list the run's longest prefix inside the pool: its top-depth documents
    (and any further ones other runs pooled that follow them without a gap)."""
    from evaluation.models import Run
    from evaluation.services import load_run_frame

    qids = {qid for qid, _ in pool}
    rankings = {}
    # The runs the pool was built from (services.campaigns.record_pooled_runs).
    runs = Run.objects.filter(pk__in=campaign.pooled_runs.values("run_id"))
    for run in runs.select_related("system").order_by("pk"):
        frame = (
            load_run_frame(run)
            .filter(pl.col("qid").is_in(list(qids)))
            .sort(["qid", "score", "docno"], descending=[False, True, True])
        )
        lists: dict[str, list[str]] = {}
        for qid, group in frame.group_by("qid", maintain_order=True):
            qid = str(qid[0])
            prefix = []
            for docno in group["docno"].to_list():
                if (qid, docno) not in pool:
                    break
                prefix.append(docno)
            if prefix:
                lists[qid] = prefix
        rankings[f"{run.pk}"] = lists
    return rankings


def graded_count(campaign: Campaign) -> int:
    return Judgment.objects.filter(assignment__pair__campaign=campaign, grade__isnull=False).count()


def reorder_pool(*, campaign: Campaign) -> int:
    """Recompute the order of every judge's open assignments with the campaign's strategy.
    Returns the number of assignments that moved. Under the campaign row's lock, as
    assign_pending, so the two never interleave. Back to random from an adaptive ordering,
    each judge's open pairs get today's per-topic shuffles again."""
    if campaign.pool_ordering == PoolOrdering.RANDOM:
        if "at" not in (campaign.pool_ordering_state or {}):
            return 0  # never reordered: positions are assign_pending's shuffles
        return _reshuffle(campaign)
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        pairs = list(
            campaign.pairs.filter(gold_grade__isnull=True)
            .order_by("topic__qid", "document__docno")
            .values_list("pk", "topic__qid", "document__docno")
        )
        key_of = {pk: (qid, docno) for pk, qid, docno in pairs}
        pool = set(key_of.values())
        # Each pair's first grade, in the order grades were given: what the strategy learns.
        grades, seen = [], set()
        for pair_id, grade in (
            Judgment.objects.filter(
                assignment__pair__campaign=campaign,
                assignment__pair__gold_grade__isnull=True,
                grade__isnull=False,
            )
            .order_by("created_at", "pk")
            .values_list("assignment__pair_id", "grade")
        ):
            if pair_id not in seen:
                seen.add(pair_id)
                grades.append((key_of[pair_id], grade))
        name, options = STRATEGY_OF[campaign.pool_ordering]
        plan = plan_order(
            name,
            [key_of[pk] for pk, _, _ in pairs],
            pool_rankings(campaign, pool),
            grades=grades,
            seed=campaign.seed,
            relevant_from=max(1, campaign.relevance_threshold),
            **options,
            **(
                {"top_grade": max(campaign.grades)}
                if campaign.pool_ordering == PoolOrdering.DISCRIMINATIVE
                else {}
            ),
        )
        rank = {key: index for index, key in enumerate(plan)}
        last = len(plan)  # graded pairs a judge still holds open go after the plan
        moved = []
        mine: dict[int, list] = {}
        top: dict[int, int] = {}
        for pk, judge_id, pair_id, status, position, gold in Assignment.objects.filter(
            pair__campaign=campaign
        ).values_list("pk", "judge_id", "pair_id", "status", "position", "pair__gold_grade"):
            if status == AssignmentStatus.OPEN:
                mine.setdefault(judge_id, []).append((pk, pair_id, gold is not None))
            else:  # open ones are renumbered after the judge's done ones, so positions stay small
                top[judge_id] = max(top.get(judge_id, 0), position)
        for judge_id, items in mine.items():
            ordinary = sorted(
                (p for p in items if not p[2]),
                key=lambda p: (rank.get(key_of[p[1]], last), p[0]),
            )
            gold = sorted(p for p in items if p[2])
            order = interleave(
                [p[0] for p in ordinary],
                [p[0] for p in gold],
                seed=(campaign.seed, judge_id, "gold", len(items)),
            )
            position = top.get(judge_id, 0)
            for pk in order:
                position += 1
                moved.append(Assignment(pk=pk, position=position))
        set_positions(moved)
        state = dict(campaign.pool_ordering_state or {})
        state.update(graded=graded_count(campaign), at=timezone.now().isoformat())
        Campaign.objects.filter(pk=campaign.pk).update(pool_ordering_state=state)
    return len(moved)


def reorder_due(campaign: Campaign) -> bool:
    """An adaptive strategy with ``POOL_REORDER_EVERY`` grades given since its last order."""
    if campaign.pool_ordering == PoolOrdering.RANDOM:
        return False
    seen = (campaign.pool_ordering_state or {}).get("graded")
    return seen is None or graded_count(campaign) - seen >= settings.POOL_REORDER_EVERY


def _reshuffle(campaign: Campaign) -> int:
    """Today's order for every judge's open assignments: per topic a seeded shuffle, the
    gold pairs at seeded random places among them (as assign_pending places new pairs)."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        top: dict[int, int] = {}
        mine: dict[tuple[int, int], list] = {}
        for pk, judge_id, topic_id, status, position, gold in Assignment.objects.filter(
            pair__campaign=campaign
        ).values_list("pk", "judge_id", "pair__topic_id", "status", "position", "pair__gold_grade"):
            if status == AssignmentStatus.OPEN:
                mine.setdefault((judge_id, topic_id), []).append((pk, gold is not None))
            else:
                top[judge_id] = max(top.get(judge_id, 0), position)
        moved = []
        for (judge_id, topic_id), items in sorted(mine.items()):
            ordinary = shuffled_order(
                sorted(pk for pk, gold in items if not gold),
                seed=(campaign.seed, judge_id, topic_id),
            )
            order = interleave(
                ordinary,
                sorted(pk for pk, gold in items if gold),
                seed=(campaign.seed, judge_id, topic_id, "gold"),
            )
            for pk in order:
                top[judge_id] = top.get(judge_id, 0) + 1
                moved.append(Assignment(pk=pk, position=top[judge_id]))
        set_positions(moved)
        state = {k: v for k, v in (campaign.pool_ordering_state or {}).items() if k != "at"}
        Campaign.objects.filter(pk=campaign.pk).update(pool_ordering_state=state)
    return len(moved)
