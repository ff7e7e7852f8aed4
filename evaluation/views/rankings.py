"""Would a qrels version change the leaderboard? (issue 12 part 6, issue 17 part 4): pick two
qrels versions and a measure; the runs scored with both, ranked under each, and how far the
rankings agree (evaluation.dashboards.rankings). Leads and engineers, as every dashboard."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_GET

from common.ids import MAX_ID
from evaluation import measures, services
from evaluation.access import readable_qrels
from evaluation.dashboards import rankings
from evaluation.dashboards.scoring import make_scoring
from evaluation.models import QrelsVersion
from evaluation.views.common import int_param, require_reader

TOPICS_PER_PAGE = 50


@require_GET
@login_required
def qrels_rankings(request):
    require_reader(request.user)
    versions = list(readable_qrels(request.user, QrelsVersion.objects.all()))
    by_id = {q.pk: q for q in versions}
    old = by_id.get(int_param(request.GET.get("old"), high=MAX_ID) or 0)
    new = by_id.get(int_param(request.GET.get("new"), high=MAX_ID) or 0)
    measure = request.GET.get("measure") or "ndcg_cut_10"
    k = int_param(request.GET.get("k"))
    context = {
        "versions": versions,
        "old": old,
        "new": new,
        "measure": measure,
        "k": k,
        "measure_names": [
            (name, measures.display_name(name))
            for name in make_scoring(
                qrels=old or (versions[0] if versions else None),
                measure_specs=list(services.DASHBOARD_MEASURES),
            ).names
        ]
        if versions
        else [],
    }
    if old is None or new is None:
        return render(request, "evaluation/rankings.html", context)
    try:
        result = rankings.compare_qrels(old, new, measure=measure, k=k, user=request.user)
    except rankings.RankingError as error:
        context["problem"] = str(error)
        return render(request, "evaluation/rankings.html", context, status=400)
    context.update(
        result=result,
        display=measures.display_name(result.measure),
        **_topic_table(request.GET, result),
    )
    return render(request, "evaluation/rankings.html", context)


def _topic_table(params, result: rankings.RankingComparison) -> dict:
    """The per-topic rows sorted by ``tsort`` (``-`` first: descending; default the lowest
    tau-b first) and paginated by ``tpage``; the headers carry their sort links."""
    wanted = params.get("tsort") or "kendall"
    descending = wanted.startswith("-")
    key = wanted.lstrip("-")
    if key not in rankings.TOPIC_SORTS:
        key, descending = "kendall", False
    rows = rankings.sort_topics(result.worst_topics, key, descending=descending)
    page = Paginator(rows, TOPICS_PER_PAGE).get_page(params.get("tpage"))
    keep = [(name, value) for name, value in params.items() if name not in ("tsort", "tpage")]
    headers = []
    for name, label in [("qid", "Topic"), *result.topic_labels]:
        current = name == key
        flip = f"-{name}" if current and not descending else name
        headers.append(
            {
                "name": name,
                "label": label,
                "url": "?" + urlencode([*keep, ("tsort", flip)]) + "#per-topic",
                "aria_sort": ("descending" if descending else "ascending") if current else "",
            }
        )
    sort = f"-{key}" if descending else key
    return {
        "topic_page": page,
        "topic_headers": headers,
        "topic_page_query": "?" + urlencode([*keep, ("tsort", sort)]),
    }
