"""The pool page: which topics have how many pairs, judged and lacking text, the pooled
documents without text, and pooling stored runs (a background job, annotation/tasks.py)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import forms, tasks
from annotation.access import get_campaign_for_lead
from annotation.models import AssignmentStatus, Document
from annotation.views.common import campaign_figures, paginate, plural, recent_jobs, sorting
from jobs.services import start_job

POOL_COLUMNS = [
    ("qid", "Topic", False),
    ("query", "Query", False),
    ("pairs", "Pairs", True),
    ("judged", "Judged", True),
    ("lacking", "Lacking text", True),
]


@require_GET
@login_required
def pool_detail(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    return render_pool(request, campaign)


def render_pool(request, campaign, status=200, **forms_given):
    """The pool page; a pooling or pairs form that failed is given back to show its errors."""
    key, descending, headers = sorting(request, POOL_COLUMNS, "qid")
    lacking_text = Q(pairs__document__text="", pairs__document__title="")
    topics = campaign.topics.annotate(
        pairs_n=Count("pairs", distinct=True),
        judged_n=Count(
            "pairs",
            filter=Q(pairs__assignments__status=AssignmentStatus.DONE),
            distinct=True,
        ),
        lacking_n=Count("pairs", filter=lacking_text, distinct=True),
    )
    field = {"qid": "qid", "query": "query", "pairs": "pairs_n", "judged": "judged_n"}.get(
        key, "lacking_n"
    )
    topics = topics.order_by(f"-{field}" if descending else field, "qid")
    lacking = (
        Document.objects.filter(campaign=campaign, text="", title="", pairs__isnull=False)
        .annotate(pair_count=Count("pairs"))
        .order_by("docno")
    )
    pooled_documents = (
        Document.objects.filter(campaign=campaign, pairs__isnull=False).distinct().count()
    )
    context = {
        "campaign": campaign,
        "figures": campaign_figures(campaign),
        "pooled_documents": pooled_documents,
        "topics_with_pairs": campaign.topics.filter(pairs__isnull=False).distinct().count(),
        "headers": headers,
        "topics": paginate(request, topics),
        "lacking": paginate(request, lacking, param="docs"),
        "pool_form": forms_given.get("pool_form") or forms.PoolRunsForm(campaign=campaign),
        "pairs_form": forms_given.get("pairs_form") or forms.PairsImportForm(),
        "recent_jobs": recent_jobs(
            request, campaign, kinds=("annotation.pool_runs", "annotation.import_pairs")
        ),
    }
    return render(request, "annotation/pool.html", context, status=status)


@require_POST
@login_required
def pool_from_runs(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.PoolRunsForm(request.POST, campaign=campaign)
    if not form.is_valid():
        return render_pool(request, campaign, status=400, pool_form=form)
    runs = list(form.cleaned_data["runs"])
    depth = form.cleaned_data["depth"]
    job = start_job(
        kind="annotation.pool_runs",
        title=f"Pool {len(runs)} run{plural(len(runs))} at depth {depth} for {campaign.name}",
        user=request.user,
        task=tasks.pool_runs_job,
        total=len(runs) + 2,
        campaign_id=campaign.pk,
        run_ids=[run.pk for run in runs],
        depth=depth,
    )
    return redirect(job)
