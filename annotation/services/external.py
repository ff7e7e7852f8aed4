"""Judges who do not judge on our pages: outside people (grades imported) and machines.

Their grades are ExternalGrade rows (one per pair per judge), never assignments, so they
never take a slot of a pair's overlap, and a machine judge has no login and no way to read
anyone's grades. Outside people's grades are human grades: they count in agreement and in
adjudication like the grades given here. A machine's grades count in adjudication only when
the campaign says so (Campaign.machine_grades_adjudicate), and a publication fills pairs no
human graded with them only when it says so (Campaign.machine_grades_fill).

The machine judge runner calls exactly two functions of this module (a stable interface):

- :func:`add_external_judge` (``kind=JudgeKind.MACHINE``) once per judge configuration, to
  get the ExternalJudge its grades are stored under;
- :func:`record_machine_grade` once per graded pair: idempotent, one grade per pair per
  judge (a second call for the same pair keeps the first grade and says so).
"""

from __future__ import annotations

import datetime as dt
import re

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count

from annotation.models import Campaign, ExternalGrade, ExternalJudge, JudgeKind, Judgment, Pair
from annotation.services.agreement import mark_agreement_stale
from annotation.services.tallies import tally_pairs

MESSAGES = {
    "bad_kind": "A judge recorded here is an outside person or a machine, not {kind!r}.",
    "name_taken": "{name!r} is already a judge of this campaign ({kind}).",
    "bad_name": "A judge's name is 1 to 150 characters without control characters, got {name!r}.",
    "not_a_machine": "{judge} is not a machine judge.",
    "pair_elsewhere": "Pair {pair} is not in the campaign of {judge}.",
    "grade_not_in_scale": "Grade {grade} is not on this campaign's scale ({grades}).",
}

EXTERNAL_KINDS = (JudgeKind.OUTSIDE, JudgeKind.MACHINE)


def check_judge_name(name: str) -> str:
    """The name stripped; ValidationError unless it is 1-150 characters without control
    characters. (A judge is shown as ``kind:name``; a model name such as ``qwen2.5:7b`` may
    hold colons: the kind is what comes before the first.)"""
    name = (name or "").strip()
    if not name or len(name) > 150 or re.search(r"[\x00-\x1f\x7f]", name):
        raise ValidationError(MESSAGES["bad_name"].format(name=name))
    return name


def add_external_judge(
    *, campaign: Campaign, name: str, kind: str, description: str = "", created_by=None
) -> ExternalJudge:
    """The campaign's outside or machine judge named ``name``: created, or the existing one
    when it is of the same kind (so a runner or an import may call this every time).
    ValidationError when the name is bad or taken by a judge of the other kind."""
    if kind not in EXTERNAL_KINDS:
        raise ValidationError(MESSAGES["bad_kind"].format(kind=kind))
    name = check_judge_name(name)
    try:
        with transaction.atomic():
            judge, _ = ExternalJudge.objects.get_or_create(
                campaign=campaign,
                name=name,
                defaults={"kind": kind, "description": description, "created_by": created_by},
            )
    except IntegrityError:  # created at the same moment by another request
        judge = ExternalJudge.objects.get(campaign=campaign, name=name)
    if judge.kind != kind:
        raise ValidationError(MESSAGES["name_taken"].format(name=name, kind=judge.kind))
    return judge


def counts_in_adjudication(judge: ExternalJudge, campaign: Campaign) -> bool:
    return judge.kind == JudgeKind.OUTSIDE or campaign.machine_grades_adjudicate


def record_machine_grade(
    *,
    judge: ExternalJudge,
    pair_id: int,
    grade: int,
    note: str = "",
    seconds: float | None = None,
    judged_at: dt.datetime | None = None,
    details: dict | None = None,
) -> tuple[ExternalGrade, bool]:
    """Store a machine judge's grade of a pair: ``(grade row, True)`` when stored now,
    ``(the stored row, False)`` when the judge had already graded the pair (its first grade
    is kept whatever ``grade`` is: one grade per pair per judge; a new configuration is a new
    judge). ValidationError when the judge is not a machine, the pair is of another
    campaign, or the grade is not on the campaign's scale. Safe to call concurrently."""
    if judge.kind != JudgeKind.MACHINE:
        raise ValidationError(MESSAGES["not_a_machine"].format(judge=judge.label))
    campaign = Campaign.objects.get(pk=judge.campaign_id)
    if not Pair.objects.filter(pk=pair_id, campaign_id=campaign.pk).exists():
        raise ValidationError(MESSAGES["pair_elsewhere"].format(pair=pair_id, judge=judge.label))
    if grade not in campaign.grades:
        raise ValidationError(
            MESSAGES["grade_not_in_scale"].format(
                grade=grade, grades=", ".join(map(str, campaign.grades))
            )
        )
    existing = ExternalGrade.objects.filter(judge=judge, pair_id=pair_id).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            row = ExternalGrade.objects.create(
                judge=judge,
                pair_id=pair_id,
                grade=grade,
                note=note,
                seconds=seconds,
                judged_at=judged_at,
                details=details or {},
            )
            if counts_in_adjudication(judge, campaign):
                tally_pairs(pair_ids=[pair_id], lock=True)
            mark_agreement_stale(campaign_id=campaign.pk)
    except IntegrityError:  # the same pair recorded at the same moment by another worker
        return ExternalGrade.objects.get(judge=judge, pair_id=pair_id), False
    return row, True


# --- the roster ----------------------------------------------------------------------------


def judge_roster(*, campaign: Campaign) -> list[dict]:
    """Every judge of the campaign, of the three kinds, with how many pairs each graded:
    people judging here (by username), then outside people, then machines (kind:name).
    Three queries."""
    here = {
        username: 0
        for username in campaign.judges.order_by("username").values_list("username", flat=True)
    }
    graded = (
        Judgment.objects.filter(assignment__pair__campaign=campaign, grade__isnull=False)
        .values_list("assignment__judge__username")
        .annotate(n=Count("pk"))
    )
    for username, n in graded:
        here[username] = n
    rows = [
        {"kind": JudgeKind.HERE, "label": username, "name": username, "grades": n, "judge": None}
        for username, n in sorted(here.items())
    ]
    for judge in (
        ExternalJudge.objects.filter(campaign=campaign)
        .annotate(n=Count("grades"))
        .order_by("kind", "name")
    ):
        rows.append(
            {
                "kind": judge.kind,
                "label": judge.label,
                "name": judge.name,
                "grades": judge.n,
                "judge": judge,
            }
        )
    order = {JudgeKind.HERE: 0, JudgeKind.OUTSIDE: 1, JudgeKind.MACHINE: 2}
    return sorted(rows, key=lambda row: order[row["kind"]])
