"""The home page and the runs: the list, a run's page with its topics (per-topic values,
chart, residuals) and their CSV, and the run file's download."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from common.exports import csv_safe
from evaluation import dashboards, measures, services
from evaluation.access import readable_qrels, visible_evaluations, visible_runs, visible_systems
from evaluation.judging import judging
from evaluation.models import Evaluation, QrelsVersion, Run, System
from evaluation.views.common import (
    bounds_or_none,
    int_param,
    is_reader,
    read_scoring,
    require_reader,
    scoring_context,
    sender_context,
)

PAGE_SIZE = 50
TOPICS_PER_PAGE = 100


@require_GET
@login_required
def home(request):
    versions = readable_qrels(request.user, QrelsVersion.objects.all())
    context = {"qrels_count": versions.count(), "is_reader": False}
    # Systems, runs and evaluations are for leads and engineers only: judging is blind to
    # which system retrieved a document, so a judge must not even see the run names.
    if is_reader(request.user):
        user = request.user
        runs = visible_runs(user, Run.objects.listed())
        evaluations = visible_evaluations(user, Evaluation.objects.exclude(run__search__trial=True))
        context.update(
            is_reader=True,
            system_count=visible_systems(user, System.objects.all()).count(),
            run_count=runs.count(),
            recent_evaluations=evaluations.select_related("run__system", "qrels").order_by(
                "-created_at"
            )[:8],
            recent_runs=runs.select_related("system", "search")
            .defer("search__queries", "search__snapshot")
            .order_by("-uploaded_at")[:5],
        )
    return render(request, "home.html", context)


@require_GET
@login_required
def run_list(request):
    require_reader(request.user)
    search = request.GET.get("q", "")[:200]
    runs = services.search_runs(
        visible_runs(
            request.user,
            Run.objects.listed()
            .select_related("system", "uploaded_by", "search")
            .defer("search__queries", "search__snapshot"),
        ),
        search,
    )
    page = Paginator(runs, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "search": search,
        "page_query": urlencode({"q": search}) if search else "",
    }
    return render(request, "evaluation/run_list.html", context)


@require_GET
@login_required
def run_download(request, pk):
    require_reader(request.user)
    run = get_object_or_404(visible_runs(request.user, Run.objects.all()), pk=pk)
    return FileResponse(
        run.original_file.open("rb"), as_attachment=True, filename=run.original_filename
    )


@require_GET
@login_required
def run_detail(request, pk):
    """The run's file and stored evaluations, and with the page's scoring its per-topic
    values: sorted bar chart, histogram, and the topics worst first."""
    require_reader(request.user)
    runs = Run.objects.select_related("system", "uploaded_by", "search")
    run = get_object_or_404(visible_runs(request.user, runs), pk=pk)
    context = {
        "run": run,
        "evaluations": run.evaluations.select_related("qrels").defer("per_topic"),
        # Its certified nDCG@10 on campaigns the user leads that pooled it, and where it
        # stands against each other pooled run (settled or not), issue 33.
        "certified": [
            (board, board.runs[0], board.standing(run.pk))
            for board in judging().certified_boards(request.user, [run])
            if board.runs
        ],
    }
    form, scoring = read_scoring(request.GET, request, user=request.user)
    k = int_param(request.GET.get("k"))
    context.update(scoring_context(request, form, scoring, measure=request.GET.get("measure"), k=k))
    if scoring is not None:
        try:
            topics = dashboards.build_run_topics(
                run, scoring, measure=request.GET.get("measure"), k=k
            )
        except dashboards.NotScored:
            context["not_scored"] = True
        else:
            page = Paginator(topics.rows, TOPICS_PER_PAGE).get_page(request.GET.get("page"))
            bounds = bounds_or_none(scoring, run, topics.measure)
            fairness = dashboards.build_fairness(scoring, topics.measure)
            context.update(
                fairness=fairness,
                fairness_badge=fairness.badge(run.pk) if fairness else None,
                topics=topics,
                page=page,
                rows=dashboards.with_queries(list(page.object_list), user=request.user),
                bounds=bounds,
                topic_bounds=bounds.per_topic if bounds else {},
                chart=topics.chart(),
                mean=topics.evaluation.means[topics.measure],
                interval=topics.evaluation.intervals.get(topics.measure),
                measure_names=[(name, measures.display_name(name)) for name in scoring.names],
                **sender_context(request.user),
            )
            context["previous_url"] = (
                scoring.query(measure=topics.measure, k=topics.k, page=page.previous_page_number())
                if page.has_previous()
                else None
            )
            context["next_url"] = (
                scoring.query(measure=topics.measure, k=topics.k, page=page.next_page_number())
                if page.has_next()
                else None
            )
    return render(request, "evaluation/run_detail.html", context)


@require_GET
@login_required
def run_topics_csv(request, pk):
    """Every topic of the run with every measure, worst first by the page's measure."""
    require_reader(request.user)
    run = get_object_or_404(visible_runs(request.user, Run.objects.select_related("system")), pk=pk)
    _, scoring = read_scoring(request.GET, user=request.user)
    if scoring is None:
        raise Http404("No scoring")
    try:
        topics = dashboards.build_run_topics(
            run, scoring, measure=request.GET.get("measure"), k=int_param(request.GET.get("k"))
        )
    except dashboards.NotScored:
        raise Http404("Not scored with these options") from None
    rows = dashboards.with_queries(topics.rows, user=request.user)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    names = scoring.names
    writer.writerow(["qid", "query", *names, f"unjudged_in_top_{topics.k}"])
    for row in rows:
        values = topics.values[row.qid]
        writer.writerow(
            [
                csv_safe(row.qid),
                csv_safe(row.query),
                *(repr(values[n]) for n in names),
                row.unjudged,
            ]
        )
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    filename = f"{run.system.name}-{run.name}-{scoring.qrels.name}-v{scoring.qrels.version}"
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in filename)
    response["Content-Disposition"] = f'attachment; filename="{safe}-topics.csv"'
    return response
