"""Each judge's tally in a campaign (JudgeTally: open, graded, skipped), kept up to date in
the transaction of every change to the judge's assignments: a grade, a skip or an undo
shifts one count of one row (:func:`judge_tally_shift`); the services that assign, remove or
move work in bulk recount their campaign's judges (:func:`tally_judges`, one aggregate
query). The pairs' and topics' tallies are annotation/services/tallies.py's."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection
from django.db.models import Count, Q

from annotation.models import Assignment, AssignmentStatus, JudgeTally
from common.compiled import Write

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


def judge_tally_shift(*, campaign_id: int, judge_id: int, old: str, new: str) -> Write:
    """One of the judge's assignments goes from status ``old`` to ``new``: the UPDATE that
    moves one count of their row, for the caller to send with its other writes
    (common.compiled.send_together). If it writes no row (a row missing, from before the
    tallies), call :func:`tally_judges` for the judge."""
    quote = connection.ops.quote_name
    before, after = (quote(STATUS_FIELD[s]) for s in (old, new))
    # Written out, not compiled from the ORM's F() expressions on every grade.
    return Write(
        f"UPDATE {quote(JudgeTally._meta.db_table)} SET {before} = {before} - 1, "
        f"{after} = {after} + 1 WHERE {quote('campaign_id')} = %s AND {quote('judge_id')} = %s",
        [campaign_id, judge_id],
    )
