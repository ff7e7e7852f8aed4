"""Campaigns, their pools and who judges what: the lead's operations (HackSoft style,
STYLE.md). Views, the API, commands and tasks call these; the rules live here."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max, Q

from annotation.assignment import assign_topics, interleave, shuffled_order
from annotation.models import (
    AdjudicationRule,
    Assignment,
    AssignmentStatus,
    Campaign,
    CampaignJudge,
    Document,
    ExternalGrade,
    Judgment,
    Pair,
    PairSource,
    PooledRun,
    PoolOrdering,
    Topic,
)
from annotation.pooling import pool_runs
from annotation.scales import SCALES, validate_scale
from annotation.services.common import MESSAGES
from annotation.services.ordering import check_pool_ordering, queue_reorder
from annotation.services.tallies import count_topics, tally_judges, tally_pairs

# What update_campaign may change; judges have their own operations (add_judge, remove_judge).
CAMPAIGN_FIELDS = (
    "name",
    "description",
    "scale",
    "guidelines",
    "overlap",
    "relevance_threshold",
    "adjudication_rule",
    "gold_min_accuracy",
    "pool_ordering",
    "machine_grades_adjudicate",
    "machine_grades_fill",
)


# --- campaigns -----------------------------------------------------------------------------


def resolve_scale(scale: str | list) -> list[dict]:
    if isinstance(scale, str):
        if scale not in SCALES:
            raise ValidationError(
                MESSAGES["unknown_scale"].format(scale=scale, choices=", ".join(SCALES))
            )
        return [dict(item) for item in SCALES[scale]]
    try:
        return validate_scale(scale)
    except ValueError as error:
        raise ValidationError(str(error)) from None


def create_campaign(
    *,
    lead,
    name: str,
    description: str = "",
    scale: str | list = "0-3",
    guidelines: str = "",
    overlap: int = 1,
    relevance_threshold: int = 1,
    adjudication_rule: str = AdjudicationRule.MAJORITY,
    gold_min_accuracy: float = 0.7,
    judges: Iterable = (),
    pool_ordering: str = PoolOrdering.RANDOM,
) -> Campaign:
    """Raises ValidationError keyed by the field at fault, and creates nothing then."""
    try:
        scale = resolve_scale(scale)
    except ValidationError as error:
        raise ValidationError({"scale": error.messages}) from None
    if relevance_threshold not in [item["grade"] for item in scale]:
        raise ValidationError(
            {
                "relevance_threshold": MESSAGES["threshold_outside_scale"].format(
                    threshold=relevance_threshold
                )
            }
        )
    if overlap < 1:
        raise ValidationError({"overlap": MESSAGES["overlap_below_one"]})
    if adjudication_rule not in AdjudicationRule:
        raise ValidationError({"adjudication_rule": f"Unknown rule {adjudication_rule!r}."})
    if not 0 <= gold_min_accuracy <= 1:
        raise ValidationError({"gold_min_accuracy": "Give a fraction between 0 and 1."})
    check_pool_ordering(pool_ordering)
    with transaction.atomic():
        campaign = Campaign.objects.create(
            pool_ordering=pool_ordering,
            lead=lead,
            name=name,
            description=description,
            scale=scale,
            guidelines=guidelines,
            overlap=overlap,
            relevance_threshold=relevance_threshold,
            adjudication_rule=adjudication_rule,
            gold_min_accuracy=gold_min_accuracy,
        )
        for judge in judges:
            CampaignJudge.objects.create(campaign=campaign, judge=judge)
    return campaign


@dataclass(frozen=True)
class CampaignChange:
    campaign: Campaign
    assigned: int  # new assignments, when the overlap grew


def update_campaign(*, campaign: Campaign, **changes) -> CampaignChange:
    """Change some of a campaign's :data:`CAMPAIGN_FIELDS` (``scale`` as for
    :func:`create_campaign`: a preset name or a list of grades).

    Under a lock on the campaign row, so a judgment or another edit cannot slip in between
    the checks and the save: the relevance threshold must be a grade of the (new) scale, and a
    new scale must still hold every grade judgments already use. A larger overlap then gives
    the pairs short of judges more judges. Raises ValidationError keyed by the field at fault
    (``scale``, ``relevance_threshold`` or ``overlap``) and saves nothing then.
    """
    unknown = sorted(set(changes) - set(CAMPAIGN_FIELDS))
    if unknown:
        raise ValueError(
            f"update_campaign cannot change {', '.join(unknown)}; "
            f"it changes {', '.join(CAMPAIGN_FIELDS)}"
        )
    if "scale" in changes:
        try:
            changes["scale"] = resolve_scale(changes["scale"])
        except ValidationError as error:
            raise ValidationError({"scale": error.messages}) from None
    if "overlap" in changes and changes["overlap"] < 1:
        raise ValidationError({"overlap": MESSAGES["overlap_below_one"]})
    if "adjudication_rule" in changes and changes["adjudication_rule"] not in AdjudicationRule:
        raise ValidationError(
            {"adjudication_rule": f"Unknown rule {changes['adjudication_rule']!r}."}
        )
    if "gold_min_accuracy" in changes and not 0 <= changes["gold_min_accuracy"] <= 1:
        raise ValidationError({"gold_min_accuracy": "Give a fraction between 0 and 1."})
    if "pool_ordering" in changes:
        check_pool_ordering(changes["pool_ordering"])
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        scale = changes.get("scale", campaign.scale)
        threshold = changes.get("relevance_threshold", campaign.relevance_threshold)
        if threshold not in [item["grade"] for item in scale]:
            field = "relevance_threshold" if "relevance_threshold" in changes else "scale"
            raise ValidationError(
                {field: MESSAGES["threshold_outside_scale"].format(threshold=threshold)}
            )
        if "scale" in changes and scale[-1]["grade"] < campaign.grades[-1]:
            # A shorter scale may drop a grade in use. Grading locks only its assignment
            # (services.judging), so wait for grades in flight and hold new ones back until
            # the new scale is committed. Only the assignment rows (of=self): the join would
            # otherwise lock the pairs too, which a grade locks after its assignment (its
            # tally), and the two orders deadlock.
            list(
                Assignment.objects.select_for_update(of=("self",))
                .filter(pair__campaign=campaign)
                .values_list("pk", flat=True)
            )
            top = scale[-1]["grade"]  # grades run 0..top (validate_scale)
            graded = Judgment.objects.filter(assignment__pair__campaign=campaign).aggregate(
                m=Max("grade")
            )["m"]
            gold = campaign.pairs.aggregate(m=Max("gold_grade"))["m"]
            external = ExternalGrade.objects.filter(pair__campaign=campaign).aggregate(
                m=Max("grade")
            )["m"]
            used = max((g for g in (graded, gold, external) if g is not None), default=None)
            if used is not None and used > top:
                raise ValidationError(
                    {"scale": MESSAGES["grade_in_use"].format(grade=used, top=top)}
                )
        overlap_before, ordering_before = campaign.overlap, campaign.pool_ordering
        machines_before = campaign.machine_grades_adjudicate
        rule_before = campaign.adjudication_rule
        for field, value in changes.items():
            setattr(campaign, field, value)
        if changes:
            campaign.save(update_fields=list(changes))
        if campaign.machine_grades_adjudicate != machines_before:
            tally_pairs(campaign=campaign)  # machine grades now count, or no longer
        elif campaign.adjudication_rule != rule_before:
            count_topics(campaign=campaign)  # which pairs the rule settles
        assigned = assign_pending(campaign=campaign) if campaign.overlap > overlap_before else 0
        if campaign.pool_ordering != ordering_before:
            queue_reorder(campaign_id=campaign.pk)
    return CampaignChange(campaign=campaign, assigned=assigned)


# --- pool ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolChange:
    added: int
    already: int
    new_documents: int
    assigned: int


def add_pairs(
    *,
    campaign: Campaign,
    pairs: Iterable[tuple[str, str]],
    source: PairSource,
    assign: bool = True,
) -> PoolChange:
    """Add (qid, docno) pairs to the pool, creating document placeholders for docnos without
    text yet, then give the new pairs to judges. Unknown qids are refused (callers check and
    report them with file lines first)."""
    wanted = sorted(set(pairs))
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        topics = dict(campaign.topics.values_list("qid", "pk"))
        unknown = sorted({qid for qid, _ in wanted} - set(topics))
        if unknown:
            raise ValidationError(f"Topics not in this campaign: {', '.join(unknown[:10])}")
        docnos = {docno for _, docno in wanted}
        known = dict(campaign.documents.filter(docno__in=docnos).values_list("docno", "pk"))
        new_docs = Document.objects.bulk_create(
            [Document(campaign=campaign, docno=d) for d in sorted(docnos - set(known))],
            batch_size=2000,
        )
        known.update(campaign.documents.filter(docno__in=docnos).values_list("docno", "pk"))
        existing = set(
            campaign.pairs.filter(document__docno__in=docnos).values_list("topic_id", "document_id")
        )
        fresh = [
            Pair(campaign=campaign, topic_id=topics[qid], document_id=known[docno], source=source)
            for qid, docno in wanted
            if (topics[qid], known[docno]) not in existing
        ]
        Pair.objects.bulk_create(fresh, batch_size=2000)
        assigned = assign_pending(campaign=campaign) if assign else 0
        count_topics(topic_ids={pair.topic_id for pair in fresh})
    return PoolChange(
        added=len(fresh),
        already=len(wanted) - len(fresh),
        new_documents=len(new_docs),
        assigned=assigned,
    )


def pool_from_runs(
    *, campaign: Campaign, run_frames: Sequence, depth: int, runs: Sequence | None = None
) -> PoolChange:
    """Depth-k pooling of run frames (qid, docno, score) over the campaign's topics. When
    the frames are stored runs', ``runs`` names them (in the same order), and the campaign
    records them (PooledRun): the live leaderboard ranks them, and the leave-one-run-out
    test of the campaign's qrels uses their depth."""
    qids = list(campaign.topics.values_list("qid", flat=True))
    pool = pool_runs(run_frames, depth=depth, topics=qids)
    with transaction.atomic():
        change = add_pairs(
            campaign=campaign,
            pairs=pool.select("qid", "docno").iter_rows(),
            source=PairSource.POOLED,
        )
        record_pooled_runs(campaign=campaign, runs=runs or (), depth=depth)
    return change


def record_pooled_runs(*, campaign: Campaign, runs: Iterable, depth: int) -> None:
    """Remember that ``runs`` were pooled into ``campaign`` at ``depth`` (a run pooled
    again keeps the deeper of its depths)."""
    for run in runs:
        pooled, created = PooledRun.objects.get_or_create(
            campaign=campaign, run=run, defaults={"depth": depth}
        )
        if not created and pooled.depth < depth:
            PooledRun.objects.filter(pk=pooled.pk).update(depth=depth)


def pool_depth_of_qrels(qrels) -> int | None:
    """The depth a published qrels version's pool was built at from stored runs (the
    deepest, if several), or None: evaluation's leave-one-run-out test asks (registered in
    AnnotationConfig.ready)."""
    return (
        PooledRun.objects.filter(campaign__publications__qrels=qrels).aggregate(d=Max("depth"))["d"]
        or None
    )


# --- assignments ---------------------------------------------------------------------------


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
        Assignment.objects.bulk_update(moved, ["position"], batch_size=2000)
        Assignment.objects.bulk_create(new, batch_size=2000)
        tally_pairs(pair_ids={a.pair_id for a in new})
        if new and campaign.pool_ordering != PoolOrdering.RANDOM:
            queue_reorder(campaign_id=campaign.pk)  # new pairs take their place in the order
        tally_judges(campaign_id=campaign.pk, judge_ids=list(given))
    return len(new)


def set_gold(*, campaign: Campaign, entries: Iterable[tuple[str, str, int]]) -> PoolChange:
    """Mark (qid, docno) pairs as calibration pairs with a known grade, adding those not yet
    in the pool; every judge of the campaign gets each of them, unmarked among their other
    pairs. A grade off the scale or an unknown qid is refused and nothing changes."""
    entries = list(entries)
    grades = campaign.grades
    wrong = sorted({g for _, _, g in entries if g not in grades})
    if wrong:
        raise ValidationError(
            MESSAGES["grade_not_in_scale"].format(
                grade=", ".join(map(str, wrong)), grades=", ".join(map(str, grades))
            )
        )
    with transaction.atomic():
        change = add_pairs(
            campaign=campaign,
            pairs=[(qid, docno) for qid, docno, _ in entries],
            source=PairSource.GOLD,
            assign=False,
        )
        for qid, docno, grade in entries:
            campaign.pairs.filter(topic__qid=qid, document__docno=docno).update(gold_grade=grade)
        assigned = assign_pending(campaign=campaign)
        count_topics(
            topic_ids=campaign.topics.filter(qid__in={q for q, _, _ in entries}).values_list(
                "pk", flat=True
            )
        )
    return PoolChange(change.added, change.already, change.new_documents, assigned)


def mark_gold(*, campaign: Campaign, pair_id: int, grade: int | None) -> PoolChange:
    """Make one pool pair a calibration pair with a known ``grade`` (every judge gets it,
    unmarked among their other pairs), change its known grade, or with ``grade=None`` make
    it an ordinary pair again. Pair.DoesNotExist if the campaign has no such pair; a grade
    off the scale is a ValidationError and changes nothing."""
    pair = Pair.objects.select_related("topic", "document").get(pk=pair_id, campaign=campaign)
    if grade is None:
        clear_gold(campaign=campaign, pair_ids=[pair.pk])
        return PoolChange(added=0, already=1, new_documents=0, assigned=0)
    return set_gold(campaign=campaign, entries=[(pair.topic.qid, pair.document.docno, grade)])


def clear_gold(*, campaign: Campaign, pair_ids: Iterable[int]) -> int:
    """Make calibration pairs ordinary pairs again (their judges' grades stay)."""
    with transaction.atomic():
        gold = campaign.pairs.filter(pk__in=list(pair_ids), gold_grade__isnull=False)
        topics = set(gold.values_list("topic_id", flat=True))
        cleared = gold.update(gold_grade=None)
        count_topics(topic_ids=topics)
    return cleared


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
        moved = 0
        for assignment in movable.order_by("pair__topic_id", "position"):
            position += 1
            assignment.judge = to_judge
            assignment.position = position
            assignment.save(update_fields=["judge", "position"])
            moved += 1
        tally_judges(campaign_id=campaign.pk, judge_ids=[from_judge.pk, to_judge.pk])
    return moved
