"""The lead's pages for machine judges you can trust (issue 33): the campaign's certified
leaderboard (draw the human sample, follow it, read each pooled run's mean nDCG@10 with its
prediction-powered interval and which pairs of runs are settled; CSV download), and a machine
judge's gullibility gate (run it, read each probe's rise with its interval, override a
blocking gate with a reason)."""

from __future__ import annotations

import csv

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import forms
from annotation.access import get_campaign_for_lead
from annotation.models import GullibilityGate, MachineJudge
from annotation.services import certified, gates
from annotation.services import certified_board as boards
from annotation.views.common import campaign_machine, plural

MESSAGES = {
    "drawn": "Drew {chosen} pair{s} for the humans ({strategy}, seed {seed}): {sent} sent, "
    "{assigned} new assignment{s_assigned}{withdrawn}.",
    "withdrawn": "; {n} open assignment{s} outside the sample taken back",
    "refused": "Nothing drawn: {reason}",
    "redrawn": "Redrew the sample: {chosen} pair{s} for the humans ({strategy}, seed {seed}), "
    "{assigned} new assignment{s_assigned}{withdrawn}. The former design is recorded below.",
    "gate_refused": "The gate did not start: {reason}",
    "overridden": "Recorded your override: {label} may fill qrels despite its gate.",
    "override_refused": "Nothing recorded: {reason}",
}


def _board_context(request, campaign, form=None, redraw_form=None) -> dict:
    board = boards.certified_board(campaign=campaign)
    rows, pairs = [], []
    if board.certified is not None:
        for estimate in board.certified.runs:
            rows.append(
                {
                    "estimate": estimate,
                    "label": board.label(estimate.run),
                    "url": board.url(estimate.run),
                    "width": estimate.high - estimate.low,
                    "outside": not 0.0 <= estimate.estimate <= 1.0,
                }
            )
        pairs = [
            {"pair": p, "a": board.label(p.a), "b": board.label(p.b)} for p in board.certified.pairs
        ]
    ready = board.ready_machines
    if form is None and board.design is None and ready:
        form = forms.CertifiedSampleForm(machines=ready)
    # Redrawing is offered until a human judged a sampled pair (then it is refused anyway).
    judged = certified.judged_in_sample(board.design) if board.design is not None else 0
    if redraw_form is None and board.design is not None and not judged:
        redraw_form = forms.CertifiedRedrawForm(design=board.design)
    return {
        "campaign": campaign,
        "board": board,
        "rows": rows,
        "pairs": pairs,
        "form": form,
        "redraw_form": redraw_form,
        "judged_in_sample": judged,
        "settled": sum(p["pair"].settled_holm for p in pairs),
        "outside": any(row["outside"] for row in rows),
    }


@require_GET
@login_required
def certified_board(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    return render(request, "annotation/certified.html", _board_context(request, campaign))


@require_POST
@login_required
def certified_draw(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    machines = MachineJudge.objects.filter(judge__campaign=campaign).select_related("judge")
    form = forms.CertifiedSampleForm(request.POST, machines=machines)
    if not form.is_valid():
        context = _board_context(request, campaign, form=form)
        return render(request, "annotation/certified.html", context, status=400)
    data = form.cleaned_data
    try:
        drawn = certified.draw_sample(
            campaign=campaign,
            machine=machines.get(pk=data["machine"]),
            strategy=data["strategy"],
            budget=data["budget"],
            seed=data["seed"],
            user=request.user,
        )
    except ValidationError as error:
        form.add_error(None, error)
        context = _board_context(request, campaign, form=form)
        return render(request, "annotation/certified.html", context, status=400)
    messages.success(request, _drawn_message("drawn", drawn))
    return redirect("annotation:certified", pk=campaign.pk)


@require_POST
@login_required
def certified_redraw(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.CertifiedRedrawForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            drawn = certified.redraw_sample(
                campaign=campaign,
                strategy=data["strategy"] or None,
                budget=data["budget"] or None,
                seed=data["seed"],
                user=request.user,
            )
        except ValidationError as error:
            form.add_error(None, error)
    if not form.is_valid():
        context = _board_context(request, campaign, redraw_form=form)
        return render(request, "annotation/certified.html", context, status=400)
    messages.success(request, _drawn_message("redrawn", drawn))
    return redirect("annotation:certified", pk=campaign.pk)


def _drawn_message(key: str, drawn) -> str:
    """What a draw or a redraw of the human sample did (MESSAGES[key])."""
    design = drawn.design
    withdrawn = (
        MESSAGES["withdrawn"].format(n=drawn.withdrawn, s=plural(drawn.withdrawn))
        if drawn.withdrawn
        else ""
    )
    return MESSAGES[key].format(
        chosen=design.chosen,
        s=plural(design.chosen),
        strategy=design.strategy,
        seed=design.seed,
        sent=drawn.sent,
        assigned=drawn.assigned,
        s_assigned=plural(drawn.assigned),
        withdrawn=withdrawn,
    )


CSV_HEADER = ["run", "ndcg_cut_10", "low", "high", "se", "machine_only", "topics"]
PAIRS_HEADER = ["a", "b", "difference", "low", "high", "p_value", "p_holm", "settled_holm"]


@require_GET
@login_required
def certified_csv(request, pk):
    """The certified leaderboard (or, with ?what=pairs, its pairs of runs) as CSV; 409 with
    the reason while it cannot be certified."""
    campaign = get_campaign_for_lead(request.user, pk)
    board = boards.certified_board(campaign=campaign)
    if board.certified is None:
        return HttpResponse(board.message, status=409, content_type="text/plain; charset=utf-8")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    what = "pairs" if request.GET.get("what") == "pairs" else "runs"
    response["Content-Disposition"] = f'attachment; filename="certified-{campaign.pk}-{what}.csv"'
    out = csv.writer(response)
    if what == "pairs":
        out.writerow(PAIRS_HEADER)
        for p in board.certified.pairs:
            out.writerow(
                [board.label(p.a), board.label(p.b)]
                + [f"{v:.4f}" for v in (p.difference, p.low, p.high, p.p_value, p.p_holm)]
                + [str(p.settled_holm).lower()]
            )
        return response
    out.writerow(CSV_HEADER)
    for r in board.certified.runs:
        out.writerow(
            [board.label(r.run)]
            + [f"{v:.4f}" for v in (r.estimate, r.low, r.high, r.se, r.machine_only)]
            + [r.topics]
        )
    return response


# --- the gullibility gate ------------------------------------------------------------------


def _render_gate(request, campaign, machine, status=200, **given):
    gate = gates.latest_gate(machine)
    context = {
        "campaign": campaign,
        "machine": machine,
        "gate": gate,
        "verdict": gates.verdict(gate) if gate else None,
        "over": gates.describe_rises(gate) if gate and gate.blocked else "",
        "earlier": GullibilityGate.objects.filter(machine=machine)
        .select_related("job", "overridden_by")
        .exclude(pk=gate.pk if gate else None)[:10],
        "candidates": len(gates.candidate_pairs(machine)),
        "form": given.get("form") or forms.GateForm(),
        "override_form": given.get("override_form") or forms.GateOverrideForm(),
        "threshold_points": 100 * campaign.gate_threshold,
    }
    return render(request, "annotation/machine_gate.html", context, status=status)


@require_GET
@login_required
def machine_gate(request, pk, mid):
    campaign = get_campaign_for_lead(request.user, pk)
    return _render_gate(request, campaign, campaign_machine(campaign, mid))


@require_POST
@login_required
def machine_gate_run(request, pk, mid):
    campaign = get_campaign_for_lead(request.user, pk)
    machine = campaign_machine(campaign, mid)
    form = forms.GateForm(request.POST)
    if not form.is_valid():
        return _render_gate(request, campaign, machine, status=400, form=form)
    try:
        job = gates.start_gate(
            machine=machine,
            user=request.user,
            max_pairs=form.cleaned_data["max_pairs"],
            seed=form.cleaned_data["seed"],
        )
    except ValidationError as error:
        form.add_error(None, error)
        return _render_gate(request, campaign, machine, status=400, form=form)
    return redirect(job)


@require_POST
@login_required
def machine_gate_override(request, pk, mid):
    campaign = get_campaign_for_lead(request.user, pk)
    machine = campaign_machine(campaign, mid)
    form = forms.GateOverrideForm(request.POST)
    gate = gates.latest_gate(machine)
    if not form.is_valid() or gate is None:
        if gate is None:
            form.add_error(None, gates.MESSAGES["not_finished"])
        return _render_gate(request, campaign, machine, status=400, override_form=form)
    try:
        gates.override_gate(gate=gate, user=request.user, reason=form.cleaned_data["reason"])
    except ValidationError as error:
        form.add_error(None, error)
        return _render_gate(request, campaign, machine, status=400, override_form=form)
    messages.success(request, MESSAGES["overridden"].format(label=machine.judge.label))
    return redirect("annotation:machine-gate", pk=campaign.pk, mid=machine.pk)


@require_POST
@login_required
def machine_gate_cancel(request, pk, mid):
    """Stop the machine's running gate (its latest): it ends with no verdict."""
    campaign = get_campaign_for_lead(request.user, pk)
    machine = campaign_machine(campaign, mid)
    gate = gates.latest_gate(machine)
    outcome = gates.CANCEL_LATE if gate is None else gates.cancel_gate(gate=gate)
    say = messages.info if outcome == gates.CANCEL_LATE else messages.success
    say(request, gates.MESSAGES[f"cancel_{outcome}"])
    return redirect("annotation:machine-gate", pk=campaign.pk, mid=machine.pk)
