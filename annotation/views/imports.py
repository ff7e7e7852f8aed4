"""File imports into a campaign: topics and documents (forms on the detail page) and pairs
(on the pool page). The upload is staged and handed to a background job
(annotation/tasks.py); the page redirects to the job's live progress bar."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from annotation import forms, tasks
from annotation.access import get_campaign_for_lead
from annotation.services import campaign_files
from annotation.views.campaigns import render_detail
from annotation.views.pool import render_pool


@require_POST
@login_required
def topics_import(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.TopicsImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return render_detail(request, campaign, status=400, topics_form=form)
    return _start_import(
        request,
        campaign,
        form,
        what="topics",
        task=tasks.import_topics_job,
        fmt=form.cleaned_data["format"] or None,
    )


@require_POST
@login_required
def documents_import(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.DocumentsImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return render_detail(request, campaign, status=400, documents_form=form)
    return _start_import(
        request,
        campaign,
        form,
        what="documents",
        task=tasks.import_documents_job,
        fmt=form.cleaned_data["format"] or None,
    )


@require_POST
@login_required
def pairs_import(request, pk):
    campaign = get_campaign_for_lead(request.user, pk)
    form = forms.PairsImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return render_pool(request, campaign, status=400, pairs_form=form)
    return _start_import(request, campaign, form, what="pairs", task=tasks.import_pairs_job)


def _start_import(request, campaign, form, *, what: str, task, **params):
    job = campaign_files.start_import_job(
        campaign=campaign,
        upload=form.cleaned_data["file"],
        user=request.user,
        what=what,
        task=task,
        **params,
    )
    return redirect(job)
