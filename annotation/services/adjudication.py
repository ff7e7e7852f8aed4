"""From several judges' grades to one qrels version: each pair's final grade (by the
campaign's rule, a lead's decision or a calibration pair's known grade), the lead's
disagreement queue, decisions with conflict detection, and publishing.

The rules themselves are pure (annotation/adjudication.py); this module gathers the grades,
stores decisions and freezes what is decided as an immutable qrels version with the
provenance of every grade.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import polars as pl
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils.text import slugify

from annotation import adjudication
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    GradeBasis,
    LeadDecision,
    Pair,
    Publication,
    PublishedGrade,
)
from annotation.services.common import MESSAGES
from evaluation.models import QrelsSource
from evaluation.services import store_qrels

MAX_REASON = 2000


class DecisionConflict(Exception):
    """Another decision on the pair was recorded after the one this decision was based on."""

    def __init__(self, current: LeadDecision | None):
        self.current = current
        if current is None:
            message = "The decision you replaced was withdrawn meanwhile. Reload the pair."
        else:
            who = current.decided_by.get_username() if current.decided_by else "someone"
            message = (
                f"{who} decided this pair as {current.grade} at "
                f"{current.decided_at:%Y-%m-%d %H:%M:%S} while you were looking at it; "
                "reload the pair to see their reason, then decide again if you disagree."
            )
        super().__init__(message)


class PublishBlocked(Exception):
    """Undecided pairs stop publishing unless the lead leaves them out explicitly."""

    def __init__(self, undecided: list[PairState]):
        self.undecided = undecided
        super().__init__(
            f"{len(undecided)} pair{'s' if len(undecided) != 1 else ''} "
            "still undecided; decide them or publish with them left out."
        )


@dataclass(frozen=True)
class JudgeGrade:
    judge_id: int
    username: str
    grade: int | None  # None: skipped
    skip_reason: str
    note: str
    seconds: float


@dataclass
class PairState:
    """Everything a lead needs to know about one pair's way to a final grade."""

    pair_id: int
    topic_id: int
    qid: str
    query: str
    docno: str
    gold_grade: int | None
    assigned: int
    open: int
    judgments: list[JudgeGrade] = field(default_factory=list)
    decision: LeadDecision | None = None
    automatic: adjudication.Decision | None = None
    grade: int | None = None
    basis: str | None = None
    why: str = ""

    @property
    def grades(self) -> list[int]:
        return [j.grade for j in self.judgments if j.grade is not None]

    @property
    def spread(self) -> int:
        return adjudication.spread(self.grades) if self.grades else 0

    @property
    def disputed(self) -> bool:
        return self.spread > 0

    @property
    def decided(self) -> bool:
        return self.grade is not None


def _settle(state: PairState, rule: str) -> None:
    """Fill in the pair's final grade and its basis, or why it has none yet."""
    if state.decision is not None:
        state.grade, state.basis = state.decision.grade, GradeBasis.LEAD
        state.why = state.decision.reason
        return
    if state.gold_grade is not None:
        state.grade, state.basis = state.gold_grade, GradeBasis.GOLD
        state.why = "calibration pair with a known grade"
        return
    if state.open:
        state.why = f"{state.open} of {state.assigned} judges have not graded it yet"
        return
    if not state.grades:
        state.why = "every judge skipped it" if state.assigned else "nobody is assigned to it"
        return
    state.automatic = adjudication.decide(state.grades, rule)
    state.why = state.automatic.reason
    if state.automatic.decided:
        state.grade, state.basis = state.automatic.grade, state.automatic.rule_applied


def pair_states(
    *, campaign: Campaign, pair_ids: Iterable[int] | None = None, topic_id: int | None = None
) -> list[PairState]:
    """The state of the campaign's pairs (or of the given ones), in qid, docno order. Three
    queries however many pairs: pairs, assignments with judgments, current decisions."""
    pairs = Pair.objects.filter(campaign=campaign)
    if pair_ids is not None:
        pairs = pairs.filter(pk__in=list(pair_ids))
    if topic_id is not None:
        pairs = pairs.filter(topic_id=topic_id)
    states = {
        pk: PairState(pk, topic, qid, query, docno, gold, 0, 0)
        for pk, topic, qid, query, docno, gold in pairs.order_by(
            "topic__qid", "document__docno"
        ).values_list(
            "pk", "topic_id", "topic__qid", "topic__query", "document__docno", "gold_grade"
        )
    }
    rows = (
        Assignment.objects.filter(pair__in=pairs)
        .order_by("judge__username")
        .values_list(
            "pair_id",
            "judge_id",
            "judge__username",
            "status",
            "judgment__grade",
            "judgment__skip_reason",
            "judgment__note",
            "judgment__seconds",
        )
    )
    for pair_id, judge_id, username, status, grade, skip, note, seconds in rows:
        state = states[pair_id]
        state.assigned += 1
        if status == AssignmentStatus.OPEN:
            state.open += 1
            continue
        state.judgments.append(
            JudgeGrade(judge_id, username, grade, skip or "", note or "", seconds or 0.0)
        )
    for decision in LeadDecision.objects.filter(
        pair__in=pairs, superseded_by__isnull=True
    ).select_related("decided_by"):
        states[decision.pair_id].decision = decision
    for state in states.values():
        _settle(state, campaign.adjudication_rule)
    return list(states.values())


# --- per-pair summaries: the queue and the figures without loading judgments -------------
#
# A lead's pages need, for every pair, only how many judges it has, how many have not graded
# it, how many gave each grade, its gold grade and whether a lead decided it. The database
# counts those (one GROUP BY over the pairs, one row per pair); the rule's outcome and the
# queue's order follow from the counts with the same functions as for a whole PairState
# (annotation.adjudication), memoised per distinct count vector (a handful per campaign).
# Only the pairs a page shows are then read in full (pair_states with their ids).


@dataclass(frozen=True, slots=True)
class PairSummary:
    """One pair as counts: ``counts[i]`` judges gave the campaign's i-th grade."""

    pair_id: int
    topic_id: int
    qid: str
    docno: str
    gold_grade: int | None
    assigned: int
    open: int
    counts: tuple[int, ...]
    decided_by_lead: bool
    basis: str | None  # the final grade's basis, None while undecided
    spread: int
    straddles: bool

    @property
    def disputed(self) -> bool:
        return self.spread > 0

    @property
    def decided(self) -> bool:
        return self.basis is not None


def _grades_of(counts: Sequence[int], scale: Sequence[int]) -> list[int]:
    return [grade for grade, n in zip(scale, counts, strict=True) for _ in range(n)]


def _basis(has_decision: bool, gold_grade, open_: int, grades: list[int], rule: str):
    """_settle's answer (the basis of the final grade, or None) without its words."""
    if has_decision:
        return GradeBasis.LEAD
    if gold_grade is not None:
        return GradeBasis.GOLD
    if open_ or not grades:
        return None
    decision = adjudication.decide(grades, rule)
    return decision.rule_applied if decision.decided else None


def pair_summaries(*, campaign: Campaign, topic_id: int | None = None) -> list[PairSummary]:
    """Every pair of the campaign (or of one topic) as a PairSummary, in qid, docno order.
    Two queries: the counts per pair (grouped in the database), the pairs a lead decided."""
    scale = campaign.grades
    pairs = Pair.objects.filter(campaign=campaign)
    if topic_id is not None:
        pairs = pairs.filter(topic_id=topic_id)
    per_grade = {
        f"grade_{i}": Count("assignments", filter=Q(assignments__judgment__grade=grade))
        for i, grade in enumerate(scale)
    }
    rows = (
        pairs.values("pk", "topic_id", "topic__qid", "document__docno", "gold_grade")
        .annotate(
            n_assigned=Count("assignments"),
            n_open=Count("assignments", filter=Q(assignments__status=AssignmentStatus.OPEN)),
            **per_grade,
        )
        .order_by("topic__qid", "document__docno")
        .values_list(
            "pk",
            "topic_id",
            "topic__qid",
            "document__docno",
            "gold_grade",
            "n_assigned",
            "n_open",
            *per_grade,
        )
    )
    decided = set(
        LeadDecision.objects.filter(pair__in=pairs, superseded_by__isnull=True).values_list(
            "pair_id", flat=True
        )
    )
    rule, threshold = campaign.adjudication_rule, campaign.relevance_threshold
    shapes: dict[tuple, tuple[int, bool]] = {}
    outcomes: dict[tuple, str | None] = {}
    result = []
    for pk, topic, qid, docno, gold, assigned, open_, *counts in rows:
        counts = tuple(counts)
        shape = shapes.get(counts)
        if shape is None:
            grades = _grades_of(counts, scale)
            shape = shapes[counts] = (
                (adjudication.spread(grades), adjudication.straddles(grades, threshold))
                if grades
                else (0, False)
            )
        has_decision = pk in decided
        key = (has_decision, gold is not None, bool(open_), counts)
        if key not in outcomes:
            outcomes[key] = _basis(has_decision, gold, open_, _grades_of(counts, scale), rule)
        basis = outcomes[key]
        summary = PairSummary(
            pk, topic, qid, docno, gold, assigned, open_, counts, has_decision, basis, *shape
        )
        result.append(summary)
    return result


def pair_figures(summaries: Iterable[PairSummary]) -> dict:
    """What the queue and the publish page count: pairs, decided and undecided ones,
    disputed ones, pairs still waiting for a judge, pairs a lead decided."""
    figures = dict.fromkeys(("pairs", "decided", "disputed", "waiting", "by_lead"), 0)
    for s in summaries:
        figures["pairs"] += 1
        figures["decided"] += s.decided
        figures["disputed"] += s.disputed
        figures["waiting"] += bool(s.open)
        figures["by_lead"] += s.basis == GradeBasis.LEAD
    figures["undecided"] = figures["pairs"] - figures["decided"]
    return figures


def queue_order(
    summaries: Iterable[PairSummary],
    *,
    scale: Sequence[int],
    threshold: int,
    undecided_only: bool = False,
) -> list[PairSummary]:
    """The disputed pairs among ``summaries`` (given in qid, docno order) in the order a
    lead works through them (adjudication.disagreement_order: straddling the threshold
    first, then widest spread, then as given); ``undecided_only`` as in disagreement_queue."""
    disputed = [s for s in summaries if s.disputed]
    if undecided_only:
        disputed = [s for s in disputed if not s.decided and not s.open]
    grades = {s.counts: _grades_of(s.counts, scale) for s in disputed}
    order = adjudication.disagreement_order(
        ((i, grades[s.counts]) for i, s in enumerate(disputed)), threshold=threshold
    )
    return [disputed[i] for i in order]


def states_of(*, campaign: Campaign, summaries: Sequence[PairSummary]) -> list[PairState]:
    """The full PairState of each of ``summaries``, in their order (a few thousand ids per
    query, so a long queue stays under every database's limit on query parameters)."""
    by_id: dict[int, PairState] = {}
    ids = [s.pair_id for s in summaries]
    for start in range(0, len(ids), STATES_PER_QUERY):
        chunk = ids[start : start + STATES_PER_QUERY]
        by_id.update((s.pair_id, s) for s in pair_states(campaign=campaign, pair_ids=chunk))
    return [by_id[pk] for pk in ids]


STATES_PER_QUERY = 2000


def disagreement_queue(
    *, campaign: Campaign, topic_id: int | None = None, undecided_only: bool = False
) -> list[PairState]:
    """Pairs whose judges gave different grades, in the order a lead should work through
    them: straddling the relevance threshold first, then widest spread.

    All of them by default, those still waiting for a judge included, so the list holds
    exactly the pairs the agreement report counts as disputed (graded differently by two or
    more judges). ``undecided_only`` keeps the ones a lead has to settle: every judge has
    graded them and no rule or decision has given them a grade. The pairs are chosen and
    ordered from their summaries (pair_summaries); only the chosen ones are read in full."""
    order = queue_order(
        pair_summaries(campaign=campaign, topic_id=topic_id),
        scale=campaign.grades,
        threshold=campaign.relevance_threshold,
        undecided_only=undecided_only,
    )
    return states_of(campaign=campaign, summaries=order)


def decide_pair(
    *,
    campaign: Campaign,
    pair_id: int,
    lead,
    grade: int,
    reason: str,
    based_on: int | None,
) -> LeadDecision:
    """Record the lead's decision. ``based_on`` is the current decision the lead saw (None:
    none); if another was recorded since, :class:`DecisionConflict` says who and what, and
    nothing is stored."""
    reason = reason.strip()
    if not reason:
        raise ValidationError("Give a reason for the decision: it is kept with the grade.")
    if len(reason) > MAX_REASON:
        raise ValidationError(f"Keep the reason under {MAX_REASON} characters.")
    if grade not in campaign.grades:
        raise ValidationError(
            MESSAGES["grade_not_in_scale"].format(
                grade=grade, grades=", ".join(map(str, campaign.grades))
            )
        )
    try:
        with transaction.atomic():
            pair = Pair.objects.select_for_update().get(pk=pair_id, campaign=campaign)
            current = pair.decisions.filter(superseded_by__isnull=True).first()
            if (current.pk if current else None) != based_on:
                raise DecisionConflict(current)
            # The rule in force as stored now, not as the caller's copy of the campaign says.
            rule = Campaign.objects.values_list("adjudication_rule", flat=True).get(pk=campaign.pk)
            return LeadDecision.objects.create(
                pair=pair,
                grade=grade,
                reason=reason,
                rule=rule,
                decided_by=lead,
                supersedes=current,
            )
    except IntegrityError:
        # The database's own guard (each decision superseded once): a racer won.
        current = LeadDecision.objects.filter(pair_id=pair_id, superseded_by__isnull=True).first()
        raise DecisionConflict(current) from None


# The names publish() accepts (those slugify leaves unchanged: lowercase ASCII letters,
# digits, underscores and hyphens, no two hyphens in a row, a letter or digit at each end),
# as a regular expression the publish page's input uses too (HTML pattern syntax: the
# whole value must match).
QRELS_NAME_PATTERN = "[a-z0-9]+((_|-_)*-?[a-z0-9]+)*"


def default_qrels_name(campaign: Campaign) -> str:
    return slugify(campaign.name)[:100] or f"campaign-{campaign.pk}"


def publish(
    *,
    campaign: Campaign,
    user,
    name: str = "",
    description: str = "",
    leave_out_undecided: bool = False,
) -> Publication:
    """Freeze the decided grades as the next qrels version of ``name`` (the campaign's
    slug by default), with the provenance of every grade. Undecided pairs raise
    :class:`PublishBlocked` unless ``leave_out_undecided``, which records them as left out."""
    name = name.strip() or default_qrels_name(campaign)
    if slugify(name) != name:
        raise ValidationError(
            f"Name {name!r}: use lowercase letters, digits, hyphens and underscores, with a "
            f"letter or digit at each end (e.g. {slugify(name) or 'qrels'!r})."
        )
    with transaction.atomic():
        # No decision or grade changes the campaign's pairs under us while we read them, and
        # the rule and threshold recorded are the ones in force under the lock.
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        states = pair_states(campaign=campaign)
        decided = [s for s in states if s.decided]
        undecided = [s for s in states if not s.decided]
        if undecided and not leave_out_undecided:
            raise PublishBlocked(undecided)
        if not decided:
            raise ValidationError("No pair has a final grade yet: there is nothing to publish.")
        frame = pl.DataFrame(
            [(s.qid, s.docno, s.grade) for s in decided],
            schema={"qid": pl.String, "docno": pl.String, "grade": pl.Int64},
            orient="row",
        )
        qrels = store_qrels(
            frame=frame,
            name=name,
            source=QrelsSource.CAMPAIGN,
            description=description or f"Published from campaign {campaign.name!r}.",
            user=user,
        )
        counts = dict(Counter(str(s.basis) for s in decided))
        counts["left_out"] = len(undecided)
        publication = Publication.objects.create(
            campaign=campaign,
            qrels=qrels,
            rule=campaign.adjudication_rule,
            relevance_threshold=campaign.relevance_threshold,
            counts=counts,
            left_out=[[s.qid, s.docno, s.why] for s in undecided],
            published_by=user,
        )
        PublishedGrade.objects.bulk_create(
            (
                PublishedGrade(
                    publication=publication,
                    qid=s.qid,
                    docno=s.docno,
                    grade=s.grade,
                    basis=s.basis,
                    judges={j.username: j.grade for j in s.judgments},
                    decision=s.decision,
                )
                for s in decided
            ),
            batch_size=2000,
        )
    return publication


JUDGMENT_HEADER = ["qid", "docno", "judge", "grade", "skip_reason", "note", "seconds", "time"]
PROVENANCE_HEADER = [
    "qid",
    "docno",
    "grade",
    "basis",
    "judges",
    "lead_reason",
    "lead",
    "decided_at",
    "rule_in_force",
]
DECISION_HEADER = [
    "qid",
    "docno",
    "grade",
    "reason",
    "lead",
    "decided_at",
    "rule_in_force",
    "replaces",
]


def judgment_rows(campaign: Campaign):
    """Every judge's own judgment of every pair, for the raw download: qid, docno, judge,
    grade (None when skipped), skip reason, note, active seconds, last change."""
    return (
        Assignment.objects.filter(pair__campaign=campaign, judgment__isnull=False)
        .order_by("pair__topic__qid", "pair__document__docno", "judge__username")
        .values_list(
            "pair__topic__qid",
            "pair__document__docno",
            "judge__username",
            "judgment__grade",
            "judgment__skip_reason",
            "judgment__note",
            "judgment__seconds",
            "judgment__updated_at",
        )
    )


def judgment_table(campaign: Campaign):
    """:func:`judgment_rows` as text cells, under :data:`JUDGMENT_HEADER`."""
    for qid, docno, judge, grade, skip, note, seconds, at in judgment_rows(campaign):
        yield (
            qid,
            docno,
            judge,
            "" if grade is None else grade,
            skip,
            note,
            f"{seconds:.1f}",
            at.isoformat(),
        )


def provenance_table(publication: Publication):
    """Each published grade with its basis, every judge's grade and, for a lead's decision,
    the reason, the lead, when, and the campaign's rule in force then, under
    :data:`PROVENANCE_HEADER`."""
    for g in publication.grades.select_related("decision__decided_by"):
        judges = " ".join(
            f"{judge}={'skip' if grade is None else grade}"
            for judge, grade in sorted(g.judges.items())
        )
        d = g.decision
        lead = [d.reason, _username(d.decided_by), d.decided_at.isoformat(), d.rule] if d else []
        yield g.qid, g.docno, g.grade, g.basis, judges, *(lead or ["", "", "", ""])


def decision_table(campaign: Campaign):
    """The decision log: every lead's decision on the campaign's pairs, oldest first, with
    the rule in force when it was made and the decision it replaced, under
    :data:`DECISION_HEADER`."""
    decisions = LeadDecision.objects.filter(pair__campaign=campaign).select_related(
        "pair__topic", "pair__document", "decided_by"
    )
    for d in decisions:
        yield (
            d.pair.topic.qid,
            d.pair.document.docno,
            d.grade,
            d.reason,
            _username(d.decided_by),
            d.decided_at.isoformat(),
            d.rule,
            d.supersedes_id or "",
        )


def _username(user) -> str:
    return user.get_username() if user is not None else ""
