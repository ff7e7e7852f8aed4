from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from config.htmx import is_htmx
from jobs.models import Job


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
