from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from common.htmx import is_htmx
from jobs.models import Job
from jobs.services import JobNotRetryable, retry_job


def _get_job_for_user(request, pk) -> Job:
    job = get_object_or_404(Job, pk=pk)
    # A job shows its file's errors: only its owner (and admins) may see it.
    if job.created_by_id != request.user.pk and not request.user.is_superuser:
        raise Http404
    return job


@require_GET
@login_required
def job_detail(request, pk):
    job = _get_job_for_user(request, pk)
    template = "jobs/job.html#progress" if is_htmx(request) else "jobs/job.html"
    return render(request, template, {"job": job})


@require_POST
@login_required
def job_retry(request, pk):
    """Start again a job that crashed or whose worker died; back to its page either way."""
    job = _get_job_for_user(request, pk)
    try:
        retry_job(job=job)
    except JobNotRetryable as refused:
        messages.error(request, str(refused))
    return redirect(job)
