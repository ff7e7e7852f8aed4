"""A leaderboard downloaded in the TREC ecosystem's layouts, and one computed elsewhere
uploaded and checked against ours (issue 17, part 5). Leads and engineers, as every
dashboard; the layouts are evaluation.trec.leaderboards'."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from evaluation import measures
from evaluation.dashboards import leaderboard_io, rankings
from evaluation.trec import leaderboards as formats
from evaluation.views.common import (
    int_param,
    no_scoring,
    read_scoring,
    require_reader,
    scoring_context,
)

DIFFERENCES_SHOWN = 200


@require_GET
@login_required
def leaderboard_download(request):
    """Every scored run's per-topic and "all" values in ``layout``."""
    require_reader(request.user)
    layout = request.GET.get("layout", "")
    _, scoring = read_scoring(request.GET, user=request.user)
    if layout not in formats.DOWNLOAD_LAYOUTS:
        return HttpResponse(
            leaderboard_io.MESSAGES["download_layout"], status=400, content_type="text/plain"
        )
    if scoring is None:
        return HttpResponse("Bad scoring options.", status=400, content_type="text/plain")
    text = leaderboard_io.download(scoring, layout)
    response = HttpResponse(
        text, content_type=formats.CONTENT_TYPES.get(layout, "text/plain; charset=utf-8")
    )
    name = f"leaderboard-{scoring.qrels.name}-v{scoring.qrels.version}-{layout}.{formats.SUFFIXES[layout]}"
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
    response["Content-Disposition"] = f'attachment; filename="{safe}"'
    return response


@require_http_methods(["GET", "POST"])
@login_required
def leaderboard_check(request):
    """Upload a leaderboard computed elsewhere and see where its numbers differ from ours."""
    require_reader(request.user)
    params = request.POST if request.method == "POST" else request.GET
    form, scoring = read_scoring(params, user=request.user)
    if scoring is None:
        return no_scoring(request, "evaluation/leaderboard_check.html", form)
    k = int_param(params.get("k"))
    context = {
        "layouts": formats.LAYOUTS,
        "layout": params.get("layout", "tot"),
        "measure": params.get("measure") or "ndcg_cut_10",
        "measure_names": [(name, measures.display_name(name)) for name in scoring.names],
        "k": k,
        **scoring_context(request, form, scoring),
    }
    if request.method == "GET":
        return render(request, "evaluation/leaderboard_check.html", context)
    upload = request.FILES.get("file")
    layout = params.get("layout", "")
    problem = None
    if layout not in formats.LAYOUTS:
        problem = leaderboard_io.MESSAGES["layout"]
    elif upload is None:
        problem = leaderboard_io.MESSAGES["empty"]
    elif upload.size > leaderboard_io.MAX_UPLOAD_BYTES:
        problem = leaderboard_io.MESSAGES["too_big"]
    if problem:
        context["problem"] = problem
        return render(request, "evaluation/leaderboard_check.html", context, status=400)
    try:
        result, ranking = leaderboard_io.check_with_rankings(
            scoring,
            upload.read(),
            layout,
            filename=upload.name,
            measure=params.get("measure"),
            k=k,
        )
    except formats.LeaderboardFormatError as error:
        context.update(errors=error.errors, total=error.total, filename=upload.name)
        return render(request, "evaluation/leaderboard_check.html", context, status=400)
    except rankings.RankingError as error:
        context["problem"] = str(error)
        return render(request, "evaluation/leaderboard_check.html", context, status=400)
    context.update(
        result=result,
        filename=upload.name,
        differences=result.differences[:DIFFERENCES_SHOWN],
        ranking=ranking,
    )
    return render(request, "evaluation/leaderboard_check.html", context)
