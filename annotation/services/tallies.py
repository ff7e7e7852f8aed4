"""Each pair's tally of its judges (Pair.judges_assigned … grades_tied), kept up to date in
the transaction of every change to the pair's assignments or judgments, so the lead's pages
filter, count and order pairs in the database (annotation/services/adjudication.py).

Every service that creates, deletes or changes assignments or judgments calls
:func:`tally_pairs` with the pairs it touched (judging: the one pair, under a lock on its
row; assigning, removing a judge, restoring a backup: many at once). Code that writes the
tables directly (tests, a repair) calls it too; ``tally_pairs(campaign=…)`` recounts every
pair of a campaign.

The grades of outside people (imported) count as a judge's who has graded the pair; so do a
machine judge's when its campaign lets machine grades count in adjudication
(Campaign.machine_grades_adjudicate; changing it recounts the campaign).

Each judge's tally in a campaign (JudgeTally: open, graded, skipped) is kept the same way:
a grade, a skip or an undo shifts one count of one row (:func:`shift_judge_tally`); the
services that assign, remove or move work in bulk recount their campaign's judges
(:func:`tally_judges`, one aggregate query).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from django.db.models import Count, F, Q

from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    ExternalGrade,
    JudgeKind,
    JudgeTally,
    Pair,
)

FIELDS = (
    "judges_assigned",
    "judges_open",
    "judges_graded",
    "lowest_grade",
    "highest_grade",
    "grades_tied",
)
# Pairs read, and updated per statement, at a time: within every database's parameter limit.
CHUNK = 5000


def tally_of(judgments: Iterable[tuple[str, int | None]]) -> tuple:
    """The tally (in FIELDS order) of a pair's (assignment status, grade or None) rows."""
    rows = list(judgments)
    grades = [grade for status, grade in rows if status == AssignmentStatus.DONE]
    grades = [g for g in grades if g is not None]
    counts = sorted(Counter(grades).values(), reverse=True)
    return (
        len(rows),
        sum(1 for status, _ in rows if status == AssignmentStatus.OPEN),
        len(grades),
        min(grades) if grades else None,
        max(grades) if grades else None,
        len(counts) > 1 and counts[0] == counts[1],
    )


def adjudicating_grades() -> Q:
    """The external grades that count in adjudication: every outside person's, and a
    machine's where its campaign says so."""
    return Q(judge__kind=JudgeKind.OUTSIDE) | Q(
        judge__kind=JudgeKind.MACHINE, pair__campaign__machine_grades_adjudicate=True
    )


def tally_pairs(
    *, pair_ids: Iterable[int] | None = None, campaign: Campaign | None = None, lock=False
) -> int:
    """Recount the tallies of ``pair_ids`` (or of every pair of ``campaign``) from their
    assignments and judgments; ``lock``: lock the pairs' rows first (so two judges grading
    one pair at once count each other's grade). Returns how many pairs were counted."""
    if pair_ids is None:
        pair_ids = Pair.objects.filter(campaign=campaign).values_list("pk", flat=True)
    ids = sorted(set(pair_ids))
    groups: dict[tuple, list[int]] = defaultdict(list)
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        if lock:
            list(Pair.objects.select_for_update().filter(pk__in=chunk).values_list("pk"))
        rows: dict[int, list] = {pk: [] for pk in chunk}
        for pair_id, status, grade in Assignment.objects.filter(pair_id__in=chunk).values_list(
            "pair_id", "status", "judgment__grade"
        ):
            rows[pair_id].append((status, grade))
        for pair_id, grade in ExternalGrade.objects.filter(
            adjudicating_grades(), pair_id__in=chunk
        ).values_list("pair_id", "grade"):
            rows[pair_id].append((AssignmentStatus.DONE, grade))
        for pk, judgments in rows.items():
            groups[tally_of(judgments)].append(pk)
    # One UPDATE per distinct tally (a few dozen in a campaign), not one per pair.
    for tally, pks in groups.items():
        values = dict(zip(FIELDS, tally, strict=True))
        for start in range(0, len(pks), CHUNK):
            Pair.objects.filter(pk__in=pks[start : start + CHUNK]).update(**values)
    return len(ids)


# JudgeTally's count of each assignment status.
STATUS_FIELD = {
    AssignmentStatus.OPEN: "open",
    AssignmentStatus.DONE: "graded",
    AssignmentStatus.SKIPPED: "skipped",
}


def tally_judges(*, campaign_id: int, judge_ids: Iterable[int] | None = None) -> None:
    """Recount the JudgeTally of ``judge_ids`` (default: every judge holding work in the
    campaign) from their assignments; a judge left without any loses the row. The rows
    are locked first, so a grade committing meanwhile is either counted here or shifts the
    count after it (never lost)."""
    holders = Assignment.objects.filter(pair__campaign_id=campaign_id)
    rows = JudgeTally.objects.filter(campaign_id=campaign_id)
    if judge_ids is not None:
        judge_ids = list(judge_ids)
        holders = holders.filter(judge_id__in=judge_ids)
        rows = rows.filter(judge_id__in=judge_ids)
    list(rows.select_for_update().values_list("pk"))
    counts = {
        row.pop("judge_id"): row
        for row in holders.order_by()
        .values("judge_id")
        .annotate(
            **{
                field: Count("pk", filter=Q(status=status))
                for status, field in STATUS_FIELD.items()
            }
        )
    }
    rows.exclude(judge_id__in=list(counts)).delete()
    JudgeTally.objects.bulk_create(
        [
            JudgeTally(campaign_id=campaign_id, judge_id=judge_id, **figures)
            for judge_id, figures in counts.items()
        ],
        update_conflicts=True,
        unique_fields=["campaign", "judge"],
        update_fields=list(STATUS_FIELD.values()),
    )


def shift_judge_tally(*, campaign_id: int, judge_id: int, old: str, new: str) -> None:
    """One of the judge's assignments went from status ``old`` to ``new``: move one count
    (one UPDATE of one row; a row missing, from before the tallies, is counted afresh)."""
    if old == new:
        return
    before, after = STATUS_FIELD[old], STATUS_FIELD[new]
    shifted = JudgeTally.objects.filter(campaign_id=campaign_id, judge_id=judge_id).update(
        **{before: F(before) - 1, after: F(after) + 1}
    )
    if not shifted:
        tally_judges(campaign_id=campaign_id, judge_ids=[judge_id])
