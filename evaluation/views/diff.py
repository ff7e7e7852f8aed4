"""The run diff page (two runs side by side, topic by topic) and its "send the unjudged
documents of both top k to judging" action. Leads and engineers read it, as every run page;
a campaign's lead sends pairs to it. The numbers come from evaluation.dashboards.diff."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from common.ids import MAX_ID, parse_ids
from evaluation import dashboards, measures
from evaluation.analysis import rundiff
from evaluation.dashboards import diff
from evaluation.judging import judging
from evaluation.views.common import (
    MAX_K,
    int_param,
    no_scoring,
    read_scoring,
    require_reader,
    scoring_context,
    sender_context,
)
from evaluation.views.dashboards import MESSAGES, send_and_report

TOPICS_PER_PAGE = 100


def _pick_runs(params) -> tuple[int | None, int | None]:
    """``a`` and ``b``, or the leaderboard's form: ``baseline`` and the first other ticked run."""
    a = int_param(params.get("a"), high=MAX_ID) or int_param(params.get("baseline"), high=MAX_ID)
    b = int_param(params.get("b"), high=MAX_ID)
    if b is None:
        ticked = parse_ids(params.getlist("runs"))
        b = next((pk for pk in ticked if pk != a), None)
    return a, b


def _p(raw) -> float | None:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    return value if 0 < value < 1 else None


@require_GET
@login_required
def run_diff(request):
    """Run b against run a: topics most different first, one topic's lists side by side."""
    require_reader(request.user)
    form, scoring = read_scoring(request.GET, request, user=request.user)
    a_id, b_id = _pick_runs(request.GET)
    params = request.GET
    k = int_param(params.get("k"))
    depth = int_param(params.get("depth"))
    order = params.get("order") if params.get("order") in rundiff.ORDERS else "measure"
    p = _p(params.get("p")) or rundiff.DEFAULT_P
    qid = params.get("qid") or None
    keep = {"a": a_id, "b": b_id, "measure": params.get("measure"), "k": k, "depth": depth}
    keep.update(order=order, p=p if params.get("p") else None)
    if scoring is None:
        return no_scoring(request, "evaluation/diff.html", form)
    runs = (
        scoring.runs(trials=True)
        .select_related("system", "search")
        .in_bulk([pk for pk in (a_id, b_id) if pk])
    )
    all_runs = list(scoring.runs().select_related("system").order_by("system__name", "name"))
    # A sandbox trial's runs are in no list; the pickers still show them when they are diffed.
    all_runs += [run for run in runs.values() if run not in all_runs]
    # Before a choice, the form offers two different runs: a run against itself shows nothing.
    selected_a = a_id or (all_runs[0].pk if all_runs else None)
    selected_b = b_id or next((run.pk for run in all_runs if run.pk != selected_a), None)
    context = {
        "all_runs": all_runs,
        "a_id": a_id,
        "b_id": b_id,
        "selected_a": selected_a,
        "selected_b": selected_b,
        "order": order,
        "orders": list(diff.ORDER_LABELS.items()),
        "p": p,
        "measure_names": [(n, measures.display_name(n)) for n in scoring.names],
        "keep_measure": params.get("measure"),
        **scoring_context(request, form, scoring, **keep),
    }
    if a_id not in runs or b_id not in runs:
        if a_id or b_id:
            context["problem"] = (
                diff.MESSAGES["same_run"] if a_id == b_id else MESSAGES["choose_runs"]
            )
        return render(request, "evaluation/diff.html", context)
    try:
        view = diff.build_run_diff(
            scoring,
            runs[a_id],
            runs[b_id],
            measure=params.get("measure"),
            k=k,
            depth=depth,
            order=order,
            p=p,
            qid=qid,
        )
    except dashboards.NotScored as error:
        context.update(problem=str(error), unscored=error.runs)
        return render(request, "evaluation/diff.html", context)
    except diff.DiffError as error:
        context["problem"] = str(error)
        return render(request, "evaluation/diff.html", context, status=400)
    base = {**keep, "k": view.k, "depth": view.depth}
    page_number = params.get("page") or (view.position // TOPICS_PER_PAGE + 1)
    page = Paginator(view.topics, TOPICS_PER_PAGE).get_page(page_number)
    shown = view.shown
    context.update(
        view=view,
        page=page,
        totals=view.totals(),
        query=(
            dashboards.topic_queries(request.user, [view.qid]).get(view.qid, "") if view.qid else ""
        ),
        shown=shown,
        previous_url=scoring.query(**base, qid=view.previous_qid) if view.previous_qid else None,
        next_url=scoring.query(**base, qid=view.next_qid) if view.next_qid else None,
        page_urls={
            "previous": scoring.query(**base, qid=view.qid, page=page.previous_page_number())
            if page.has_previous()
            else None,
            "next": scoring.query(**base, qid=view.qid, page=page.next_page_number())
            if page.has_next()
            else None,
        },
        links=[(t, scoring.query(**base, qid=t.qid)) for t in page.object_list],
        moves=[(t, scoring.query(**base, qid=t.qid)) for t in view.biggest_moves],
        flipped=[(t, scoring.query(**base, qid=t.qid)) for t in view.flipped[:50]],
        grade_legend=list(range(0, 4)),
        **sender_context(request.user),
    )
    return render(request, "evaluation/diff.html", context)


@require_POST
@login_required
def run_diff_send(request):
    """Add the unjudged documents of both runs' top k (one topic, or every topic) to a
    campaign the user leads; topics the campaign lacks are left out and named."""
    campaign = judging().campaign_for_lead(
        request.user, int_param(request.POST.get("campaign"), high=MAX_ID) or 0
    )
    _, scoring = read_scoring(request.POST, user=request.user)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, {request.get_host()}, request.is_secure()):
        back = reverse("evaluation:run-diff")
    k = int_param(request.POST.get("k"))
    if scoring is None or k is None:
        messages.error(
            request, MESSAGES["bad_k"].format(max=MAX_K) if k is None else "Bad options."
        )
        return redirect(back)
    visible = scoring.runs()
    a = get_object_or_404(visible, pk=int_param(request.POST.get("a"), high=MAX_ID) or 0)
    b = get_object_or_404(visible, pk=int_param(request.POST.get("b"), high=MAX_ID) or 0)
    qid = request.POST.get("qid", "")
    pairs = diff.unjudged_of_both(scoring, a, b, k=k, qid=qid)
    return send_and_report(
        request, scoring=scoring, campaign=campaign, k=k, pairs=pairs, back=back, runs=[a, b]
    )
