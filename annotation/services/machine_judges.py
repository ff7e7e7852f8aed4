"""Machine (LLM) judges: configuring one, and running it over a campaign's pool.

A machine judge is an ExternalJudge of kind machine (annotation/services/external.py) with a
MachineJudge configuration: model, endpoint, prompt template and version, parameters. Its
grades are ExternalGrade rows recorded through ``external.record_machine_grade`` (one per
pair per judge), so they never take a slot of a pair's overlap; beside each, a
MachineAnswer keeps the raw answer, tokens, cost and time, or the failure and its raw text.

A machine never sees a human grade: its prompt holds the topic, the document and the scale
(annotation/llm/prompts.py), nothing else.

Running (``run_machine_judge``, called by the background job in annotation/tasks.py and by
``manage.py run_machine_judge``) asks for every pair of the chosen scope that the judge has
not graded yet, ``concurrency`` requests at a time, records each answer as it comes, updates
the job's progress bar, and stops starting new requests when the run is cancelled. So it is
resumable (a new run, or the job tried again after a crash, does only what is left and asks
again for the failures) and idempotent (a pair's first grade by a judge is kept).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from annotation.llm import (
    DEFAULT_TEMPLATE,
    AnswerError,
    ChatClient,
    ChatEndpoint,
    CompletionError,
    Passage,
    PromptTemplate,
    TemplateError,
    check_template,
    cost_of,
    map_bounded,
    parse_grade,
    render_messages,
)
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    ExternalGrade,
    ExternalJudge,
    JudgeKind,
    MachineAnswer,
    MachineJudge,
    MachineOutcome,
    MachineRun,
    MachineScope,
    Pair,
    Topic,
)
from annotation.services import external
from jobs.models import JobStatus

BATCH = 200  # pairs read from the database at a time
# Answers are stored (with the run's figures and the progress bar) in one transaction per
# FLUSH_SECONDS or FLUSH_SIZE answers, whichever comes first; the first answer at once.
FLUSH_SECONDS = 0.5
FLUSH_SIZE = 50
CANCEL_CHECK_SECONDS = 0.5
# Stop a run early when this many answers in a row failed at the endpoint (not a bad answer):
# a refused key or a server that is down would otherwise fail every pair, slowly.
GIVE_UP_AFTER = 10

EDITABLE = (
    "base_url",
    "api_key",
    "api_key_env",
    "concurrency",
    "timeout",
    "max_retries",
    "input_price",
    "output_price",
)

MESSAGES = {
    "template": "The prompt template cannot be used: {problems}",
    "env_name": "An environment variable name is letters, digits and _, not starting with a "
    "digit (got {name!r}).",
    "env_unset": "The environment variable {name} that should hold the API key is not set "
    "on the server.",
    "exists": "A machine judge named {name!r} exists with another configuration ({what} "
    "differ{s}). Give this one another name: a new prompt or model is a new machine judge.",
    "imported": "{name!r} is the name of a judge whose grades were imported; choose another.",
    "topic_needed": "Choose the topic to run over.",
    "topic_elsewhere": "Topic {qid} is not in this campaign.",
    "busy": "This machine judge is already running (job {job}); cancel it or wait.",
    "no_text": "the document has no text yet: import its text, then run again",
    "not_a_grade": "{reason}",
    "gave_up": "Stopped after {n} failures in a row at the endpoint; the last: {last}",
    "cancelled": "Cancelled after {done:,} of {total:,} pairs: run it again to resume.",
    "summary": "{graded:,} pair{s} graded, {failed:,} failed{already}{tokens}{cost}.",
    "nothing": "Nothing to do: {judge} has graded every pair of this scope already.",
    "range": "{field} must be between {low} and {high}.",
    "builtin_changed": "{label} is the built-in prompt: a changed prompt needs its own name or "
    "version.",
}

NAME_CLEAN = re.compile(r"[:\s]+")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SAME_CONFIG = (
    "model_name",
    "model_version",
    "template_name",
    "template_version",
    "system_prompt",
    "user_prompt",
    "temperature",
    "max_tokens",
    "max_passage_chars",
)
LIMITS = {
    "temperature": (0.0, 2.0),
    "max_tokens": (1, 32768),
    "max_passage_chars": (200, 200_000),
    "concurrency": (1, 64),
    "timeout": (1.0, 600.0),
    "max_retries": (0, 10),
}


# --- configuring ---------------------------------------------------------------------------


def default_judge_name(model_name: str, template: PromptTemplate) -> str:
    """``model-template-vN``: colons (``llama3.1:8b``) and spaces become dashes, as a
    judge's name shows as ``machine:name``."""
    name = f"{model_name}-{template.name}-v{template.version}"
    return NAME_CLEAN.sub("-", name).strip("-")[:150]


def create_machine_judge(
    *,
    campaign: Campaign,
    model_name: str,
    base_url: str,
    name: str = "",
    model_version: str = "",
    api_key: str = "",
    api_key_env: str = "",
    template: PromptTemplate = DEFAULT_TEMPLATE,
    temperature: float = 0.0,
    max_tokens: int = 16,
    max_passage_chars: int = 8000,
    concurrency: int = 4,
    timeout: float = 60.0,
    max_retries: int = 4,
    input_price: float | None = None,
    output_price: float | None = None,
    created_by=None,
) -> MachineJudge:
    """A machine judge for ``campaign``. Asking again for the same name with the same model,
    prompt and parameters returns the existing one (its endpoint settings updated); the same
    name with a different configuration is refused, as its grades would be mixed."""
    try:
        check_template(template)
    except TemplateError as error:
        raise ValidationError(
            MESSAGES["template"].format(problems="; ".join(error.problems))
        ) from None
    builtin = (DEFAULT_TEMPLATE.name, DEFAULT_TEMPLATE.version)
    if (template.name, template.version) == builtin and template != DEFAULT_TEMPLATE:
        raise ValidationError(MESSAGES["builtin_changed"].format(label=DEFAULT_TEMPLATE.label))
    try:
        ChatEndpoint(base_url=base_url, model=model_name)
    except ValueError as error:
        raise ValidationError(str(error)[:1].upper() + str(error)[1:] + ".") from None
    _check_env_name(api_key_env)
    config = {
        "model_name": model_name.strip(),
        "model_version": model_version.strip(),
        "template_name": template.name,
        "template_version": template.version,
        "system_prompt": template.system,
        "user_prompt": template.user,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "max_passage_chars": max_passage_chars,
    }
    endpoint = {
        "base_url": base_url.strip(),
        "api_key": api_key,
        "api_key_env": api_key_env.strip(),
        "concurrency": concurrency,
        "timeout": timeout,
        "max_retries": max_retries,
        "input_price": input_price,
        "output_price": output_price,
    }
    _check_limits({**config, **endpoint})
    name = external.check_judge_name(name or default_judge_name(model_name, template))
    with transaction.atomic():
        existing = ExternalJudge.objects.filter(campaign=campaign, name=name).first()
        if existing is not None and existing.kind != JudgeKind.MACHINE:
            raise ValidationError(
                external.MESSAGES["name_taken"].format(name=name, kind=existing.kind)
            )
        if existing is not None:
            machine = MachineJudge.objects.filter(judge=existing).first()
            if machine is None:
                raise ValidationError(MESSAGES["imported"].format(name=name))
            different = [f for f, v in config.items() if getattr(machine, f) != v]
            if different:
                raise ValidationError(
                    MESSAGES["exists"].format(
                        name=name,
                        what=", ".join(f.replace("_", " ") for f in different),
                        s="" if len(different) > 1 else "s",
                    )
                )
            return update_machine_judge(machine=machine, **endpoint)
        judge = external.add_external_judge(
            campaign=campaign,
            name=name,
            kind=JudgeKind.MACHINE,
            description=f"{config['model_name']} with {template.label}",
            created_by=created_by,
        )
        return MachineJudge.objects.create(judge=judge, created_by=created_by, **config, **endpoint)


def update_machine_judge(*, machine: MachineJudge, **changes) -> MachineJudge:
    """Change where a machine judge is served and how hard it is pushed (EDITABLE); its
    model, prompt and parameters never change. An empty ``api_key`` keeps the stored key
    (a form cannot show it back); ``clear_api_key=True`` removes it."""
    unknown = set(changes) - {*EDITABLE, "clear_api_key"}
    if unknown:
        raise ValueError(f"not editable: {', '.join(sorted(unknown))}")
    if changes.pop("clear_api_key", False):
        changes["api_key"] = ""
    elif not changes.get("api_key"):
        changes.pop("api_key", None)
    if "base_url" in changes:
        try:
            ChatEndpoint(base_url=changes["base_url"], model=machine.model_name)
        except ValueError as error:
            raise ValidationError(str(error)) from None
    if "api_key_env" in changes:
        changes["api_key_env"] = (changes["api_key_env"] or "").strip()
        _check_env_name(changes["api_key_env"])
    _check_limits(changes)
    for field, value in changes.items():
        setattr(machine, field, value)
    if changes:
        machine.save(update_fields=list(changes))
    return machine


def _check_env_name(name: str) -> None:
    if name and not ENV_NAME.match(name.strip()):
        raise ValidationError(MESSAGES["env_name"].format(name=name))


def _check_limits(values: dict) -> None:
    for field, (low, high) in LIMITS.items():
        value = values.get(field)
        if value is not None and not low <= value <= high:
            raise ValidationError(
                MESSAGES["range"].format(
                    field=field.replace("_", " ").capitalize(), low=low, high=high
                )
            )
    for field in ("input_price", "output_price"):
        value = values.get(field)
        if value is not None and value < 0:
            raise ValidationError(MESSAGES["range"].format(field=field, low=0, high="any"))


def template_of(machine: MachineJudge) -> PromptTemplate:
    return PromptTemplate(
        name=machine.template_name,
        version=machine.template_version,
        system=machine.system_prompt,
        user=machine.user_prompt,
    )


def key_source(machine: MachineJudge) -> str:
    """Where the key comes from, for pages (never the key itself)."""
    if machine.api_key_env:
        state = "set" if os.environ.get(machine.api_key_env) else "not set on this server"
        return f"environment variable {machine.api_key_env} ({state})"
    return "stored (hidden)" if machine.api_key else "none (the endpoint needs no key)"


def endpoint_for(machine: MachineJudge) -> ChatEndpoint:
    """The endpoint with its key: from the environment variable when one is named (and
    set), else the stored key. ValidationError when the named variable is not set."""
    key = machine.api_key
    if machine.api_key_env:
        key = os.environ.get(machine.api_key_env, "")
        if not key:
            raise ValidationError(MESSAGES["env_unset"].format(name=machine.api_key_env))
    return ChatEndpoint(
        base_url=machine.base_url,
        model=machine.model_name,
        api_key=key,
        timeout=machine.timeout,
        max_retries=machine.max_retries,
        backoff_base=getattr(settings, "MACHINE_JUDGE_BACKOFF_SECONDS", 1.0),
    )


# --- what to grade -------------------------------------------------------------------------


def human_graded() -> Q:
    """Pairs a human has graded: a grade given here, or an outside person's imported one."""
    here = Assignment.objects.filter(
        pair=OuterRef("pk"), status=AssignmentStatus.DONE, judgment__grade__isnull=False
    )
    outside = ExternalGrade.objects.filter(pair=OuterRef("pk"), judge__kind=JudgeKind.OUTSIDE)
    return Q(Exists(here)) | Q(Exists(outside))


def scope_pairs(*, machine: MachineJudge, scope: str, topic: Topic | None = None):
    """The pairs of a scope (the whole pool, one topic, or those no human graded)."""
    pairs = Pair.objects.filter(campaign_id=machine.judge.campaign_id)
    if scope == MachineScope.TOPIC:
        pairs = pairs.filter(topic=topic)
    elif scope == MachineScope.UNJUDGED:
        pairs = pairs.exclude(human_graded())
    return pairs


def pairs_to_grade(*, machine: MachineJudge, scope: str, topic: Topic | None = None):
    """The pairs of the scope this machine judge has not graded yet (failures included)."""
    graded = ExternalGrade.objects.filter(pair=OuterRef("pk"), judge_id=machine.judge_id)
    return scope_pairs(machine=machine, scope=scope, topic=topic).exclude(Exists(graded))


# --- starting, cancelling ------------------------------------------------------------------


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


def cancel_run(*, run: MachineRun) -> bool:
    """Ask the run to stop starting requests (the answers in flight are still recorded).
    False when it had finished or was asked already."""
    return bool(
        MachineRun.objects.filter(
            pk=run.pk, cancel_requested_at__isnull=True, finished_at__isnull=True
        ).update(cancel_requested_at=timezone.now())
    )


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
            passage = Passage(
                query=pair.topic.query,
                description=pair.topic.description,
                narrative=pair.topic.narrative,
                title=document.title,
                text=document.text or document.title,
            )
            messages = render_messages(
                template, passage, scale, max_passage_chars=machine.max_passage_chars
            )
            yield Item(pair_id, messages)


def _ask(client: ChatClient, machine: MachineJudge, grades: list[int], item: Item) -> Answer:
    """One pair's answer, or its failure: never raises for the endpoint or the answer."""
    if item.messages is None:
        return Answer(item.pair_id, None, failure="no_text", reason=MESSAGES["no_text"])
    try:
        completion = client.complete(
            item.messages, temperature=machine.temperature, max_tokens=machine.max_tokens
        )
    except CompletionError as error:
        return Answer(
            item.pair_id, None, failure=error.kind, reason=str(error), attempts=error.attempts
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
        return _ask(client, machine, grades, item)

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
        raise GaveUp(MESSAGES["gave_up"].format(n=state.failures_in_a_row, last=state.last_failure))
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
        if answer.grade is not None or answer.failure in ("not_a_grade", "no_text"):
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
    from annotation import tasks  # tasks import the services
    from jobs.services import start_job

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
            task=tasks.machine_judge_job,
            total=max(run.pairs, 1),
            run_id=run.pk,
        )
        run.job = job
        run.save(update_fields=["job"])
    return job
