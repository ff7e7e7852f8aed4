"""The pool page: which topics have how many pairs, judged and lacking text, the pooled
documents without text, pooling stored runs (a background job, annotation/tasks.py), and
marking one pair as a calibration (gold) pair with a known grade."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count, F, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import forms, services, tasks
from annotation.access import get_campaign_for_lead
from annotation.models import Document, Pair, TopicTally
from annotation.views.common import campaign_figures, paginate, plural, recent_jobs, sorting
from jobs.services import start_job

MESSAGES = {
    "gold_marked": (
        "{qid} × {docno} is a gold pair with grade {grade}: every judge gets it, unmarked "
        "({assigned} new assignment{s})."
    ),
    "gold_unmarked": "{qid} × {docno} is an ordinary pair again; its judges' grades stay.",
    "not_gold": "{qid} × {docno} was not a gold pair; nothing changed.",
}

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
    # Pairs and pairs graded by at least one judge from the topics' tallies (not every
    # pair); pairs lacking text counted from the documents lacking it (a partial index).
    lacking_pairs = (
        Pair.objects.filter(topic=OuterRef("pk"), document__text="", document__title="")
        .order_by()
        .values("topic")
        .annotate(n=Count("pk"))
        .values("n")
    )
    topics = campaign.topics.annotate(
        pairs_n=Coalesce(F("tally__pairs"), 0),
        judged_n=Coalesce(F("tally__judged"), 0),
        lacking_n=Coalesce(Subquery(lacking_pairs, output_field=IntegerField()), 0),
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
    # Distinct documents among the pairs' (a document can be pooled for several topics).
    pooled_documents = (
        Pair.objects.filter(campaign=campaign).values("document_id").distinct().count()
    )
    context = {
        "campaign": campaign,
        "figures": campaign_figures(campaign),
        "pooled_documents": pooled_documents,
        "topics_with_pairs": TopicTally.objects.filter(campaign=campaign, pairs__gt=0).count(),
        "headers": headers,
        "topics": paginate(request, topics),
        "lacking": paginate(request, lacking, param="docs"),
        "pool_form": forms_given.get("pool_form") or forms.PoolRunsForm(campaign=campaign),
        "pairs_form": forms_given.get("pairs_form") or forms.PairsImportForm(),
        "gold_form": forms_given.get("gold_form") or forms.GoldPairForm(campaign=campaign),
        "gold_pairs": campaign.pairs.filter(gold_grade__isnull=False).count(),
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


@require_POST
@login_required
def pool_gold(request, pk):
    """Mark one pool pair as a gold pair with a known grade, change its grade, or unmark it."""
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.GoldPairForm(request.POST, campaign=campaign)
    if not form.is_valid():
        return render_pool(request, campaign, status=400, gold_form=form)
    pair, grade = form.cleaned_data["pair"], form.cleaned_data["grade"]
    names = {"qid": pair.topic.qid, "docno": pair.document.docno}
    if grade is None and pair.gold_grade is None:
        messages.info(request, MESSAGES["not_gold"].format(**names))
        return redirect("annotation:pool-detail", pk=campaign.pk)
    try:
        change = services.mark_gold(campaign=campaign, pair_id=pair.pk, grade=grade)
    except ValidationError as error:
        form.add_error("grade", error)
        return render_pool(request, campaign, status=400, gold_form=form)
    if grade is None:
        messages.success(request, MESSAGES["gold_unmarked"].format(**names))
    else:
        messages.success(
            request,
            MESSAGES["gold_marked"].format(
                **names, grade=grade, assigned=change.assigned, s=plural(change.assigned)
            ),
        )
    return redirect("annotation:pool-detail", pk=campaign.pk)
