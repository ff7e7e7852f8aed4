"""The clock's side of schedules (issue 31, item 5): a tick fires the schedules whose slot has
come, once each however many slots a downtime swallowed; a firing asks the endpoint its query
set (evaluation/services/endpoint_runs.py: a run, stored once), scores the run against the
schedule's qrels (the leaderboard's scoring, with its bootstrap intervals) and compares the
watched measure with the previous firing's (evaluation/schedules/drops.py); a drop raises an
alert, sent to the webhook (signed, through the outbound policy, tried again with backoff)
and by e-mail (Django's mail settings), each delivery's outcome kept for the schedule's page.

A firing that fails as a whole (no answer from the endpoint, every query failed, the run
could not be scored, two attempts lost) raises a failure alert, once for a run of
consecutive failures (evaluation/services/alerts.py).

A firing is a job (evaluation.tasks.schedule_firing_task). Its worker lost (found by a later
tick: killed mid-way, the job's heartbeat stopped; or killed after taking the job from the
queue and before starting it), or the job crashed, it is started again once and the firing
says what happened (``recovery``); the run its first attempt stored is found by the job's id
(SearchRun.job_id) and never stored twice, and an alert is made once per firing."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from evaluation import measures
from evaluation.background import SCHEDULE_FIRING, background
from evaluation.models import (
    FiringStatus,
    Schedule,
    ScheduleAlert,
    ScheduleFiring,
    SearchRun,
)
from evaluation.schedules import cron
from evaluation.services import alerts, endpoint_runs
from evaluation.services.common import ImportRejected
from evaluation.services.schedules import zone
from evaluation.services.scoring import score_run
from jobs.faults import pause_point
from jobs.models import STALE_AFTER_SECONDS, Job, JobStatus
from jobs.services import MESSAGES as JOB_MESSAGES
from jobs.services import JobNotRetryable, fail_lost_jobs, retry_job, start_job

logger = logging.getLogger(__name__)

JOB_KIND = "evaluation.schedule_firing"

MESSAGES = {
    "title": "Scheduled run of {name}",
    "done": "{summary} {measure} {mean:.4f} (95% interval {low:.4f}–{high:.4f}).",
    "not_scored": "The run was stored but could not be scored against {qrels}: {why}",
    "no_measure": "the evaluation has no {measure}",
    "gave_up": "Tried twice, and the second attempt did not finish either ({why}); it is not "
    "tried again.",
    "recovered": "{when:%Y-%m-%d %H:%M %Z}: attempt {attempt} did not finish ({why}); started "
    "again as attempt {next}.",
    "lost_running": "its worker stopped while running it",
    "lost_before_start": "the worker that took it from the queue stopped before starting it",
    "crashed": "it failed unexpectedly; the error was logged",
    "bad_cron": "Paused: the stored cron expression no longer reads ({why}).",
}


class FiringFailed(Exception):
    """A firing that could not make or score its run: the message says why (shown as is)."""


# --- the tick --------------------------------------------------------------------------------


@dataclass
class Tick:
    fired: list[ScheduleFiring] = field(default_factory=list)
    retried: list[ScheduleFiring] = field(default_factory=list)
    given_up: list[ScheduleFiring] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"fired {len(self.fired)}, started again {len(self.retried)}, "
            f"given up {len(self.given_up)}"
        )


def tick(*, now=None) -> Tick:
    """Fire every schedule whose slot has come (one firing each: the latest slot, however
    many were missed) and start again, once, the firings whose worker died. Safe from several
    processes at once: a schedule's slot is claimed by moving ``next_run_at`` on from the
    value read (compare and swap), and a slot has one firing row at most."""
    now = now or timezone.now()
    report = Tick()
    due = Schedule.objects.filter(paused=False, next_run_at__lte=now).select_related("created_by")
    for schedule in due.order_by("next_run_at", "pk"):
        firing = _fire(schedule, now)
        if firing is not None:
            report.fired.append(firing)
    recover_firings(now=now, report=report)
    return report


def _fire(schedule: Schedule, now) -> ScheduleFiring | None:
    try:
        slot = cron.due(schedule.cron, schedule.next_run_at, now, zone=zone())
    except cron.CronError as error:
        Schedule.objects.filter(pk=schedule.pk).update(paused=True)
        logger.warning("schedule %s: %s", schedule.pk, MESSAGES["bad_cron"].format(why=error))
        return None
    if slot is None:
        return None
    with transaction.atomic():
        won = Schedule.objects.filter(
            pk=schedule.pk, paused=False, next_run_at=schedule.next_run_at
        ).update(next_run_at=slot.next_slot)
        if not won:  # another clock took this slot
            return None
        try:
            with transaction.atomic():
                firing = ScheduleFiring.objects.create(
                    schedule=schedule, slot=slot.slot, missed=slot.missed, fired_at=now
                )
        except IntegrityError:  # that slot fired already
            return None
        job = start_job(
            kind=JOB_KIND,
            title=MESSAGES["title"].format(name=schedule.name),
            user=schedule.created_by,
            task=background(SCHEDULE_FIRING),
            firing=firing.pk,
        )
        firing.job_id = job.pk
        firing.save(update_fields=["job_id"])
    return firing


def recover_firings(*, now, report: Tick | None = None) -> Tick:
    """Firings whose job's worker was lost before ``now`` by more than
    JOB_STALE_AFTER_SECONDS (running with a silent heartbeat, or taken from the database
    queue and never started) or whose job crashed: started again if this was their first
    attempt, with a note of what happened on the firing, else failed (a firing is tried
    twice at most), which raises its failure alert."""
    report = report or Tick()
    waiting = list(
        ScheduleFiring.objects.filter(status=FiringStatus.QUEUED, job_id__isnull=False)
        .select_related("schedule")
        .order_by("slot")
    )
    if not waiting:
        return report
    fail_lost_jobs(
        cutoff=now - timedelta(seconds=STALE_AFTER_SECONDS),
        among=[firing.job_id for firing in waiting],
    )
    jobs = Job.objects.in_bulk([firing.job_id for firing in waiting])
    for firing in waiting:
        job = jobs.get(firing.job_id)
        if job is None or not (job.status == JobStatus.FAILED and job.retryable):
            continue
        why = _why_lost(job)
        if job.attempt >= 2:
            Job.objects.filter(pk=job.pk).update(retryable=False)
            _fail_and_tell(firing, MESSAGES["gave_up"].format(why=why))
            report.given_up.append(firing)
            continue
        try:
            retry_job(job=job)
        except JobNotRetryable as refused:
            _fail_and_tell(firing, str(refused))
            report.given_up.append(firing)
        else:
            note = MESSAGES["recovered"].format(
                when=timezone.localtime(now, zone()),
                attempt=job.attempt,
                next=job.attempt + 1,
                why=why,
            )
            firing.recovery = f"{firing.recovery} {note}".strip()[:1000]
            firing.save(update_fields=["recovery"])
            report.retried.append(firing)
    return report


def _why_lost(job: Job) -> str:
    return {
        JOB_MESSAGES["worker_lost"]: MESSAGES["lost_running"],
        JOB_MESSAGES["worker_lost_before_start"]: MESSAGES["lost_before_start"],
    }.get(job.step, MESSAGES["crashed"])


def _fail_and_tell(firing: ScheduleFiring, message: str, **fields) -> None:
    """Mark ``firing`` failed, raise its failure alert (or count it on the open one) and
    send what that alert has pending."""
    with transaction.atomic():
        _finish_firing(firing, FiringStatus.FAILED, message, **fields)
        alert = alerts.raise_failure_alert(firing)
    if alert is not None:
        alerts.notify(alert)


def _finish_firing(firing: ScheduleFiring, status: str, message: str, **fields) -> None:
    firing.status = status
    firing.message = message[:1000]
    firing.finished_at = timezone.now()
    for name, value in fields.items():
        setattr(firing, name, value)
    firing.save(update_fields=["status", "message", "finished_at", *fields])


# --- one firing ------------------------------------------------------------------------------


def run_name(schedule: Schedule, slot) -> str:
    return f"{slugify(schedule.name)[:60] or 'schedule'}-{slot:%Y%m%d-%H%M}"


def perform_firing(*, firing_id: int, job: Job, on_step=lambda text: None) -> ScheduleFiring:
    """Make the firing's run (or find the one this job stored before its worker died), score
    it, compare it with the previous firing, and raise and send an alert on a drop.
    FiringFailed (the firing marked failed) when no run or no score could be had."""
    firing = ScheduleFiring.objects.select_related(
        "schedule__endpoint", "schedule__qrels", "schedule__created_by"
    ).get(pk=firing_id)
    schedule = firing.schedule
    made = SearchRun.objects.filter(job_id=job.pk).select_related("run").first()
    if made is None:
        on_step(f"Asking {schedule.endpoint.name}")
        try:
            made = endpoint_runs.make_search_run(
                endpoint=schedule.endpoint,
                user=schedule.created_by,
                k=schedule.k,
                campaign=schedule.campaign,
                qrels=schedule.topics_qrels_id,
                system=schedule.name,
                name=run_name(schedule, firing.slot),
                job_id=job.pk,
            )
        except ValidationError as error:
            _fail(firing, " ".join(error.messages))
        except ImportRejected as rejected:
            _fail(firing, str(rejected))
    pause_point("schedule_firing.stored")
    run = made.run
    on_step(f"Scoring {run} against {schedule.qrels.label}")
    watched = schedule.alert_measure
    try:
        evaluation = score_run(run=run, qrels=schedule.qrels, measure_specs=schedule.measures)
        if watched not in evaluation.means:
            raise ValueError(MESSAGES["no_measure"].format(measure=watched))
    except ValueError as error:
        _fail_and_tell(
            firing, MESSAGES["not_scored"].format(qrels=schedule.qrels.label, why=error), run=run
        )
        raise FiringFailed(firing.message) from None
    mean = float(evaluation.means[watched])
    low, high = evaluation.intervals.get(watched, (mean, mean))
    summary = MESSAGES["done"].format(
        summary=endpoint_runs.summary(made),
        measure=measures.display_name(watched),
        mean=mean,
        low=low,
        high=high,
    )
    with transaction.atomic():
        _finish_firing(
            firing,
            FiringStatus.SUCCEEDED,
            summary,
            run=run,
            evaluation=evaluation,
            mean=mean,
            low=low,
            high=high,
            failed_queries=made.failed_count,
            measure=watched,
            qrels=schedule.qrels,
        )
        alert = alerts.raise_alert(firing)
    if alert is not None:
        on_step("Sending the alert")
        alerts.notify(alert)
    return firing


def _fail(firing: ScheduleFiring, message: str):
    _fail_and_tell(firing, message)
    raise FiringFailed(message)


def history(schedule: Schedule, *, limit: int = 200) -> dict:
    """The history chart's data: each successful firing's slot, mean and interval of the
    watched measure, oldest first, and which of them raised an alert. Only the firings
    scored as the schedule now is (its measure and qrels: an edit starts a new line)."""
    firings = list(
        ScheduleFiring.objects.filter(
            schedule=schedule,
            status=FiringStatus.SUCCEEDED,
            mean__isnull=False,
            measure=schedule.alert_measure,
            qrels_id=schedule.qrels_id,
        )
        .order_by("-slot")
        .values("pk", "slot", "mean", "low", "high")[:limit]
    )[::-1]
    alerted = set(
        ScheduleAlert.objects.filter(schedule=schedule).values_list("firing_id", flat=True)
    )
    return {
        "measure": measures.display_name(schedule.alert_measure),
        "times": [int(f["slot"].timestamp()) for f in firings],
        "labels": [timezone.localtime(f["slot"]).strftime("%Y-%m-%d %H:%M") for f in firings],
        "mean": [f["mean"] for f in firings],
        "low": [f["low"] for f in firings],
        "high": [f["high"] for f in firings],
        "alert": [f["pk"] in alerted for f in firings],
    }
