"""The live leaderboard of a running campaign (services.live): the page, its polled
fragment and its CSV, and the stop rule the lead sets there (services.stopping). The
campaign's lead only: the page names the systems that retrieved the pool's documents, which
judges must never learn."""

from __future__ import annotations

import io

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.access import get_campaign_for_lead
from annotation.models import StopRule
from annotation.services import live as live_service
from annotation.services import stopping
from common.exports import write_csv
from common.htmx import is_htmx
from evaluation import measures

POLL_SECONDS = 3


def _state(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    try:
        measure = live_service.read_measure(request.GET.get("measure"))
        problem = ""
    except ValueError as error:
        measure, problem = live_service.DEFAULT_MEASURE, str(error)
    return live_service.live_board(campaign=campaign, measure=measure), problem


def _rows(state):
    board = state.board
    if board is None:
        return [], []
    runs = [{"label": state.label(r.name), "run": r} for r in board.runs]
    pairs = [
        {"better": state.label(p.better), "worse": state.label(p.worse), "pair": p}
        for p in board.pairs
    ]
    return runs, pairs


@require_GET
@login_required
def live_board(request, pk):
    state, problem = _state(request, pk)
    runs, pairs = _rows(state)
    context = {
        "campaign": state.campaign,
        "state": state,
        "board": state.board,
        "runs": runs,
        "pairs": pairs,
        "problem": problem,
        "no_runs": live_service.MESSAGES["no_runs"],
        "poll_seconds": POLL_SECONDS,
        "measure_links": [
            (name, measures.display_name(name), name == state.measure)
            for name in live_service.LIVE_MEASURES
        ],
        "stop": state.stop,
        "stop_rules": StopRule.choices,
    }
    template = "annotation/live_board.html"
    if is_htmx(request):
        template += "#board"
    return render(request, template, context, status=400 if problem else 200)


@require_GET
@login_required
def live_board_csv(request, pk):
    """The runs (``?what=runs``, the default) or the pairs (``?what=pairs``) as CSV."""
    state, _ = _state(request, pk)
    out = io.StringIO()
    board = state.board
    if request.GET.get("what") == "pairs":
        header = ["better", "worse", "state", "margin", "probability", "measure"]
        rows = [
            (
                state.label(p.better),
                state.label(p.worse),
                "settled" if p.settled else "open",
                f"{p.margin:.4f}",
                "" if p.probability is None else f"{p.probability:.4f}",
                state.display_measure,
            )
            for p in (board.pairs if board else [])
        ]
    else:
        header = ["run", "measure", "mean", "low", "high", "ci_low", "ci_high"]
        rows = [
            (
                state.label(r.name),
                state.display_measure,
                *(f"{v:.4f}" for v in (r.mean, r.low, r.high, r.ci_low, r.ci_high)),
            )
            for r in (board.runs if board else [])
        ]
    write_csv(out, header, rows)
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    what = "pairs" if request.GET.get("what") == "pairs" else "runs"
    response["Content-Disposition"] = (
        f'attachment; filename="campaign-{state.campaign.pk}-live-{what}.csv"'
    )
    return response


def _back(request, campaign):
    """Where a stop-rule form returns to: the campaign page when sent from there, else the
    live board."""
    if request.POST.get("back") == "campaign":
        return campaign.get_absolute_url()
    return reverse("annotation:live-board", args=[campaign.pk])


@require_POST
@login_required
def stop_rule(request, pk):
    """Set the campaign's stop rule: POST rule (none, adjacent, top), confidence, top."""
    campaign = get_campaign_for_lead(request.user, pk)
    try:
        chosen = stopping.read_stop_settings(
            rule=request.POST.get("rule", ""),
            confidence=request.POST.get("confidence", ""),
            top=request.POST.get("top", ""),
        )
    except ValidationError as invalid:
        messages.error(request, "Stop rule not saved: " + " ".join(invalid.messages))
        return redirect(_back(request, campaign))
    campaign = stopping.set_stop_rule(campaign=campaign, settings=chosen, by=request.user)
    described = stopping.describe_rule(chosen.rule, chosen.confidence, chosen.top)
    messages.success(request, f"Stop rule: {described}.")
    return redirect(_back(request, campaign))


@require_POST
@login_required
def resume(request, pk):
    """Hand out pairs again after the stop rule paused the campaign."""
    campaign = get_campaign_for_lead(request.user, pk)
    _, resumed = stopping.resume_judging(campaign=campaign, by=request.user)
    if not resumed:
        messages.info(request, stopping.MESSAGES["not_paused"])
    else:
        messages.success(
            request,
            "Judging resumed: judges get their next pairs again. The stop rule stays quiet "
            "until you set a rule again.",
        )
    return redirect(_back(request, campaign))
