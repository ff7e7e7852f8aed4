"""The dashboard pages: the measures, the leaderboard, a topic across runs, comparisons, and
the two actions they offer (scoring runs with new options, sending
unjudged documents to judging). Leads and engineers read them (a judge must not learn which
system retrieved what); engineers score; a campaign's lead sends pairs to it.

Every page takes the scoring from its query string (evaluation.forms.ScoringForm) and names
it; the numbers come from evaluation.dashboards."""

from __future__ import annotations

import dataclasses

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from accounts.services.roles import Role, has_role
from common.ids import MAX_ID, parse_ids
from evaluation import dashboards, measures, services, tasks
from evaluation.access import visible_runs
from evaluation.analysis.pool_fairness import MAX_DEPTH
from evaluation.dashboards.leaderboard import is_judged
from evaluation.judging import judging
from evaluation.measures import reference
from evaluation.models import Run
from evaluation.services import schedules
from evaluation.trec import leaderboards as formats
from evaluation.views.common import (
    MAX_K,
    bounds_or_none,
    int_param,
    no_scoring,
    read_scoring,
    require_reader,
    scoring_context,
    sender_context,
)
from jobs.services import start_job
from jobs.services.limits import TooLargeForRequest

TOPICS_PER_PAGE = 100
ALERTS_SHOWN = 5  # open schedule alerts in the leaderboard's banner

MESSAGES = {
    "sent": "Sent {n:,} unjudged pair{s} to {campaign}: {added:,} new in its pool, {already:,} already there.",
    "nothing_unjudged": "Every document in the top {k} is judged in {qrels}: nothing to send.",
    "missing_topics": (
        "{n:,} pair{s} left out: {campaign} has no topic {qids}. Import those topics into the "
        "campaign first."
    ),
    "bad_k": "k is a whole number from 1 to {max}.",
    "choose_runs": "Choose a baseline and at least one other run.",
}


# --- measures ------------------------------------------------------------------------------


@require_GET
@login_required
def measures_page(request):
    """Every measure: its names in both dialects, parameters, formula, and how ties,
    unjudged documents and -c affect it (what `evaluate --list-measures` prints)."""
    require_reader(request.user)
    return render(request, "evaluation/measures.html", {"measures": reference.available()})


# --- leaderboard ---------------------------------------------------------------------------


@require_GET
@login_required
def leaderboard(request):
    require_reader(request.user)
    form, scoring = read_scoring(request.GET, request, user=request.user)
    if scoring is None:
        return no_scoring(request, "evaluation/leaderboard.html", form)
    board = dashboards.build_leaderboard(scoring, sort=request.GET.get("sort", ""))
    headers = _headers(scoring, board)
    show_bounds = request.GET.get("bounds") == "1"
    bounds = (
        {row.run.pk: bounds_or_none(scoring, row.run, board.chart_measure) for row in board.rows}
        if show_bounds
        else None
    )
    wanted_depth = int_param(request.GET.get("depth"), high=MAX_DEPTH)
    fairness_depth, depth_source = dashboards.fairness_depth(scoring, wanted_depth)
    fairness = (
        dashboards.build_fairness(
            scoring,
            board.chart_measure,
            depth=fairness_depth,
            evaluations=[row.evaluation.pk for row in board.rows],
            resolved=True,
        )
        if board.rows
        else None
    )
    runs = [row.run for row in board.rows]
    return render(
        request,
        "evaluation/leaderboard.html",
        {
            "board": board,
            # The certified nDCG@10 of the runs on the board, when its qrels were published
            # by a certified campaign the user leads, and the settled pairs (issue 33).
            "certified": [
                (b, b.pairs_among({r.pk for r in runs}))
                for b in judging().certified_boards(request.user, runs, qrels=scoring.qrels)
            ]
            if runs
            else [],
            "fairness": fairness,
            "fairness_rows": (
                [(row.run, fairness.rows.get(row.run.pk)) for row in board.rows] if fairness else []
            ),
            "fairness_depth": fairness_depth,
            "fairness_depth_from_pool": depth_source == services.fairness.DEPTH_FROM_POOL,
            "fairness_max_depth": MAX_DEPTH,
            "can_test_fairness": len(board.rows) >= 2,
            "headers": headers,
            "chart": board.chart() if board.rows else None,
            # The open alerts of the reader's scheduled evaluations on these qrels (a banner).
            "schedule_alerts": list(
                schedules.open_alerts(request.user, qrels=scoring.qrels)[:ALERTS_SHOWN]
            ),
            "judged_limit": f"{dashboards.JUDGED_WARNING:.0%}",
            "intervals": services.describe_intervals(),
            "judged_columns": " and ".join(
                measures.display_name(name) for name in board.columns if is_judged(name)
            ),
            "query": scoring.query(),
            "runs_for_compare": [row.run for row in board.rows],
            # An empty board (a version just published, say): where the runs are scored.
            "scored_elsewhere": _scored_elsewhere(scoring) if not board.rows else None,
            "bounds": bounds,
            "download_layouts": formats.DOWNLOAD_LAYOUTS,
            "bounds_url": scoring.query(
                sort=request.GET.get("sort"), bounds=None if show_bounds else 1
            ),
            **scoring_context(
                request,
                form,
                scoring,
                sort=request.GET.get("sort"),
                bounds=1 if show_bounds else None,
            ),
        },
    )


def _scored_elsewhere(scoring):
    """The version most runs are scored against, when it is not the page's: (its label,
    this page's address on it), or None."""
    qrels, reason = dashboards.choose_qrels(user=scoring.viewer)
    if (
        qrels is None
        or qrels.pk == scoring.qrels.pk
        or reason != dashboards.QrelsReason.MOST_SCORED
    ):
        return None
    return qrels, dataclasses.replace(scoring, qrels=qrels).query()


def _headers(scoring, board) -> list[dict]:
    """Sort links: a click sorts by the column (measures largest first), again reverses.
    The measures in the page's order (judged@k first, Leaderboard.columns)."""
    columns = [("system", "System", None)] + [
        (name, measures.display_name(name), name) for name in board.columns
    ]
    headers = []
    for key, label, title in columns:
        if key == board.sort:
            target = key if board.descending else f"-{key}"
            aria = "descending" if board.descending else "ascending"
        else:
            target, aria = (key if key == "system" else f"-{key}"), ""
        headers.append(
            {
                "key": key,
                "label": label,
                "title": title,
                "url": scoring.query(sort=target),
                "aria_sort": aria,
            }
        )
    return headers


@require_POST
@login_required
def score_runs(request):
    """Score runs (those chosen, else every run not yet scored) with the posted scoring:
    one background job, whose page links back to the leaderboard."""
    if not has_role(request.user, Role.ENGINEER):
        raise PermissionDenied("Only engineers score runs.")
    form, scoring = read_scoring(request.POST, user=request.user)
    if scoring is None:
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("evaluation:leaderboard")
    chosen = parse_ids(request.POST.getlist("runs"))
    # The runs of the teams where the user is an engineer (who scores).
    mine = visible_runs(request.user, Run.objects.all(), Role.ENGINEER)
    runs = dashboards.unscored_runs(scoring, mine.filter(pk__in=chosen) if chosen else mine)
    if not runs:
        return redirect(reverse("evaluation:leaderboard") + scoring.query())
    job = start_job(
        kind="evaluation.score_runs",
        title=f"Score {len(runs)} run{'s' if len(runs) != 1 else ''} against {scoring.qrels.label}",
        user=request.user,
        task=tasks.score_runs_task,
        total=len(runs),
        runs=[run.pk for run in runs],
        scoring=scoring.task_params(),
    )
    return redirect(job)


@require_POST
@login_required
def pool_fairness(request):
    """Start the leave-one-run-out test of the runs scored with the posted scoring (a
    background job, whose page links back to the leaderboard). Leads and engineers."""
    require_reader(request.user)
    form, scoring = read_scoring(request.POST, user=request.user)
    if scoring is None:
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect("evaluation:leaderboard")
    depth = int_param(request.POST.get("depth"), high=MAX_DEPTH)
    job = start_job(
        kind="evaluation.analysis.pool_fairness",
        title=f"Leave each run out of the pool of {scoring.qrels.label}",
        user=request.user,
        task=tasks.pool_fairness_task,
        scoring=scoring.task_params(),
        depth=depth,
    )
    return redirect(job)


# --- a topic's page ------------------------------------------------------------------------


@require_GET
@login_required
def topic_detail(request, qid):
    require_reader(request.user)
    form, scoring = read_scoring(request.GET, request, user=request.user)
    run_ids = parse_ids(request.GET.getlist("runs"))
    k = int_param(request.GET.get("k"))
    keep = {"measure": request.GET.get("measure"), "k": k, "runs": run_ids}
    if scoring is None:
        return no_scoring(request, "evaluation/topic.html", form, qid=qid)
    try:
        view = dashboards.build_topic(
            scoring,
            qid,
            user=request.user,
            measure=request.GET.get("measure"),
            k=k,
            run_ids=run_ids,
        )
    except LookupError:
        raise Http404(f"No topic {qid}") from None
    grades = sorted(
        {*view.grades, *(d.grade for r in view.runs for d in r.top or [] if d.grade is not None)}
    )
    return render(
        request,
        "evaluation/topic.html",
        {
            "qid": qid,
            "view": view,
            "listed_runs": [r for r in view.runs if r.top is not None],
            "grade_legend": list(range(max(0, min(grades, default=0)), max(grades, default=0) + 1)),
            "measure_names": [(n, measures.display_name(n)) for n in scoring.names],
            **scoring_context(request, form, scoring, **keep),
            **sender_context(request.user),
        },
    )


@require_GET
@login_required
def document_text(request):
    """A document's text from a campaign the user leads, for the topic page (htmx fragment).
    404, as from the API, when none of their campaigns holds it: the answer is the same
    whether another lead's campaign has the document or no campaign does (static/js/
    dashboards.js shows that answer in the panel too)."""
    require_reader(request.user)
    docno = request.GET.get("docno", "")
    document = (
        dashboards.find_document(request.user, docno, request.GET.get("qid", "")) if docno else None
    )
    return render(
        request,
        "evaluation/topic.html#document",
        {"docno": docno, "document": document},
        status=200 if document is not None else 404,
    )


# --- comparisons ---------------------------------------------------------------------------


@require_GET
@login_required
def compare(request):
    """Baseline against one or several runs on one measure: deltas, tests, intervals."""
    require_reader(request.user)
    form, scoring = read_scoring(request.GET, request, user=request.user)
    baseline_id = int_param(request.GET.get("baseline"), high=MAX_ID)
    other_ids = parse_ids(request.GET.getlist("runs"))
    keep = {"baseline": baseline_id, "runs": other_ids, "measure": request.GET.get("measure")}
    if scoring is None:
        return no_scoring(request, "evaluation/compare.html", form)
    chosen = scoring.runs(trials=True).select_related("system", "search")
    baseline = chosen.filter(pk=baseline_id).first()
    others = list(chosen.filter(pk__in=other_ids))
    all_runs = list(scoring.runs().select_related("system").order_by("system__name", "name"))
    # A sandbox trial's runs are in no list; the pickers still show them when compared.
    all_runs += [run for run in [baseline, *others] if run is not None and run not in all_runs]
    context = {
        "all_runs": all_runs,
        "baseline_id": baseline_id,
        "other_ids": other_ids,
        "measure_names": [(n, measures.display_name(n)) for n in scoring.names],
        "keep_measure": request.GET.get("measure"),
        **scoring_context(request, form, scoring, **keep),
    }
    if baseline is None or not [r for r in others if r.pk != baseline.pk]:
        if request.GET.get("baseline") or other_ids:
            context["problem"] = MESSAGES["choose_runs"]
        return render(request, "evaluation/compare.html", context)
    try:
        view = dashboards.build_comparison(
            scoring, baseline, others, measure=request.GET.get("measure")
        )
    except dashboards.NotScored as error:
        context.update(problem=str(error), unscored=error.runs)
    except ValueError as error:
        context["problem"] = str(error)
    else:
        chosen = [baseline, *others]
        names = {run.pk: str(run) for run in chosen}
        context.update(
            view=view,
            charts=[(f"deltas-{i}", c.chart()) for i, c in enumerate(view.contrasts)],
            permutations=dashboards.PERMUTATIONS,
            # The runs' certified nDCG@10 on campaigns the user leads, and which of their
            # pairs are settled (issue 33).
            certified=[
                (board, [(names[c.run], c) for c in board.runs], board.pairs_among(names))
                for board in judging().certified_boards(request.user, chosen)
            ],
        )
    return render(request, "evaluation/compare.html", context)


# --- closing the loop ----------------------------------------------------------------------


@require_POST
@login_required
def send_unjudged(request):
    """Add the unjudged documents of a run's top k (every topic), or of every scored run's
    top k for one topic, to a campaign the user leads. Topics the campaign lacks are left
    out and named."""
    campaign = judging().campaign_for_lead(
        request.user, int_param(request.POST.get("campaign"), high=MAX_ID) or 0
    )
    _, scoring = read_scoring(request.POST, user=request.user)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, {request.get_host()}, request.is_secure()):
        back = reverse("evaluation:leaderboard")
    k = int_param(request.POST.get("k"))
    if scoring is None or k is None:
        messages.error(
            request, MESSAGES["bad_k"].format(max=MAX_K) if k is None else "Bad options."
        )
        return redirect(back)
    run_id = int_param(request.POST.get("run"), high=MAX_ID)
    qid = request.POST.get("qid", "")
    if run_id is None and not qid:
        raise Http404("Name a run or a topic")
    run = get_object_or_404(scoring.runs(), pk=run_id) if run_id is not None else None
    pairs = dashboards.unjudged_pairs(scoring, k=k, run=run, qid=qid)
    runs = [run] if run is not None else dashboards.scored_runs(scoring)
    return send_and_report(
        request, scoring=scoring, campaign=campaign, k=k, pairs=pairs, back=back, runs=runs
    )


def send_and_report(request, *, scoring, campaign, k: int, pairs, back: str, runs=()):
    """Send unjudged (qid, docno) pairs to ``campaign``'s pool and say what happened: how
    many were added or already there, and which topics the campaign lacks. Redirects back."""
    if not pairs:
        messages.info(request, MESSAGES["nothing_unjudged"].format(k=k, qrels=scoring.qrels.label))
        return redirect(back)
    try:
        sent = services.send_unjudged_to_judging(campaign=campaign, pairs=pairs, runs=list(runs))
    except TooLargeForRequest as refused:
        messages.error(request, str(refused))
        return redirect(back)
    n = sent.added + sent.already
    if n:
        messages.success(
            request,
            MESSAGES["sent"].format(
                n=n,
                s="" if n == 1 else "s",
                campaign=campaign.name,
                added=sent.added,
                already=sent.already,
            ),
        )
    if sent.missing_qids:
        shown = ", ".join(sent.missing_qids[:10]) + ("…" if len(sent.missing_qids) > 10 else "")
        messages.warning(
            request,
            MESSAGES["missing_topics"].format(
                n=sent.left_out,
                s="" if sent.left_out == 1 else "s",
                campaign=campaign.name,
                qids=shown,
            ),
        )
    return redirect(back)
