"""The progress leads read: each judge's done and assigned judgments with their median
seconds, and each topic's, from the tallies the judge's operations keep (services/judging.py,
services/judge_tallies.py, services/tallies.py)."""

from __future__ import annotations

import datetime as dt
import statistics
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Min
from django.utils import timezone

from annotation.models import AgreementRefresh, Campaign, JudgeTally, Judgment, TopicTally
from annotation.services.agreement import tasks_inline
from annotation.services.common import SUSPICIOUSLY_FAST_SECONDS


@dataclass(frozen=True)
class JudgeProgress:
    judge_id: int
    username: str
    done: int
    total: int
    median_seconds: float | None
    too_fast: bool


def judge_medians(*, campaign: Campaign) -> dict[int, float]:
    """The median active seconds of each judge's graded judgments (reads them all)."""
    seconds: dict[int, list[float]] = defaultdict(list)
    for judge_id, value in Judgment.objects.filter(
        assignment__pair__campaign=campaign, grade__isnull=False
    ).values_list("assignment__judge_id", "seconds"):
        seconds[judge_id].append(value)
    return {judge_id: statistics.median(values) for judge_id, values in seconds.items()}


def store_judge_medians(*, campaign: Campaign) -> dict[int, float]:
    """Recompute every judge's median seconds and store them in their JudgeTally (the
    background refresh does, before the agreement numbers); returns them by judge id."""
    now = timezone.now()
    medians = judge_medians(campaign=campaign)
    rows = list(JudgeTally.objects.filter(campaign=campaign))
    for row in rows:
        row.median_seconds, row.medians_at = medians.get(row.judge_id), now
    JudgeTally.objects.bulk_update(rows, ["median_seconds", "medians_at"])
    return medians


def judge_progress(*, campaign: Campaign) -> list[JudgeProgress]:
    """Each judge holding work in the campaign: done (graded or skipped) and assigned, from
    their JudgeTally (no assignment is read), and the median seconds of their graded
    judgments as last computed in the background (median_times says when). With inline
    tasks (no worker) the medians are computed here; before the first background
    computation they are computed here once and stored."""
    tallies = list(
        JudgeTally.objects.filter(campaign=campaign)
        .select_related("judge")
        .order_by("judge__username")
    )
    if tasks_inline():
        medians = judge_medians(campaign=campaign)
    elif not any(t.medians_at for t in tallies):
        # The first look before any background refresh: computed once, and kept.
        medians = store_judge_medians(campaign=campaign)
    else:
        medians = {t.judge_id: t.median_seconds for t in tallies}
    result = []
    for t in tallies:
        median = medians.get(t.judge_id)
        result.append(
            JudgeProgress(
                judge_id=t.judge_id,
                username=t.judge.username,
                done=t.graded + t.skipped,
                total=t.assigned,
                median_seconds=median,
                too_fast=median is not None and median < SUSPICIOUSLY_FAST_SECONDS,
            )
        )
    return [row for row in result if row.total]


def median_times(*, campaign: Campaign) -> tuple[dt.datetime | None, bool]:
    """When the medians judge_progress shows were computed (None: just now, on the page),
    and whether a recomputation is pending (a judgment changed since)."""
    if tasks_inline():
        return None, False
    at = JudgeTally.objects.filter(campaign=campaign).aggregate(at=Min("medians_at"))["at"]
    pending = AgreementRefresh.objects.filter(
        campaign=campaign, requested_at__isnull=False
    ).exists()
    return at, pending


def topic_progress(*, campaign: Campaign) -> list[dict]:
    """Done and assigned judgments per topic that has any assignment, from the topics'
    tallies (one row per topic, not per pair or assignment)."""
    rows = (
        TopicTally.objects.filter(campaign=campaign, assigned__gt=0)
        .order_by("topic_id")
        .values_list("topic_id", "topic__qid", "topic__query", "assigned", "open")
    )
    return [
        {
            "pair__topic_id": topic_id,
            "pair__topic__qid": qid,
            "pair__topic__query": query,
            "total": assigned,
            "done": assigned - open_,
        }
        for topic_id, qid, query, assigned, open_ in rows
    ]
