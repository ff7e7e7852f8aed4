"""The lead's machine-judge pages: the campaign's machine judges and a new one, and one
judge's configuration (its key never shown), runs (with their jobs' progress bars, the active
one cancellable), a form to run it, and its answers, failures first; and sending pairs to
the human judges to check the machines (an audit; also from the agreement report)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import forms, tasks
from annotation.access import get_campaign_for_lead
from annotation.llm import DEFAULT_MAX_PASSAGE_CHARS, DEFAULT_TEMPLATE, PromptTemplate
from annotation.models import (
    SENT_BY_HAND,
    AuditKind,
    MachineAnswer,
    MachineAudit,
    MachineJudge,
    MachineOutcome,
    MachineRun,
)
from annotation.services import audits, gates, machine_checks, machine_judges, machine_runs
from annotation.views.common import campaign_machine, paginate, plural, start_campaign_job
from jobs.services.limits import TooLargeForRequest, sync_write_limit

MESSAGES = {
    "created": "Created the machine judge {label}. Run it over the pool below.",
    "saved": "Saved where {label} is served.",
    "cancel_asked": "Asked the run to stop: the requests in flight finish and are recorded.",
    "cancel_late": "That run had finished or was stopping already.",
    "cancel_ended": machine_judges.MESSAGES["cancel_ended"],
    "audit_sent": (
        "Sent {sent} pair{s} to the human judges ({kind}): {assigned} new assignment{s_assigned}."
    ),
    "audit_repeated": (
        "That sample (seed {seed}, {size} pairs) was sent on {when:%Y-%m-%d %H:%M} UTC: "
        "nothing new was sent."
    ),
    "audit_nothing": (
        "No pair to send for this audit ({kind}): no such pair is short of human judges and unsent."
    ),
    "audit_refused": "Nothing sent: {reason}",
    "audit_none_left": "No pair graded by a machine is short of human judges and unsent.",
}


def _initial_form() -> forms.MachineJudgeForm:
    template = DEFAULT_TEMPLATE
    return forms.MachineJudgeForm(
        initial={
            "template_name": template.name,
            "template_version": template.version,
            "system_prompt": template.system,
            "user_prompt": template.user,
            "temperature": 0.0,
            "max_tokens": 16,
            "concurrency": 4,
            "timeout": 60,
            # the operator's endpoint (QRELSMITH_LLM_BASE_URL, QRELSMITH_LLM_MODEL), if any
            "base_url": settings.LLM_BASE_URL,
            "model_name": settings.LLM_MODEL,
        }
    )


@require_GET
@login_required
def machine_list(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    return _render_list(request, campaign, _initial_form())


def _render_list(request, campaign, form, status=200):
    machines = (
        MachineJudge.objects.filter(judge__campaign=campaign)
        .select_related("judge")
        .annotate(
            graded_n=Count("answers", filter=Q(answers__outcome=MachineOutcome.GRADED)),
            failed_n=Count("answers", filter=Q(answers__outcome=MachineOutcome.FAILED)),
        )
    )
    candidates = audits.audit_candidates(campaign=campaign)
    kinds = [
        {"value": kind.value, "label": kind.label, **candidates[kind.value]}
        for kind in SENT_BY_HAND
    ]
    # The audit form only when some kind has a pair to send; else why none has.
    sendable = [kind["value"] for kind in kinds if kind.get("pairs")]
    context = {
        "campaign": campaign,
        "machines": machines,
        "pairs": campaign.pairs.count(),
        "form": form,
        "audit_form": forms.MachineAuditForm(),
        "audit_kinds": kinds,
        "audit_default": sendable[0] if sendable else None,
        "audit_reasons": sorted({kind["reason"] for kind in kinds if kind.get("reason")})
        + ([MESSAGES["audit_none_left"]] if any(k.get("pairs") == 0 for k in kinds) else []),
        "audits": MachineAudit.objects.filter(campaign=campaign).select_related("sent_by")[:20],
        "llm_base_url": settings.LLM_BASE_URL,
        "preview": machine_judges.prompt_preview(
            campaign=campaign,
            template=DEFAULT_TEMPLATE,
            max_passage_chars=DEFAULT_MAX_PASSAGE_CHARS,
            pair_id=request.GET.get("pair"),
        ),
    }
    return render(request, "annotation/machines.html", context, status=status)


@require_POST
@login_required
def machine_create(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.MachineJudgeForm(request.POST)
    if not form.is_valid():
        return _render_list(request, campaign, form, status=400)
    data = form.cleaned_data
    template = PromptTemplate(
        name=data["template_name"].strip(),
        version=data["template_version"].strip(),
        system=data["system_prompt"],
        user=data["user_prompt"],
    )
    try:
        machine = machine_judges.create_machine_judge(
            campaign=campaign,
            name=data["name"],
            model_name=data["model_name"],
            model_version=data["model_version"],
            base_url=data["base_url"],
            api_key=data["api_key"],
            api_key_env=data["api_key_env"],
            template=template,
            temperature=data["temperature"],
            max_tokens=data["max_tokens"],
            concurrency=data["concurrency"],
            timeout=data["timeout"],
            input_price=data["input_price"],
            output_price=data["output_price"],
            created_by=request.user,
        )
    except ValidationError as error:
        form.add_error(None, error)
        return _render_list(request, campaign, form, status=400)
    messages.success(request, MESSAGES["created"].format(label=machine.judge.label))
    return redirect(machine)


@require_GET
@login_required
def machine_detail(request, pk, mid):
    campaign = get_campaign_for_lead(request.user, pk)
    machine = campaign_machine(campaign, mid)
    return _render_detail(request, campaign, machine)


def _render_detail(request, campaign, machine, status=200, **given):
    answers = MachineAnswer.objects.filter(machine=machine).select_related(
        "pair__topic", "pair__document"
    )
    show = request.GET.get("show", "failed")
    shown = answers.filter(
        outcome=MachineOutcome.FAILED if show == "failed" else MachineOutcome.GRADED
    )
    counts = answers.aggregate(
        graded=Count("pk", filter=Q(outcome=MachineOutcome.GRADED)),
        failed=Count("pk", filter=Q(outcome=MachineOutcome.FAILED)),
    )
    endpoint_form = given.get("endpoint_form") or forms.MachineEndpointForm(
        initial={field: getattr(machine, field) for field in MachineJudge.ENDPOINT_FIELDS}
    )
    context = {
        "campaign": campaign,
        "machine": machine,
        "key_source": machine_judges.key_source(machine),
        "counts": counts,
        "pairs": campaign.pairs.count(),
        "runs": MachineRun.objects.filter(machine=machine).select_related("job", "topic")[:10],
        "active": machine_runs.active_run(machine),
        "run_form": given.get("run_form") or forms.MachineRunForm(campaign=campaign),
        "endpoint_form": endpoint_form,
        "connection": given.get("connection"),
        "gate_verdict": gates.verdict(gate) if (gate := gates.latest_gate(machine)) else "",
        "show": "failed" if show == "failed" else "graded",
        "answers": paginate(request, shown.order_by("pair__topic__qid", "pair__document__docno")),
        "preview": machine_judges.prompt_preview(
            campaign=campaign,
            template=machine_judges.template_of(machine),
            max_passage_chars=machine.max_passage_chars,
            pair_id=request.GET.get("pair"),
        ),
    }
    return render(request, "annotation/machine.html", context, status=status)


@require_POST
@login_required
def machine_run(request, pk, mid):
    campaign = get_campaign_for_lead(request.user, pk)
    machine = campaign_machine(campaign, mid)
    form = forms.MachineRunForm(request.POST, campaign=campaign)
    if not form.is_valid():
        return _render_detail(request, campaign, machine, status=400, run_form=form)
    try:
        job = machine_runs.start_runner(
            machine=machine,
            scope=form.cleaned_data["scope"],
            topic=form.cleaned_data["topic"],
            user=request.user,
        )
    except ValidationError as error:
        form.add_error(None, error)
        return _render_detail(request, campaign, machine, status=400, run_form=form)
    return redirect(job)


@require_POST
@login_required
def machine_cancel(request, pk, mid, run):
    campaign = get_campaign_for_lead(request.user, pk)
    machine = campaign_machine(campaign, mid)
    run = get_object_or_404(MachineRun, pk=run, machine=machine)
    outcome = machine_runs.cancel_run(run=run)
    say = messages.info if outcome == machine_runs.CANCEL_LATE else messages.success
    say(request, MESSAGES[f"cancel_{outcome}"])
    return redirect(machine)


@require_POST
@login_required
def machine_edit(request, pk, mid):
    campaign = get_campaign_for_lead(request.user, pk)
    machine = campaign_machine(campaign, mid)
    form = forms.MachineEndpointForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, campaign, machine, status=400, endpoint_form=form)
    try:
        machine_judges.update_machine_judge(machine=machine, **form.cleaned_data)
    except ValidationError as error:
        form.add_error(None, error)
        return _render_detail(request, campaign, machine, status=400, endpoint_form=form)
    messages.success(request, MESSAGES["saved"].format(label=machine.judge.label))
    return redirect(machine)


@require_http_methods(["GET", "POST"])
@login_required
def machine_test(request, pk, mid):
    """One request to the endpoint, as a run sends it, shown on the judge's page: the grade
    and the raw answer, or the failure. Nothing is stored. A GET (the page reloaded or its
    address opened again) goes back to the judge's page instead of asking again."""
    campaign = get_campaign_for_lead(request.user, pk)
    machine = campaign_machine(campaign, mid)
    if request.method == "GET":
        return redirect(machine)
    check = machine_checks.test_connection(machine=machine)
    return _render_detail(request, campaign, machine, connection=check)


@require_POST
@login_required
def machine_audit(request, pk):
    """Send an audit; back to the machines page or the agreement report with what it did."""
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.MachineAuditForm(request.POST)
    back = request.POST.get("back")
    target = "annotation:agreement" if back == "agreement" else "annotation:machine-list"
    if not form.is_valid():
        reason = " ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
        messages.error(request, MESSAGES["audit_refused"].format(reason=reason))
        return redirect(target, pk=campaign.pk)
    data = form.cleaned_data
    try:
        result = audits.send_audit(
            campaign=campaign,
            kind=data["kind"],
            size=data["size"],
            seed=data["seed"],
            user=request.user,
            max_rows=sync_write_limit(),
        )
    except ValidationError as error:
        messages.error(request, MESSAGES["audit_refused"].format(reason=" ".join(error.messages)))
        return redirect(target, pk=campaign.pk)
    except TooLargeForRequest:
        return start_campaign_job(
            request,
            campaign,
            kind="send_audit",
            title=f"Send a {data['kind']} audit",
            task=tasks.send_audit_job,
            audit_kind=data["kind"],
            size=data["size"],
            seed=data["seed"],
        )
    kind = AuditKind(result.kind).label.lower()
    if result.repeated:
        audit = result.audit
        messages.info(
            request,
            MESSAGES["audit_repeated"].format(seed=audit.seed, size=audit.size, when=audit.sent_at),
        )
    elif not result.sent:
        messages.info(request, MESSAGES["audit_nothing"].format(kind=kind))
    else:
        messages.success(
            request,
            MESSAGES["audit_sent"].format(
                sent=result.sent,
                s=plural(result.sent),
                kind=kind,
                assigned=result.assigned,
                s_assigned=plural(result.assigned),
            ),
        )
    return redirect(target, pk=campaign.pk)
