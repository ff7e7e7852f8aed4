"""Campaigns and their pools: the lead's operations (HackSoft style, STYLE.md). Views, the
API, commands and tasks call these; the rules live here. Who judges the pool's pairs is
services.assignments; gold pairs are services.gold."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from annotation.access import judge_users
from annotation.agreement.anchoring import MAX_BLIND_SHARE, MIN_BLIND_SHARE
from annotation.models import (
    AdjudicationRule,
    Assignment,
    Campaign,
    CampaignJudge,
    Document,
    ExternalGrade,
    Judgment,
    MachineJudge,
    Pair,
    PairSource,
    PooledRun,
    PoolOrdering,
)
from annotation.pooling import pool_runs
from annotation.scales import SCALES, validate_scale
from annotation.services.assignments import assign_pending, assignments_due
from annotation.services.common import MESSAGES
from annotation.services.ordering import check_pool_ordering, queue_reorder
from annotation.services.tallies import count_topics, tally_pairs
from common import text_limits

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
    "suggestions_from",
    "blind_share",
    "gate_threshold",
)
# Post-editing's control group is drawn from the seed by the blind share, so neither may
# change once humans have graded with it in force: their grades would change condition.
SUGGESTION_FIELDS = ("suggestions_from", "blind_share")
SUGGESTION_MESSAGES = {
    "not_our_machine": "Choose a machine judge of this campaign (or none).",
    "blind_share": "The blind share is a fraction from {low} to {high}.",
    "locked": (
        "Judges have graded with these suggestion settings: changing them would mix the "
        "suggested and blind groups. Start a new campaign to try other settings."
    ),
}


# --- campaigns -----------------------------------------------------------------------------


def check_campaign_texts(**texts: str | None) -> None:
    """ValidationError keyed by field for a name, description or guidelines longer than
    common.text_limits allows (None: not given)."""
    caps = {
        "name": text_limits.NAME,
        "description": text_limits.DESCRIPTION,
        "guidelines": text_limits.GUIDELINES,
    }
    errors = text_limits.length_errors(**{f: (text, caps[f]) for f, text in texts.items()})
    if errors:
        raise ValidationError(errors)


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
    team=None,
) -> Campaign:
    """Raises ValidationError keyed by the field at fault, and creates nothing then. The
    campaign belongs to ``team`` (the default team when None), whose judges alone it takes."""
    judges = list(judges)
    if team is not None:
        allowed = set(
            judge_users([team.pk])
            .filter(pk__in=[j.pk for j in judges])
            .values_list("pk", flat=True)
        )
        outsiders = [judge for judge in judges if judge.pk not in allowed]
        if outsiders:
            raise ValidationError(
                {
                    "judges": MESSAGES["judge_outside_team"].format(
                        judges=", ".join(str(judge) for judge in outsiders), team=team.name
                    )
                }
            )
    check_campaign_texts(name=name, description=description, guidelines=guidelines)
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
            **({"team": team} if team is not None else {}),
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
    (a text over its cap, ``scale``, ``relevance_threshold`` or ``overlap``) and saves nothing
    then.
    """
    unknown = sorted(set(changes) - set(CAMPAIGN_FIELDS))
    if unknown:
        raise ValueError(
            f"update_campaign cannot change {', '.join(unknown)}; "
            f"it changes {', '.join(CAMPAIGN_FIELDS)}"
        )
    check_campaign_texts(
        **{f: changes[f] for f in ("name", "description", "guidelines") if f in changes}
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
    _check_suggestions(campaign, changes)
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        _check_suggestions_unused(campaign, changes)
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


def _check_suggestions(campaign: Campaign, changes: dict) -> None:
    """``suggestions_from`` (a machine judge, its id, or None) must be one of the campaign's
    machine judges; ``blind_share`` a fraction within the control group's bounds."""
    if "suggestions_from" in changes:
        machine = changes["suggestions_from"]
        if machine is not None:
            pk = machine.pk if isinstance(machine, MachineJudge) else machine
            found = MachineJudge.objects.filter(judge__campaign=campaign, pk=pk).first()
            if found is None:
                raise ValidationError({"suggestions_from": SUGGESTION_MESSAGES["not_our_machine"]})
            changes["suggestions_from"] = found
    if "blind_share" in changes:
        share = changes["blind_share"]
        if not (isinstance(share, int | float) and MIN_BLIND_SHARE <= share <= MAX_BLIND_SHARE):
            raise ValidationError(
                {
                    "blind_share": SUGGESTION_MESSAGES["blind_share"].format(
                        low=MIN_BLIND_SHARE, high=MAX_BLIND_SHARE
                    )
                }
            )


def _check_suggestions_unused(campaign: Campaign, changes: dict) -> None:
    """Under the campaign's lock: a change to the suggestion settings while suggestions are
    (or were) on is refused once a human has graded a pair."""
    changing = [
        field
        for field in SUGGESTION_FIELDS
        if field in changes and changes[field] != getattr(campaign, field)
    ]
    on = campaign.suggestions_from_id is not None or changes.get("suggestions_from") is not None
    if changing and on and Judgment.objects.filter(assignment__pair__campaign=campaign).exists():
        raise ValidationError({changing[0]: SUGGESTION_MESSAGES["locked"]})


def update_writes(*, campaign: Campaign, changes: dict) -> int:
    """About how many rows :func:`update_campaign` would write for ``changes``: the
    assignments a larger overlap makes, and every pair's tally when machine grades start or
    stop counting (jobs.services.limits decides whether that fits in a request)."""
    rows = 0
    if changes.get("overlap", campaign.overlap) > campaign.overlap:
        judges = CampaignJudge.objects.filter(campaign=campaign).count()
        rows += assignments_due(campaign=campaign, judges=judges, overlap=changes["overlap"])
    machines = changes.get("machine_grades_adjudicate", campaign.machine_grades_adjudicate)
    if machines != campaign.machine_grades_adjudicate:
        rows += campaign.pairs.count()
    return rows


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


def add_pairs_in_batches(
    *,
    campaign: Campaign,
    pairs: Iterable[tuple[str, str]],
    source: PairSource,
    batch: int,
    on_batch: Callable[[int, int], None] | None = None,
) -> PoolChange:
    """:func:`add_pairs`, ``batch`` pairs at a time (in qid order), each batch committed on
    its own: a job adding a large pool holds the database's write lock (SQLite has one) for
    one batch at a time, and other writers (judges grading, the worker) get it in between.
    A batch that fails leaves the batches before it stored; running the same pairs again adds
    only the rest (pairs already in the pool count as ``already``). Check the pairs first.
    ``on_batch(done, total)`` after each batch."""
    wanted = sorted(set(pairs))
    added = already = new_documents = assigned = 0
    for start in range(0, len(wanted), batch):
        change = add_pairs(campaign=campaign, pairs=wanted[start : start + batch], source=source)
        added += change.added
        already += change.already
        new_documents += change.new_documents
        assigned += change.assigned
        if on_batch is not None:
            on_batch(min(start + batch, len(wanted)), len(wanted))
    return PoolChange(added, already, new_documents, assigned)


def pool_from_runs(
    *,
    campaign: Campaign,
    run_frames: Sequence,
    depth: int,
    runs: Sequence | None = None,
    batch: int | None = None,
) -> PoolChange:
    """Depth-k pooling of run frames (qid, docno, score) over the campaign's topics. When
    the frames are stored runs', ``runs`` names them (in the same order), and the campaign
    records them (PooledRun): the live leaderboard ranks them, and the leave-one-run-out
    test of the campaign's qrels uses their depth. All in one transaction, or with ``batch``
    (a job), ``batch`` pairs per transaction (:func:`add_pairs_in_batches`)."""
    qids = list(campaign.topics.values_list("qid", flat=True))
    pool = pool_runs(run_frames, depth=depth, topics=qids)
    pairs = pool.select("qid", "docno").iter_rows()
    if batch is not None:
        change = add_pairs_in_batches(
            campaign=campaign, pairs=pairs, source=PairSource.POOLED, batch=batch
        )
        record_pooled_runs(campaign=campaign, runs=runs or (), depth=depth)
        return change
    with transaction.atomic():
        change = add_pairs(campaign=campaign, pairs=pairs, source=PairSource.POOLED)
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


def overlap_warning(*, campaign: Campaign, judges: int) -> str:
    """A warning when the campaign has fewer judges than it asks per pair ("" otherwise): each
    pair then goes to every judge until more are added (the pages and create_campaign)."""
    if judges >= campaign.overlap:
        return ""
    return MESSAGES["overlap_above_judges"].format(
        overlap=campaign.overlap, judges=judges, s="" if judges == 1 else "s"
    )
