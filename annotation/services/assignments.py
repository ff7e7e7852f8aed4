"""Who judges what: pool pairs handed to judges (:func:`assign_pending`, balanced and seeded
with annotation.assignment, which is pure), judges joining and leaving a campaign, and open work
moved from one judge to another. The lead's operations (HackSoft style, STYLE.md); adding
pairs to the pool (services.campaigns) and making pairs gold (services.gold) hand them out
through assign_pending."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max, Q

from annotation.assignment import assign_topics, interleave, shuffled_order
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignJudge,
    CertifiedDesign,
    PairSource,
    PoolOrdering,
    Topic,
)
from annotation.services.common import MESSAGES, set_positions
from annotation.services.judge_tallies import tally_judges
from annotation.services.ordering import queue_reorder
from annotation.services.tallies import tally_pairs


def assign_pending(*, campaign: Campaign, pair_ids: Iterable[int] | None = None) -> int:
    """Give every pair that has fewer than ``overlap`` judges to more judges, balanced and
    topic by topic, and every calibration (gold) pair to every judge; with ``pair_ids``,
    only those pairs. Pairs a judgments import added (source "graded") were graded
    elsewhere: they go to judges only once a lead sends them for audit
    (services/audits.py) or makes them gold. Each judge's new pairs
    of a topic are shuffled (seeded) and spread at seeded random places among the pairs of
    the topic they still have to do, so a pair added later, gold or not, is not always last
    in its topic. Returns the number of new assignments. Runs under a lock on the
    campaign row so concurrent calls cannot both fill the same slot (the database would
    refuse it)."""
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        judges = list(
            CampaignJudge.objects.filter(campaign=campaign)
            .order_by("judge_id")
            .values_list("judge_id", flat=True)
        )
        if not judges:
            return 0
        overlap = min(campaign.overlap, len(judges))
        short = (
            campaign.pairs.annotate(n=Count("assignments"))
            .filter(
                Q(gold_grade__isnull=True, n__lt=overlap)
                | Q(gold_grade__isnull=False, n__lt=len(judges))
            )
            .exclude(source=PairSource.GRADED, gold_grade__isnull=True, audit__isnull=True)
            .values_list("pk", "topic_id", "gold_grade")
        )
        if CertifiedDesign.objects.filter(campaign=campaign).exists():
            # A certified sample's campaign (services/certified.py): the machine grades the
            # pool, humans get only the pairs sent to them and the calibration pairs.
            short = short.filter(Q(audit__isnull=False) | Q(gold_grade__isnull=False))
        if pair_ids is not None:
            short = short.filter(pk__in=list(pair_ids))
        topics: dict[int, list[int]] = defaultdict(list)
        topic_of, gold = {}, set()
        for pair_id, topic_id, gold_grade in short:
            topic_of[pair_id] = topic_id
            if gold_grade is None:
                topics[topic_id].append(pair_id)
            else:
                gold.add(pair_id)
        if not topic_of:
            return 0
        already: dict[int, list[int]] = defaultdict(list)
        used_slots: dict[int, set[int]] = defaultdict(set)
        for pair_id, judge_id, slot in Assignment.objects.filter(pair_id__in=topic_of).values_list(
            "pair_id", "judge_id", "slot"
        ):
            already[pair_id].append(judge_id)
            used_slots[pair_id].add(slot)
        load = dict(
            Assignment.objects.filter(pair__campaign=campaign, status=AssignmentStatus.OPEN)
            .values("judge_id")
            .annotate(n=Count("pk"))
            .values_list("judge_id", "n")
        )
        given: dict[int, list[int]] = defaultdict(list)
        if topics:
            given.update(
                assign_topics(
                    {str(t): p for t, p in topics.items()},
                    judges,
                    overlap=overlap,
                    load=load,
                    already=already,
                    seed=campaign.seed,
                )
            )
        for pair_id in sorted(gold):
            for judge_id in judges:
                if judge_id not in already[pair_id]:
                    given[judge_id].append(pair_id)
        last_position = dict(
            Assignment.objects.filter(pair__campaign=campaign)
            .values("judge_id")
            .annotate(m=Max("position"))
            .values_list("judge_id", "m")
        )
        # Each judge's assignments in the topics they get new pairs of, in queue order: the
        # new pairs go in among the ones still to do (see below).
        held: dict[tuple[int, int], list[tuple[int, str]]] = defaultdict(list)
        for pk, judge_id, topic_id, status in (
            Assignment.objects.filter(
                pair__campaign=campaign,
                judge_id__in=list(given),
                pair__topic_id__in={topic_of[p] for ps in given.values() for p in ps},
            )
            .order_by("position", "pk")
            .values_list("pk", "judge_id", "pair__topic_id", "status")
        ):
            held[judge_id, topic_id].append((pk, status))
        new, moved = [], []
        for judge_id, pair_ids in given.items():
            position = last_position.get(judge_id) or 0
            by_topic: dict[int, list[int]] = defaultdict(list)
            for pair_id in pair_ids:
                by_topic[topic_of[pair_id]].append(pair_id)
            for topic_id in sorted(by_topic):
                fresh = shuffled_order(
                    sorted(by_topic[topic_id]), seed=(campaign.seed, judge_id, topic_id)
                )
                # New pairs (calibration pairs, pairs added to the pool later) are spread at
                # seeded random places among the judge's pairs still to do in the topic, not
                # put after them: a gold pair that always came last would be recognisable.
                # The assignments from the first open one on are renumbered after the
                # judge's last position, keeping their order; the ones before keep theirs.
                mine = held.get((judge_id, topic_id), [])
                first_open = next(
                    (i for i, (_, status) in enumerate(mine) if status == AssignmentStatus.OPEN),
                    len(mine),
                )
                tail = [("held", pk) for pk, _ in mine[first_open:]]
                order = interleave(
                    tail,
                    [("new", pair_id) for pair_id in fresh],
                    seed=(campaign.seed, judge_id, topic_id, len(mine)),
                )
                for kind, key in order:
                    position += 1
                    if kind == "held":
                        moved.append(Assignment(pk=key, position=position))
                        continue
                    # A gold pair has a slot for every judge; the row's overlap says so.
                    # Slots held by judges since removed (their grades stay) are taken, so a
                    # gold pair can need one past the judges' count: the row's overlap then
                    # says that slot's number.
                    width = len(judges) if key in gold else campaign.overlap
                    free = set(range(1, width + 1)) - used_slots[key]
                    slot = min(free) if free else max(used_slots[key]) + 1
                    width = max(width, slot)
                    used_slots[key].add(slot)
                    new.append(
                        Assignment(
                            pair_id=key,
                            judge_id=judge_id,
                            slot=slot,
                            overlap=width,
                            position=position,
                        )
                    )
        set_positions(moved)
        Assignment.objects.bulk_create(new, batch_size=2000)
        tally_pairs(pair_ids={a.pair_id for a in new})
        if new and campaign.pool_ordering != PoolOrdering.RANDOM:
            queue_reorder(campaign_id=campaign.pk)  # new pairs take their place in the order
        tally_judges(campaign_id=campaign.pk, judge_ids=list(given))
    return len(new)


# --- how much a change writes --------------------------------------------------------------
# Cheap counts, taken before a change, that say whether it fits in a request (jobs.services.limits:
# SYNC_WRITE_ROWS) or goes to a job. Upper bounds where the exact figure would cost the work.


def assignments_due(*, campaign: Campaign, judges: int, overlap: int | None = None) -> int:
    """About how many assignments assign_pending would make with ``judges`` judges and
    ``overlap`` (default the campaign's): the slots missing on ordinary pairs short of
    judges, and on gold pairs (one per judge)."""
    if judges < 1:
        return 0
    overlap = min(campaign.overlap if overlap is None else overlap, judges)
    pairs = campaign.pairs.exclude(
        source=PairSource.GRADED, gold_grade__isnull=True, audit__isnull=True
    ).annotate(n=Count("assignments"))
    ordinary = pairs.filter(gold_grade__isnull=True, n__lt=overlap).values_list("n", flat=True)
    gold = pairs.filter(gold_grade__isnull=False, n__lt=judges).values_list("n", flat=True)
    return sum(overlap - n for n in ordinary) + sum(judges - n for n in gold)


def open_work(*, campaign: Campaign, judge, topic: Topic | None = None) -> int:
    """The judge's open assignments (of one topic): what removing the judge deletes and gives
    to the others, or what a reassignment moves."""
    work = Assignment.objects.filter(
        pair__campaign=campaign, judge=judge, status=AssignmentStatus.OPEN
    )
    return (work.filter(pair__topic=topic) if topic is not None else work).count()


def add_judge(*, campaign: Campaign, judge) -> int:
    """Add a judge; pairs still short of judges go to them. Returns new assignments."""
    with transaction.atomic():
        CampaignJudge.objects.get_or_create(campaign=campaign, judge=judge)
        return assign_pending(campaign=campaign)


def remove_judge(*, campaign: Campaign, judge) -> int:
    """Remove a judge: their grades stay, their open work goes to the others. Returns how
    many of their open assignments were redistributed."""
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        open_work = Assignment.objects.filter(
            pair__campaign=campaign, judge=judge, status=AssignmentStatus.OPEN
        )
        touched = set(open_work.values_list("pair_id", flat=True))
        deleted, _ = open_work.delete()
        CampaignJudge.objects.filter(campaign=campaign, judge=judge).delete()
        assign_pending(campaign=campaign)
        tally_pairs(pair_ids=touched)
        tally_judges(campaign_id=campaign.pk, judge_ids=[judge.pk])
    return deleted


def reassign(*, campaign: Campaign, from_judge, to_judge, topic: Topic | None = None) -> int:
    """Move ``from_judge``'s open assignments (of one topic, or all) to ``to_judge``, except
    pairs ``to_judge`` already holds. Returns how many moved."""
    if not CampaignJudge.objects.filter(campaign=campaign, judge=to_judge).exists():
        raise ValidationError(MESSAGES["not_a_judge"].format(user=to_judge))
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        # Locked, so a pair graded meanwhile stays with the judge who graded it (grading
        # locks only its assignment row, not the campaign).
        movable = (
            Assignment.objects.select_for_update(of=("self",))
            .filter(pair__campaign=campaign, judge=from_judge, status=AssignmentStatus.OPEN)
            .exclude(pair__assignments__judge=to_judge)
        )
        if topic is not None:
            movable = movable.filter(pair__topic=topic)
        position = (
            Assignment.objects.filter(pair__campaign=campaign, judge=to_judge).aggregate(
                m=Max("position")
            )["m"]
            or 0
        )
        moving = list(movable.order_by("pair__topic_id", "position"))
        for assignment in moving:
            position += 1
            assignment.judge = to_judge
            assignment.position = position
        # One statement per batch, not one per assignment: a judge's whole queue may move.
        Assignment.objects.bulk_update(moving, ["judge", "position"], batch_size=2000)
        tally_judges(campaign_id=campaign.pk, judge_ids=[from_judge.pk, to_judge.pk])
    return len(moving)
