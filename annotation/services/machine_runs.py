"""Running a machine judge (configured in annotation/services/machine_judges.py) over a
campaign's pool.

``run_machine_judge`` (called by the background job in annotation/tasks.py and by
``manage.py run_machine_judge``) asks for every pair of the chosen scope that the judge has
not graded yet, ``concurrency`` requests at a time, records each answer as it comes, updates
the job's progress bar, and stops starting new requests when the run is cancelled. So it is
resumable (a new run, or the job tried again after a crash, does only what is left and asks
again for the failures) and idempotent (a pair's first grade by a judge is kept).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.background import MACHINE_JUDGE, background
from annotation.llm import (
    AnswerError,
    ChatClient,
    CompletionError,
    cost_of,
    map_bounded,
    parse_grade,
)
from annotation.models import (
    Campaign,
    MachineAnswer,
    MachineJudge,
    MachineOutcome,
    MachineRun,
    MachineScope,
    Pair,
    Topic,
)
from annotation.services import agreement, external
from annotation.services.machine_judges import (
    MESSAGES,
    endpoint_for,
    pair_messages,
    pairs_to_grade,
    template_of,
)
from jobs.models import JobStatus
from jobs.services import cancellation, start_job

BATCH = 200  # pairs read from the database at a time
# Answers are stored (with the run's figures and the progress bar) in one transaction per
# FLUSH_SECONDS or FLUSH_SIZE answers, whichever comes first; the first answer at once.
FLUSH_SECONDS = 0.5
FLUSH_SIZE = 50
CANCEL_CHECK_SECONDS = 0.5
# Stop a run early when this many answers in a row failed at the endpoint (not a bad answer):
# a refused key or a server that is down would otherwise fail every pair, slowly.
GIVE_UP_AFTER = 10


# --- starting, cancelling ------------------------------------------------------------------

# What cancel_run did (jobs.services.cancellation's).
CANCEL_ENDED, CANCEL_ASKED, CANCEL_LATE = (
    cancellation.CANCEL_ENDED,
    cancellation.CANCEL_ASKED,
    cancellation.CANCEL_LATE,
)


def active_run(machine: MachineJudge) -> MachineRun | None:
    """The run of this judge whose job is queued or running (and not stalled), if any."""
    for run in machine.runs.filter(
        job__status__in=[JobStatus.QUEUED, JobStatus.RUNNING]
    ).select_related("job"):
        if not run.job.stalled:
            return run
    return None


def prepare_run(
    *, machine: MachineJudge, scope: str, topic: Topic | None = None, user=None
) -> MachineRun:
    """A new run (not started): refused when the scope needs a topic it lacks or the judge
    is running already."""
    if scope not in MachineScope.values:
        raise ValidationError(f"Unknown scope {scope!r} (choose {', '.join(MachineScope.values)}).")
    if scope == MachineScope.TOPIC:
        if topic is None:
            raise ValidationError(MESSAGES["topic_needed"])
        if topic.campaign_id != machine.judge.campaign_id:
            raise ValidationError(MESSAGES["topic_elsewhere"].format(qid=topic.qid))
    else:
        topic = None
    busy = active_run(machine)
    if busy is not None:
        raise ValidationError(MESSAGES["busy"].format(job=busy.job_id))
    pairs = pairs_to_grade(machine=machine, scope=scope, topic=topic).count()
    return MachineRun.objects.create(
        machine=machine, scope=scope, topic=topic, pairs=pairs, started_by=user
    )


def cancel_run(*, run: MachineRun) -> str:
    """Stop a run that has not finished (jobs.services.cancellation.cancel_work). A run
    whose job no worker has started ends cancelled now, with no pair asked, its job cancelled
    saying so (a queued job may wait for a worker a long time, or forever, and the run would
    show "asked to stop" until then; the job, if a worker takes it later, finds the run
    cancelled and does nothing: annotation.tasks.machine_judge_job). A running one, or one
    run in a process of its own (``manage.py run_machine_judge``: no job), is asked to stop
    starting requests; the answers in flight are still recorded. Returns CANCEL_ENDED,
    CANCEL_ASKED or CANCEL_LATE (it had finished, or was asked already)."""
    return cancellation.cancel_work(model=MachineRun, pk=run.pk, step=MESSAGES["cancel_ended"])


def end_interrupted_run(*, run: MachineRun) -> None:
    """End a run whose own process was interrupted (Ctrl-C on ``manage.py
    run_machine_judge``, which has no job): nothing will ever read a request to stop, so it
    ends cancelled now; the answers it recorded are kept, and running again resumes."""
    MachineRun.objects.filter(pk=run.pk, cancel_requested_at__isnull=True).update(
        cancel_requested_at=timezone.now()
    )
    run.cancelled = True
    _finish(run)


# --- running -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    pair_id: int
    messages: list[dict] | None  # None: the document has no text


@dataclass(frozen=True)
class Answer:
    pair_id: int
    grade: int | None
    failure: str = ""
    reason: str = ""
    raw: str = ""
    model: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float | None = None
    attempts: int = 0


class GaveUp(Exception):
    pass


class Cancelled(Exception):
    pass


def _items(machine: MachineJudge, pair_ids: list[int], scale: list[dict]) -> Iterator[Item]:
    template = template_of(machine)
    for start in range(0, len(pair_ids), BATCH):
        chunk = pair_ids[start : start + BATCH]
        pairs = Pair.objects.filter(pk__in=chunk).select_related("topic", "document")
        by_id = {pair.pk: pair for pair in pairs}
        for pair_id in chunk:
            pair = by_id.get(pair_id)
            if pair is None:  # removed from the pool meanwhile
                continue
            document = pair.document
            if not document.has_text:
                yield Item(pair_id, None)
                continue
            yield Item(pair_id, pair_messages(pair, template, scale, machine.max_passage_chars))


def ask_judge(client: ChatClient, machine: MachineJudge, grades: list[int], item: Item) -> Answer:
    """One pair's answer, or its failure: never raises for the endpoint or the answer."""
    if item.messages is None:
        return Answer(item.pair_id, None, failure="no_text", reason=MESSAGES["no_text"])
    started = time.monotonic()
    try:
        completion = client.complete(
            item.messages, temperature=machine.temperature, max_tokens=machine.max_tokens
        )
    except CompletionError as error:
        return Answer(
            item.pair_id,
            None,
            failure=error.kind,
            reason=str(error),
            raw=error.raw,
            attempts=error.attempts,
            seconds=time.monotonic() - started,  # a failed run's time is counted too
        )
    answer = {
        "raw": completion.text,
        "model": completion.model,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "seconds": completion.seconds,
        "attempts": completion.attempts,
    }
    try:
        grade = parse_grade(completion.text, grades)
    except AnswerError as error:
        return Answer(item.pair_id, None, failure="not_a_grade", reason=error.reason, **answer)
    return Answer(item.pair_id, grade, **answer)


def run_machine_judge(*, run: MachineRun, progress=None, client: ChatClient | None = None) -> str:
    """Grade the run's pairs; returns the summary. Raises Cancelled (with the summary) when
    cancelled, GaveUp when the endpoint failed GIVE_UP_AFTER times in a row, and
    ValidationError when the configuration cannot be used (the key's variable is unset)."""
    machine = MachineJudge.objects.select_related("judge__campaign").get(pk=run.machine_id)
    campaign = machine.judge.campaign
    grades = campaign.grades
    endpoint = endpoint_for(machine)
    client = client or ChatClient(endpoint)
    topic = Topic.objects.filter(pk=run.topic_id).first() if run.topic_id else None
    if run.scope == MachineScope.TOPIC and topic is None:
        raise ValidationError(MESSAGES["topic_needed"])
    pair_ids = list(
        pairs_to_grade(machine=machine, scope=run.scope, topic=topic)
        .order_by("topic__qid", "document__docno")
        .values_list("pk", flat=True)
    )
    # A run tried again after a crash keeps what it graded and asks again for the rest.
    run.pairs = run.graded + len(pair_ids)
    run.failed = 0
    run.save(update_fields=["pairs", "failed"])
    state = _RunState(run, machine, progress)
    state.flush()
    if not pair_ids and run.graded == 0:
        return MESSAGES["nothing"].format(judge=machine.judge.label)

    def ask(item: Item) -> Answer:
        return ask_judge(client, machine, grades, item)

    try:
        for _item, answer in map_bounded(
            ask,
            _items(machine, pair_ids, campaign.scale),
            concurrency=machine.concurrency,
            stop=state.stopping,
        ):
            if isinstance(answer, BaseException):
                raise answer
            state.record(answer)
    finally:
        client.close()
        state.flush()  # what was paid for is kept, also on a crash
    if state.gave_up:
        _finish(run)
        late = state.after_giving_up
        raise GaveUp(
            MESSAGES["gave_up"].format(n=GIVE_UP_AFTER, last=state.last_failure)
            + (
                MESSAGES["gave_up_in_flight"].format(
                    n=sum(late.values()), failed=late["failed"], graded=late["graded"]
                )
                if any(late.values())
                else ""
            )
        )
    if state.cancelled:
        run.cancelled = True
        _finish(run)
        raise Cancelled(
            MESSAGES["cancelled"].format(done=run.graded + run.failed, total=run.pairs)
            + " "
            + summary(run)
        )
    _finish(run)
    return summary(run)


def _finish(run: MachineRun) -> None:
    run.finished_at = timezone.now()
    run.save(update_fields=["finished_at", "cancelled"])
    # The machine whose grade judges see as a suggestion: its new answers change the
    # post-editing report, stored with the campaign's agreement numbers.
    for campaign_id in Campaign.objects.filter(suggestions_from_id=run.machine_id).values_list(
        "pk", flat=True
    ):
        agreement.mark_agreement_stale(campaign_id=campaign_id)


def summary(run: MachineRun) -> str:
    already = run.pairs - run.graded - run.failed
    tokens = run.prompt_tokens + run.completion_tokens
    return MESSAGES["summary"].format(
        graded=run.graded,
        s="" if run.graded == 1 else "s",
        failed=run.failed,
        already=f", {already:,} left" if already > 0 else "",
        tokens=f", {tokens:,} tokens" if tokens else "",
        cost=f", cost {run.cost:.4f}" if run.cost is not None else "",
    )


class _RunState:
    """The figures of a run as answers come. Answers are stored in batches, one transaction
    per FLUSH_SECONDS or FLUSH_SIZE answers (a commit per answer made the database, not the
    endpoint, the limit); the run's figures and the job's progress are written with each
    batch, and the cancel flag is read every CANCEL_CHECK_SECONDS."""

    def __init__(self, run: MachineRun, machine: MachineJudge, progress):
        self.run = run
        self.machine = machine
        self.progress = progress
        self.cost_known = machine.input_price is not None and machine.output_price is not None
        if self.cost_known and run.cost is None:
            run.cost = 0.0
        self.pending: list[tuple[Answer, float | None]] = []
        self.flushed_at = 0.0
        self.checked_at = 0.0
        self.cancelled = False
        self.gave_up = False
        self.failures_in_a_row = 0
        self.last_failure = ""
        # Answers to requests already started when the run gave up: recorded (they were
        # paid for) and counted apart, so the figures add up to GIVE_UP_AFTER plus these.
        # map_bounded starts the next requests before it hands over an answer, so up to
        # twice the concurrency may still come.
        self.after_giving_up = {"failed": 0, "graded": 0}

    def stopping(self) -> bool:
        if self.cancelled or self.gave_up:
            return True
        now = time.monotonic()
        if now - self.checked_at >= CANCEL_CHECK_SECONDS:
            self.checked_at = now
            self.cancelled = MachineRun.objects.filter(
                pk=self.run.pk, cancel_requested_at__isnull=False
            ).exists()
        return self.cancelled

    def record(self, answer: Answer) -> None:
        cost = None
        if self.cost_known:
            cost = cost_of(
                answer.prompt_tokens,
                answer.completion_tokens,
                input_price=self.machine.input_price,
                output_price=self.machine.output_price,
            )
            if cost is None and answer.prompt_tokens is not None:
                self.cost_known = False  # a count is missing: the sum is unknown
        if self.gave_up:
            self.after_giving_up["graded" if answer.grade is not None else "failed"] += 1
        elif answer.grade is not None or answer.failure in ("not_a_grade", "no_text"):
            self.failures_in_a_row = 0
        else:
            self.failures_in_a_row += 1
            self.last_failure = answer.reason
            if self.failures_in_a_row >= GIVE_UP_AFTER:
                self.gave_up = True
        self.pending.append((answer, cost))
        now = time.monotonic()
        if len(self.pending) >= FLUSH_SIZE or now - self.flushed_at >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        self.flushed_at = time.monotonic()
        run = self.run
        with transaction.atomic():
            for answer, cost in self.pending:
                stored = _store(self.machine, run, answer, cost)
                run.prompt_tokens += answer.prompt_tokens or 0
                run.completion_tokens += answer.completion_tokens or 0
                run.seconds += answer.seconds or 0
                if self.cost_known and cost is not None:
                    run.cost = (run.cost or 0) + cost
                elif not self.cost_known:
                    run.cost = None
                if answer.grade is None:
                    run.failed += 1
                elif stored:
                    run.graded += 1
                else:  # graded by another run meanwhile: done, but not by this run
                    run.pairs -= 1
            self.pending = []
            run.save(
                update_fields=[
                    "pairs",
                    "graded",
                    "failed",
                    "prompt_tokens",
                    "completion_tokens",
                    "cost",
                    "seconds",
                ]
            )
        if self.progress is not None:
            self.progress.step(
                f"{run.graded:,} graded, {run.failed:,} failed of {run.pairs:,} pairs",
                done=run.graded + run.failed,
                total=max(run.pairs, 1),
            )


def _store(machine: MachineJudge, run: MachineRun, answer: Answer, cost: float | None) -> bool:
    """Record one answer: the grade (through record_machine_grade) and its MachineAnswer.
    False when the pair had a grade by this judge already (kept, with its answer)."""
    fields = {
        "run": run,
        "raw": answer.raw,
        "model": answer.model[:200],
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "cost": cost,
        "seconds": answer.seconds,
        "attempts": min(answer.attempts, 32767),
        "failure": answer.failure,
        "reason": answer.reason,
    }
    with transaction.atomic():
        if answer.grade is not None:
            row, created = external.record_machine_grade(
                judge=machine.judge,
                pair_id=answer.pair_id,
                grade=answer.grade,
                seconds=answer.seconds,
                judged_at=timezone.now(),
                details={
                    "machine": machine.pk,
                    "run": run.pk,
                    "template": template_of(machine).label,
                },
            )
            if not created:
                return False
            fields.update(outcome=MachineOutcome.GRADED, grade=answer.grade, recorded=row)
        else:
            fields.update(outcome=MachineOutcome.FAILED, grade=None, recorded=None)
        updated = MachineAnswer.objects.filter(machine=machine, pair_id=answer.pair_id).update(
            tries=F("tries") + 1, **fields
        )
        if not updated:
            MachineAnswer.objects.create(machine=machine, pair_id=answer.pair_id, **fields)
    return True


def start_runner(*, machine: MachineJudge, scope: str, topic: Topic | None = None, user=None):
    """Prepare a run and start its background job; returns the job (the page to watch)."""
    with transaction.atomic():
        run = prepare_run(machine=machine, scope=scope, topic=topic, user=user)
        where = {
            MachineScope.POOL: "the pool",
            MachineScope.TOPIC: f"topic {topic.qid}" if topic else "",
            MachineScope.UNJUDGED: "the pairs no human graded",
        }[scope]
        job = start_job(
            kind="annotation.machine_judge",
            title=f"{machine.judge.label} grades {where} of {machine.judge.campaign.name}",
            user=user,
            task=background(MACHINE_JUDGE),
            total=max(run.pairs, 1),
            run_id=run.pk,
        )
        run.job = job
        run.save(update_fields=["job"])
    return job
