"""The agreement report's "machines" section: each machine judge of a campaign against each
human judge (people judging here and outside people), against the humans' consensus (the
median of a pair's human grades, the lower on ties) and against the campaign's latest
published qrels (its grades from humans; pairs a machine filled are left out). The numbers
are annotation/agreement/machines.py's; this module only reads the grades. The humans-only
statistics of the report are not touched: machines are never in them.

Each machine is also measured on the audit (services/audits.py): the pairs a lead sent to
human judges that people judging here have graded since, against their consensus; over all
audit pairs, and by kind of audit when there are several (only the random sample estimates
the machine's agreement on machine-only pairs without bias: the other kinds pick hard pairs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotation.agreement import RESAMPLES
from annotation.agreement.machines import MachineComparison, compare_machine, human_consensus
from annotation.models import (
    Assignment,
    AssignmentStatus,
    AuditKind,
    AuditPair,
    Campaign,
    ExternalGrade,
    GradeBasis,
    JudgeKind,
    Pair,
)


@dataclass(frozen=True)
class MachineSection:
    judge: str  # machine:name
    graded: int
    comparisons: list[MachineComparison]  # consensus, qrels, then each human judge
    audit: list[MachineComparison] = field(default_factory=list)  # all audit pairs, by kind
    audit_sent: int = 0  # pairs of the campaign sent for audit

    @property
    def consensus(self) -> MachineComparison | None:
        return self.comparisons[0] if self.comparisons else None


def human_grades(campaign: Campaign) -> dict[str, dict[int, int]]:
    """judge label -> {pair id: grade}, for people judging here and outside people."""
    grades: dict[str, dict[int, int]] = {}
    for username, pair_id, grade in Assignment.objects.filter(
        pair__campaign=campaign, status=AssignmentStatus.DONE, judgment__grade__isnull=False
    ).values_list("judge__username", "pair_id", "judgment__grade"):
        grades.setdefault(username, {})[pair_id] = grade
    for name, pair_id, grade in ExternalGrade.objects.filter(
        pair__campaign=campaign, judge__kind=JudgeKind.OUTSIDE
    ).values_list("judge__name", "pair_id", "grade"):
        grades.setdefault(f"outside:{name}", {})[pair_id] = grade
    return grades


def published_grades(campaign: Campaign) -> tuple[str, dict[int, int]]:
    """The latest publication's label and {pair id: grade} of its human-made grades."""
    publication = campaign.publications.select_related("qrels").first()
    if publication is None:
        return "", {}
    pair_of = {
        (qid, docno): pk
        for pk, qid, docno in Pair.objects.filter(campaign=campaign).values_list(
            "pk", "topic__qid", "document__docno"
        )
    }
    grades = {}
    for qid, docno, grade in publication.grades.exclude(basis=GradeBasis.MACHINE).values_list(
        "qid", "docno", "grade"
    ):
        pair = pair_of.get((qid, docno))
        if pair is not None:
            grades[pair] = grade
    return f"qrels {publication.qrels}", grades


def machine_agreement(
    *, campaign: Campaign, weights: str | None = "linear", resamples: int = RESAMPLES
) -> list[MachineSection]:
    """One section per machine judge that has graded something; ``weights`` (None, linear,
    quadratic) is the weighting of the per-topic kappas."""
    machines: dict[str, dict[int, int]] = {}
    for name, pair_id, grade in ExternalGrade.objects.filter(
        pair__campaign=campaign, judge__kind=JudgeKind.MACHINE
    ).values_list("judge__name", "pair_id", "grade"):
        machines.setdefault(f"machine:{name}", {})[pair_id] = grade
    if not machines:
        return []
    humans = human_grades(campaign)
    consensus = human_consensus(humans)
    qrels_label, qrels = published_grades(campaign)
    topic_of = dict(Pair.objects.filter(campaign=campaign).values_list("pk", "topic__qid"))
    scale = campaign.grades
    audited = audit_kinds(campaign)
    # People judging here graded the audit pairs (they were sent to them); outside people's
    # grades predate the audit. Usernames cannot hold a colon, labels of the others do.
    audit_humans = human_consensus(
        {
            judge: {pair: grade for pair, grade in grades.items() if pair in audited}
            for judge, grades in humans.items()
            if ":" not in judge
        }
    )
    sections = []
    for label, grades in sorted(machines.items()):
        others = [("the humans' consensus", consensus)]
        if qrels_label:
            others.append((f"the published {qrels_label}", qrels))
        others += [(judge, humans[judge]) for judge in sorted(humans)]
        comparisons = [
            compare_machine(
                grades,
                other,
                against=against,
                scale=scale,
                topic_of=topic_of,
                weights=weights,
                resamples=resamples,
                seed=campaign.seed,
            )
            for against, other in others
        ]
        audit = []
        if audited:
            kinds = sorted(set(audited.values()))
            groups = [("the audit: humans since", set(audited))]
            if len(kinds) > 1:
                groups += [
                    (
                        f"the audit, {AuditKind(kind).label.lower()}",
                        {p for p, k in audited.items() if k == kind},
                    )
                    for kind in kinds
                ]
            audit = [
                compare_machine(
                    {pair: grade for pair, grade in grades.items() if pair in pairs},
                    audit_humans,
                    against=against,
                    scale=scale,
                    weights=weights,
                    resamples=resamples,
                    seed=campaign.seed,
                )
                for against, pairs in groups
            ]
        sections.append(MachineSection(label, len(grades), comparisons, audit, len(audited)))
    return sections


def audit_kinds(campaign: Campaign) -> dict[int, str]:
    """pair id -> the kind of audit it was sent in (one query)."""
    return dict(
        AuditPair.objects.filter(audit__campaign=campaign).values_list("pair_id", "audit__kind")
    )
