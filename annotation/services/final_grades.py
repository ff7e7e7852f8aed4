"""Each pair's way to its final grade: the grades of its judges (here, outside people and,
where the campaign lets them count, machines), a lead's current decision or a calibration
pair's known grade, settled by the campaign's rule into a final grade and its basis, or why
it has none yet (PairState).

The rule itself is pure (annotation/adjudication.py); the lead's queue, decisions and
publishing build on these states (annotation/services/adjudication.py), and the lead's pages
count the same conditions in the database (annotation/services/tallies.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from annotation import adjudication
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    ExternalGrade,
    GradeBasis,
    JudgeKind,
    LeadDecision,
    Pair,
)


@dataclass(frozen=True)
class JudgeGrade:
    judge_id: int | None  # None: an outside or machine judge (ExternalJudge)
    username: str  # for an outside or machine judge: kind:name
    grade: int | None  # None: skipped
    skip_reason: str
    note: str
    seconds: float
    kind: str = JudgeKind.HERE


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
    def human_grades(self) -> list[int]:
        return [
            j.grade for j in self.judgments if j.grade is not None and j.kind != JudgeKind.MACHINE
        ]

    @property
    def machine_grades(self) -> list[int]:
        return [j.grade for j in self.judgments if j.kind == JudgeKind.MACHINE]

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
    if not state.human_grades:
        # Machine grades count beside humans' (when the campaign lets them), never alone.
        state.why = "no human has graded it"
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
    external = (
        ExternalGrade.objects.filter(pair__in=pairs)
        .order_by("judge__kind", "judge__name")
        .values_list("pair_id", "judge__kind", "judge__name", "grade", "note", "seconds")
    )
    if not campaign.machine_grades_adjudicate:
        external = external.exclude(judge__kind=JudgeKind.MACHINE)
    for pair_id, kind, name, grade, note, seconds in external:
        state = states[pair_id]
        state.assigned += 1
        state.judgments.append(
            JudgeGrade(None, f"{kind}:{name}", grade, "", note or "", seconds or 0.0, kind)
        )
    for decision in LeadDecision.objects.filter(
        pair__in=pairs, superseded_by__isnull=True
    ).select_related("decided_by"):
        states[decision.pair_id].decision = decision
    for state in states.values():
        _settle(state, campaign.adjudication_rule)
    return list(states.values())


# Pairs read in full per query, within every database's limit on query parameters.
STATES_PER_QUERY = 2000


def states_of(*, campaign: Campaign, pair_ids: Sequence[int]) -> list[PairState]:
    """The full PairState of each of ``pair_ids``, in their order."""
    by_id: dict[int, PairState] = {}
    ids = list(pair_ids)
    for start in range(0, len(ids), STATES_PER_QUERY):
        chunk = ids[start : start + STATES_PER_QUERY]
        by_id.update((s.pair_id, s) for s in pair_states(campaign=campaign, pair_ids=chunk))
    return [by_id[pk] for pk in ids]
