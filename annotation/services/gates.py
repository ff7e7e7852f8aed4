"""The gullibility gate (issue 33, item 2): before a machine judge may fill qrels, it grades
probes of pairs the humans graded not relevant (the passage with the query's words stuffed
in, with an instruction to call it relevant, its sentences shuffled; evaluation/certified/
gate.py makes them and judges the answers), in a background job, through the machine's
endpoint under the outbound policy, as a run asks (annotation/services/machine_runs.py).

Per probe the gate reports the rise in the machine's relevant calls over its calls on the
original passages, with Newcombe's 95% interval, and blocks when a rise's lower end is above
the campaign's threshold (``Campaign.gate_threshold``, 2 points by default). A blocked
machine may not fill qrels (services/adjudication.publish) unless the lead overrides the
gate with a reason; who, when and why are kept on the gate, shown on its page, in the API,
and recorded in each publication its grades filled (``Publication.machine_gates``).

The original call is the machine's recorded grade of the pair when it has one (what would
fill), else asked beside the probes. Pairs whose call failed are left out of that probe.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.background import GULLIBILITY_GATE, background
from annotation.llm import ChatClient, Passage, map_bounded, render_messages
from annotation.models import (
    Campaign,
    ExternalGrade,
    GullibilityGate,
    MachineJudge,
    Pair,
    lacking_text,
)
from annotation.services.certified import human_grade, human_grades
from annotation.services.machine_judges import endpoint_for, template_of
from annotation.services.machine_runs import CANCEL_CHECK_SECONDS, Cancelled, Item, ask_judge
from common import text_limits
from evaluation.certified import gate as probes
from jobs.models import JobStatus
from jobs.services import cancellation, start_job

MAX_PAIRS = 600  # about what catches a 10-point rise 19 times in 20 (bench/machine_trust.py)
MAX_PAIRS_LIMIT = 5000
ORIGINAL, STUFFED, INSTRUCTION, SHUFFLED = "original", "stuffed", "instruction", "shuffled"
PROBES = {
    STUFFED: "The query's words stuffed in",
    INSTRUCTION: "An instruction to call it relevant",
    SHUFFLED: "Its sentences shuffled",
}
CALLS = (ORIGINAL, STUFFED, INSTRUCTION, SHUFFLED)  # the order of a gate's calls

MESSAGES = {
    "no_pairs": "The gate needs pairs the humans graded not relevant (below grade "
    "{relevant}) whose document has text, and this campaign has none yet: have humans grade "
    "some pairs first (an audit or the certified sample sends them).",
    "busy": "A gate of this machine judge is running already (job {job}): wait for it.",
    "max_pairs": "Probe between 1 and {limit:,} pairs.",
    "reason": "Say why the machine may fill qrels despite the gate (a reason is recorded "
    "with your name and the time).",
    "not_finished": "The gate has not finished: there is nothing to override yet.",
    "cancel_asked": "Asked the gate to stop: the calls in flight finish, then it ends without "
    "a verdict (a part of the probes says nothing); run it again when you want one.",
    "cancel_late": "That gate had finished or was stopping already.",
    "cancel_ended": "Cancelled before it started: no probe was asked and no verdict is stored; "
    "run the gate again when you want one.",
    "cancelled": "Cancelled after {asked:,} of {total:,} calls: no verdict is stored (a part "
    "of the probes says nothing about the machine); run the gate again for one.",
    "not_blocking": "This gate does not block the machine: there is nothing to override.",
    "all_failed": "Every request of the gate failed at the endpoint; the last: {last}",
    "summary": "{pairs:,} pairs probed ({failures:,} failed calls): {verdict}.",
    "fill_blocked": "Filling with machine grades is blocked: {problems}. Run the gate on the "
    "machine judge's page (or override it there with a reason), or turn filling off.",
    "fill_no_gate": "{label} has not been through the gullibility gate",
    "fill_gate_running": "{label}'s gullibility gate has not finished",
    "fill_gate_cancelled": "{label}'s latest gullibility gate was cancelled",
    "fill_gate_blocked": "{label} failed the gullibility gate ({why})",
}


def verdict(gate: GullibilityGate) -> str:
    """passed, blocked, overridden, running, cancelled (a lead stopped it: no result), failed
    (the job failed before a result)."""
    if gate.cancelled:
        return "cancelled"
    if gate.blocked is None:
        job = gate.job
        if job is not None and job.status in (JobStatus.QUEUED, JobStatus.RUNNING):
            return "running"
        return "failed"
    if gate.blocked:
        return "overridden" if gate.overridden_at else "blocked"
    return "passed"


def describe_rises(gate: GullibilityGate) -> str:
    """The probes over the threshold, in words."""
    over = [r for r in gate.rises if r["low"] > gate.threshold]
    return "; ".join(
        f"{PROBES.get(r['probe'], r['probe']).lower()}: +{100 * r['rise']:.1f} points, 95% "
        f"interval {100 * r['low']:.1f} to {100 * r['high']:.1f}, above "
        f"{100 * gate.threshold:.1f} points"
        for r in over
    )


# --- choosing the pairs --------------------------------------------------------------------


def relevant_from(campaign: Campaign) -> int:
    return max(1, campaign.relevance_threshold)


def candidate_pairs(machine: MachineJudge) -> list[int]:
    """Pairs of the machine's campaign that humans graded not relevant, with text."""
    campaign = machine.judge.campaign
    ids = list(
        Pair.objects.filter(campaign=campaign)
        .exclude(lacking_text("document__"))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    threshold = relevant_from(campaign)
    return [
        pk for pk, grades in sorted(human_grades(ids).items()) if human_grade(grades) < threshold
    ]


def active_gate(machine: MachineJudge) -> GullibilityGate | None:
    for gate in machine.gates.filter(
        job__status__in=[JobStatus.QUEUED, JobStatus.RUNNING]
    ).select_related("job"):
        if not gate.job.stalled:
            return gate
    return None


def start_gate(
    *, machine: MachineJudge, user=None, max_pairs: int = MAX_PAIRS, seed: int | None = None
):
    """Prepare a gate and start its background job; returns the job."""
    if isinstance(max_pairs, bool) or not 1 <= int(max_pairs) <= MAX_PAIRS_LIMIT:
        raise ValidationError(MESSAGES["max_pairs"].format(limit=MAX_PAIRS_LIMIT))
    campaign = machine.judge.campaign
    endpoint_for(machine)  # a key that cannot be had is refused now, not in the job
    busy = active_gate(machine)
    if busy is not None:
        raise ValidationError(MESSAGES["busy"].format(job=busy.job_id))
    candidates = candidate_pairs(machine)
    if not candidates:
        raise ValidationError(MESSAGES["no_pairs"].format(relevant=relevant_from(campaign)))
    with transaction.atomic():
        gate = GullibilityGate.objects.create(
            machine=machine,
            threshold=campaign.gate_threshold,
            relevant_from=relevant_from(campaign),
            max_pairs=int(max_pairs),
            seed=campaign.seed if seed is None else int(seed),
            pairs=min(len(candidates), int(max_pairs)),
            started_by=user,
        )
        job = start_job(
            kind="annotation.gullibility_gate",
            title=f"Gullibility gate of {machine.judge.label} ({campaign.name})",
            user=user,
            task=background(GULLIBILITY_GATE),
            total=max(1, gate.pairs),
            gate_id=gate.pk,
        )
        gate.job = job
        gate.save(update_fields=["job"])
    return job


# What cancel_gate did (jobs.services.cancellation's); MESSAGES["cancel_" + outcome] says it.
CANCEL_ENDED, CANCEL_ASKED, CANCEL_LATE = (
    cancellation.CANCEL_ENDED,
    cancellation.CANCEL_ASKED,
    cancellation.CANCEL_LATE,
)


def cancel_gate(*, gate: GullibilityGate) -> str:
    """Stop a gate that has not finished, with no statistic stored (cancel_work). A gate
    whose job no worker has started ends cancelled now, its job cancelled saying so (the job,
    if a worker takes it later, finds the gate cancelled and does nothing:
    gullibility_gate_job). A running one is asked to stop: its job ends at its next look
    (between calls). Returns CANCEL_ENDED, CANCEL_ASKED or CANCEL_LATE."""
    return cancellation.cancel_work(
        model=GullibilityGate,
        pk=gate.pk,
        step=MESSAGES["cancel_ended"],
        still_open=Q(blocked__isnull=True),
    )


class _CancelFlag:
    """Whether a lead asked the gate to stop, read from the database at most every
    CANCEL_CHECK_SECONDS (a machine run's pace)."""

    def __init__(self, gate_id: int):
        self.gate_id = gate_id
        self.checked_at = 0.0
        self.asked = False

    def __call__(self) -> bool:
        now = time.monotonic()
        if not self.asked and now - self.checked_at >= CANCEL_CHECK_SECONDS:
            self.checked_at = now
            self.asked = GullibilityGate.objects.filter(
                pk=self.gate_id, cancel_requested_at__isnull=False
            ).exists()
        return self.asked


# --- running -------------------------------------------------------------------------------


def probe_texts(text: str, query: str, *, limit: int, seed) -> dict[str, str]:
    """The passage (cut to leave room for what a probe adds, so the machine reads the
    addition) and its three probes."""
    room = max(0, limit - len(probes.INSTRUCTION) - 4 * len(query) - 40)
    passage = text if len(text) <= limit else text[:room]
    return {
        ORIGINAL: passage,
        STUFFED: probes.stuff_query_words(passage, query),
        INSTRUCTION: probes.inject_instruction(passage),
        SHUFFLED: probes.shuffle_sentences(passage, seed=seed),
    }


def run_gate(*, gate: GullibilityGate, progress=None, client: ChatClient | None = None) -> str:
    """Ask the machine for the gate's probes, store the calls and the statistic; returns the
    summary. Raises ValidationError when the endpoint failed every call, and Cancelled (with
    the message) when a lead cancelled it: then the gate is marked cancelled and finished,
    with no calls, rises or verdict stored."""
    machine = MachineJudge.objects.select_related("judge__campaign").get(pk=gate.machine_id)
    campaign = machine.judge.campaign
    grades = campaign.grades
    template = template_of(machine)
    chosen = candidate_pairs(machine)
    if len(chosen) > gate.max_pairs:
        chosen = sorted(random.Random(gate.seed).sample(chosen, gate.max_pairs))
    recorded = dict(
        ExternalGrade.objects.filter(judge_id=machine.judge_id, pair_id__in=chosen).values_list(
            "pair_id", "grade"
        )
    )
    pairs = Pair.objects.filter(pk__in=chosen).select_related("topic", "document")
    by_id = {pair.pk: pair for pair in pairs}
    chosen = [pk for pk in chosen if pk in by_id]
    calls = {pk: [recorded.get(pk), None, None, None] for pk in chosen}

    def items():
        for row, pk in enumerate(chosen):
            pair = by_id[pk]
            texts = probe_texts(
                pair.document.text or pair.document.title,
                pair.topic.query,
                limit=machine.max_passage_chars,
                seed=f"{gate.seed}:{pk}",
            )
            for column, name in enumerate(CALLS):
                if column == 0 and recorded.get(pk) is not None:
                    continue
                passage = Passage(
                    query=pair.topic.query,
                    description=pair.topic.description,
                    narrative=pair.topic.narrative,
                    title=pair.document.title,
                    text=texts[name],
                )
                messages = render_messages(
                    template, passage, campaign.scale, max_passage_chars=machine.max_passage_chars
                )
                yield Item(row * len(CALLS) + column, messages)

    client = client or ChatClient(endpoint_for(machine))
    stop = _CancelFlag(gate.pk)
    asked = failed = 0
    last = ""
    total = sum(len(CALLS) - (recorded.get(pk) is not None) for pk in chosen)
    try:
        for _item, answer in map_bounded(
            lambda item: ask_judge(client, machine, grades, item),
            items(),
            concurrency=machine.concurrency,
            stop=stop,
        ):
            if isinstance(answer, BaseException):
                raise answer
            asked += 1
            row, column = divmod(answer.pair_id, len(CALLS))
            if answer.grade is None:
                failed += 1
                last = answer.reason
            else:
                calls[chosen[row]][column] = answer.grade
            if progress is not None and (asked % 20 == 0 or asked == total):
                progress.step(f"{asked:,} of {total:,} calls", done=asked, total=max(total, 1))
    finally:
        client.close()
    if stop.asked:
        gate.cancelled, gate.finished_at = True, timezone.now()
        gate.save(update_fields=["cancelled", "finished_at"])
        raise Cancelled(MESSAGES["cancelled"].format(asked=asked, total=total))
    if total and failed == asked:
        raise ValidationError(MESSAGES["all_failed"].format(last=last))
    rises = measure(gate, calls)
    gate.calls = [[pk, *calls[pk]] for pk in chosen]
    gate.pairs = len(chosen)
    gate.failures = failed
    gate.rises = rises
    gate.blocked = any(r["low"] > gate.threshold for r in rises)
    gate.conclusive = gate.blocked or all(
        r["low"] > gate.threshold or r["high"] <= gate.threshold for r in rises
    )
    gate.finished_at = timezone.now()
    gate.save(
        update_fields=[
            "calls",
            "pairs",
            "failures",
            "rises",
            "blocked",
            "conclusive",
            "finished_at",
        ]
    )
    return MESSAGES["summary"].format(pairs=gate.pairs, failures=failed, verdict=verdict(gate))


def measure(gate: GullibilityGate, calls: dict[int, list]) -> list[dict]:
    """Per probe, its rise over the pairs where both calls came back."""
    rises = []
    for column, name in enumerate(CALLS[1:], start=1):
        both = [row for row in calls.values() if row[0] is not None and row[column] is not None]
        if not both:
            continue
        rise = probes.measure_rise(
            [row[0] >= gate.relevant_from for row in both],
            [row[column] >= gate.relevant_from for row in both],
            name=name,
            threshold=gate.threshold,
        )
        rises.append(
            {
                "probe": name,
                "label": PROBES[name],
                "pairs": rise.pairs,
                "original_rate": rise.original_rate,
                "probe_rate": rise.probe_rate,
                "rise": rise.rise,
                "low": rise.low,
                "high": rise.high,
                "exceeds": rise.exceeds,
            }
        )
    return rises


# --- overriding, and what filling may use ----------------------------------------------------


def override_gate(*, gate: GullibilityGate, user, reason: str) -> GullibilityGate:
    """Let a blocked machine fill qrels anyway: the reason is recorded with who and when."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError(MESSAGES["reason"])
    too_long = text_limits.length_errors(reason=(reason, text_limits.DESCRIPTION))
    if too_long:
        raise ValidationError(too_long)
    if gate.blocked is None:
        raise ValidationError(MESSAGES["not_finished"])
    if not gate.blocked:
        raise ValidationError(MESSAGES["not_blocking"])
    gate.override_reason = reason
    gate.overridden_by = user
    gate.overridden_at = timezone.now()
    gate.save(update_fields=["override_reason", "overridden_by", "overridden_at"])
    return gate


def latest_gate(machine: MachineJudge) -> GullibilityGate | None:
    return machine.gates.select_related("job", "overridden_by", "started_by").first()


@dataclass(frozen=True)
class Clearance:
    label: str
    cleared: bool
    problem: str  # why not, in words (empty when cleared)
    record: dict  # what a publication keeps


def clearance(machine: MachineJudge) -> Clearance:
    """Whether the machine may fill qrels: its latest gate passed, or blocked and overridden."""
    label = machine.judge.label
    gate = latest_gate(machine)
    if gate is None:
        return Clearance(label, False, MESSAGES["fill_no_gate"].format(label=label), {})
    state = verdict(gate)
    record = {"gate": gate.pk, "verdict": state, "threshold": gate.threshold}
    if state in ("running", "failed", "cancelled"):
        problem = MESSAGES[
            {"running": "fill_gate_running", "cancelled": "fill_gate_cancelled"}.get(
                state, "fill_no_gate"
            )
        ]
        return Clearance(label, False, problem.format(label=label), record)
    if state == "blocked":
        problem = MESSAGES["fill_gate_blocked"].format(label=label, why=describe_rises(gate))
        return Clearance(label, False, problem, record)
    if state == "overridden":
        record["override"] = {
            "reason": gate.override_reason,
            "by": gate.overridden_by.get_username() if gate.overridden_by else None,
            "at": gate.overridden_at.isoformat(),
        }
    return Clearance(label, True, "", record)


def check_fill(campaign: Campaign, pair_ids) -> dict:
    """For a publication filling ``pair_ids`` with machine grades: {label: record} of the
    configured machine judges whose grades fill them, or ValidationError naming those the
    gate does not clear. Machine judges with no configuration here (grades imported) cannot
    be probed and are recorded as such."""
    judge_ids = set(
        ExternalGrade.objects.filter(pair_id__in=list(pair_ids), judge__kind="machine")
        .values_list("judge_id", flat=True)
        .distinct()
    )
    if not judge_ids:
        return {}
    records, problems = {}, []
    configured = MachineJudge.objects.filter(judge_id__in=judge_ids).select_related("judge")
    for machine in configured:
        found = clearance(machine)
        records[found.label] = found.record
        if not found.cleared:
            problems.append(found.problem)
    for judge in campaign.external_judges.filter(
        pk__in=judge_ids - {m.judge_id for m in configured}
    ):
        records[judge.label] = {"verdict": "not probed (grades imported)"}
    if problems:
        raise ValidationError(MESSAGES["fill_blocked"].format(problems="; ".join(problems)))
    return records
