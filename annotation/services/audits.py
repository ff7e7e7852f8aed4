"""Humans check the machines where it matters: a lead sends pairs to the campaign's human
judges (new assignments, with the campaign's overlap, through assign_pending) where machine
judges disagree with each other, where a machine's grade straddles the relevance threshold
against the humans' grades on the same topic, or a seeded random sample of machine-only
pairs. Which pairs is annotation/auditing.py's (pure); this module reads the grades, records
the audit and assigns, all or nothing, under a lock on the campaign.

A pair can be sent when it is short of human judges (fewer assignments than the campaign's
overlap, or than its judges when it has fewer), is not a calibration pair, and was never sent
before. Machines never hold assignments, so they never take an overlap slot.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count

from annotation import auditing
from annotation.models import (
    SENT_BY_HAND,
    Assignment,
    AssignmentStatus,
    AuditKind,
    AuditPair,
    Campaign,
    CampaignJudge,
    ExternalGrade,
    JudgeKind,
    MachineAudit,
    Pair,
)
from annotation.services.assignments import assign_pending
from jobs.services.limits import TooLargeForRequest

MESSAGES = {
    **auditing.MESSAGES,
    "no_judges": "This campaign has no human judges to send pairs to: add judges first.",
    "bad_seed": "A seed is a whole number from 0 to 2147483647.",
    "size_for_sample": "Only a random sample takes a size.",
}

MAX_SEED = 2**31 - 1


@dataclass(frozen=True)
class AuditResult:
    """What sending an audit did: ``audit`` is None when nothing could be sent;
    ``repeated`` when the same sample was sent before (and is ``audit``)."""

    kind: str
    audit: MachineAudit | None
    sent: int
    assigned: int
    repeated: bool = False
    choices: tuple[auditing.AuditChoice, ...] = ()


@dataclass(frozen=True)
class CampaignGrades:
    machines: dict[str, dict[int, int]]  # machine:name -> {pair id: grade}
    humans: dict[int, list[int]]  # pair id -> grades by people here and outside people
    topic_of: dict[int, int]  # pair id -> topic id


def machine_graded(campaign: Campaign):
    """The ids of the campaign's pairs some machine graded (a subquery). Every audit draws
    from them alone, so the humans' grades of the other pairs are never read."""
    return ExternalGrade.objects.filter(
        pair__campaign=campaign, judge__kind=JudgeKind.MACHINE
    ).values("pair_id")


def read_grades(campaign: Campaign) -> CampaignGrades:
    """Every machine grade of the campaign, and the humans' grades and the topics of the
    pairs machines graded (four queries)."""
    machines: dict[str, dict[int, int]] = defaultdict(dict)
    humans: dict[int, list[int]] = defaultdict(list)
    graded = machine_graded(campaign)
    # The campaign's own pairs, through ``graded`` alone (no join of the pairs' table).
    for kind, name, pair_id, grade in ExternalGrade.objects.filter(pair_id__in=graded).values_list(
        "judge__kind", "judge__name", "pair_id", "grade"
    ):
        if kind == JudgeKind.MACHINE:
            machines[f"machine:{name}"][pair_id] = grade
        else:
            humans[pair_id].append(grade)
    for pair_id, grade in Assignment.objects.filter(
        pair_id__in=graded, status=AssignmentStatus.DONE, judgment__grade__isnull=False
    ).values_list("pair_id", "judgment__grade"):
        humans[pair_id].append(grade)
    topic_of = dict(campaign.pairs.filter(pk__in=graded).values_list("pk", "topic_id"))
    return CampaignGrades(dict(machines), dict(humans), topic_of)


def eligible_pairs(campaign: Campaign, judges: int) -> set[int]:
    """Pairs that may be sent: machine-graded, short of human judges, not gold, never sent
    before."""
    overlap = min(campaign.overlap, judges)
    return set(
        Pair.objects.filter(
            campaign=campaign,
            pk__in=machine_graded(campaign),
            gold_grade__isnull=True,
            audit__isnull=True,
        )
        .annotate(n=Count("assignments"))
        .filter(n__lt=overlap)
        .values_list("pk", flat=True)
    )


def _check(kind: str, size: int | None, seed: int | None) -> None:
    if kind not in SENT_BY_HAND:
        raise ValidationError(
            MESSAGES["unknown_kind"].format(kind=kind, choices=", ".join(SENT_BY_HAND))
        )
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise ValidationError(MESSAGES["bad_seed"])
    if kind != AuditKind.SAMPLE and size is not None:
        raise ValidationError(MESSAGES["size_for_sample"])


def _choose(campaign: Campaign, kind: str, size, seed: int, judges: int):
    grades = read_grades(campaign)
    try:
        return auditing.select_audit(
            kind,
            grades.machines,
            grades.humans,
            topic_of=grades.topic_of,
            threshold=campaign.relevance_threshold,
            eligible=eligible_pairs(campaign, judges),
            size=size,
            seed=seed,
        )
    except ValueError as error:
        raise ValidationError(str(error)) from None


def send_audit(
    *,
    campaign: Campaign,
    kind: str,
    size: int | None = None,
    seed: int | None = None,
    user=None,
    dry_run: bool = False,
    max_rows: int | None = None,
) -> AuditResult:
    """Send the pairs of an audit of ``kind`` to the campaign's human judges, all or nothing.
    ``size`` and ``seed`` are a sample's (the seed defaults to the campaign's). The same
    sample (seed and size) again returns the first one with ``repeated``; a disagreement or
    threshold audit again sends only pairs that became eligible since (usually none).
    ``dry_run``: choose, send nothing. ValidationError when it cannot be sent (no human
    judges, no machine grades, one machine for a disagreement audit, a sample larger than
    what can be sent, ...), and nothing changes then."""
    _check(kind, size, seed)
    if kind == AuditKind.SAMPLE and seed is None:
        seed = campaign.seed
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        judges = CampaignJudge.objects.filter(campaign=campaign).count()
        if not judges:
            raise ValidationError(MESSAGES["no_judges"])
        if kind == AuditKind.SAMPLE:
            earlier = MachineAudit.objects.filter(
                campaign=campaign, kind=kind, seed=seed, size=size
            ).first()
            if earlier is not None:
                return AuditResult(kind, earlier, 0, 0, repeated=True)
        choices = tuple(_choose(campaign, kind, size, seed or 0, judges))
        if dry_run or not choices:
            return AuditResult(kind, None, 0, 0, choices=choices)
        if max_rows is not None and len(choices) > max_rows:
            # A request's SYNC_WRITE_ROWS: the page and the API then send it by a job.
            raise TooLargeForRequest(
                count=len(choices), what="pairs to audit", instead="A job sends them instead."
            )
        audit = MachineAudit.objects.create(
            campaign=campaign,
            kind=kind,
            size=size if kind == AuditKind.SAMPLE else None,
            seed=seed if kind == AuditKind.SAMPLE else None,
            sent_by=user,
        )
        AuditPair.objects.bulk_create(
            [AuditPair(audit=audit, pair_id=c.pair, reason=c.reason) for c in choices],
            batch_size=2000,
        )
        assigned = assign_pending(campaign=campaign, pair_ids=[c.pair for c in choices])
        audit.sent, audit.assigned = len(choices), assigned
        audit.save(update_fields=["sent", "assigned"])
    return AuditResult(kind, audit, len(choices), assigned, choices=choices)


def audit_candidates(*, campaign: Campaign) -> dict[str, dict]:
    """For the page: per kind, how many pairs sending it now would send, or why it cannot
    be sent ({"pairs": n} or {"reason": words}). A sample's figure is how many machine-only
    pairs it can draw from."""
    judges = CampaignJudge.objects.filter(campaign=campaign).count()
    out: dict[str, dict] = {}
    if not judges:
        return {kind: {"reason": MESSAGES["no_judges"]} for kind in SENT_BY_HAND}
    grades = read_grades(campaign)
    eligible = eligible_pairs(campaign, judges)
    for kind in (AuditKind.DISAGREEMENT, AuditKind.THRESHOLD):
        try:
            chosen = auditing.select_audit(
                kind,
                grades.machines,
                grades.humans,
                topic_of=grades.topic_of,
                threshold=campaign.relevance_threshold,
                eligible=eligible,
            )
            out[kind] = {"pairs": len(chosen)}
        except ValueError as error:
            out[kind] = {"reason": str(error)}
    if not any(grades.machines.values()):
        out[AuditKind.SAMPLE] = {"reason": MESSAGES["no_machines"]}
    else:
        pool = auditing.machine_only_pairs(grades.machines, grades.humans) & eligible
        out[AuditKind.SAMPLE] = {"pairs": len(pool)}
    return out
