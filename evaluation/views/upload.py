"""Uploading runs in the browser: several files at once (dropped or chosen, plain or gzip)
for one system, each imported and scored by its own background job; the status page shows
every job's live progress bar and, when done, its result or its file:line errors."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from accounts.forms import team_picker
from accounts.services.roles import Role, has_role
from common.htmx import is_htmx
from common.ids import parse_id
from evaluation import dashboards, forms, services, tasks
from evaluation.access import visible_runs
from evaluation.models import Run
from evaluation.services import sha256_of
from evaluation.services.runs import default_run_name
from evaluation.views.common import qrels_context, read_scoring
from jobs.models import Job
from jobs.services import drop_staged, stage_upload, start_job

JOB_KIND = "evaluation.import_and_score"

MESSAGES = {
    "duplicate": services.MESSAGES["duplicate_run"],
    "duplicate_elsewhere": "{filename}: this file is stored already, in a team you are not in.",
    "duplicate_in_batch": "{filename}: the same file as {other} in this upload; sent once.",
    "name_taken": services.MESSAGES["run_name_taken"],
    "nothing_sent": "No file was sent: every one was refused (see above).",
}


def require_engineer(user) -> None:
    if not has_role(user, Role.ENGINEER):
        raise PermissionDenied("Only engineers upload runs.")


@require_http_methods(["GET", "POST"])
@login_required
def run_upload(request):
    require_engineer(request.user)
    chosen = scoring = None
    if request.method == "POST":
        form = forms.RunUploadForm(request.POST, request.FILES, user=request.user)
        if form.is_valid():
            jobs = _start_jobs(request, form)
            if jobs:
                ids = ",".join(str(job.pk) for job in jobs)
                query = form.scoring.query(jobs=ids) if form.scoring else f"?jobs={ids}"
                return redirect(reverse("evaluation:upload-status") + query)
            form.add_error(None, MESSAGES["nothing_sent"])
        status = 400
    else:
        # Coming from a dashboard, the scoring it showed is the default here; else the qrels
        # version chosen last, else the one most runs are scored against (never merely the
        # newest: a 5-topic campaign just published must not become every new run's qrels).
        chosen, scoring = read_scoring(request.GET, request, user=request.user)
        form = forms.RunUploadForm(
            user=request.user,
            initial={
                "qrels": scoring.qrels.pk if scoring else None,
                "gain": scoring.options.gain if scoring else "linear",
                "relevance_level": scoring.options.relevance_level if scoring else 1,
                "complete": scoring.options.complete if scoring else False,
            },
        )
        form.scoring = scoring
        status = 200
    choices = forms.scoring_choices(form.scoring or _default_scoring(form), request.user)
    return render(
        request,
        "evaluation/upload.html",
        {
            "form": form,
            "systems": form.systems,
            **team_picker(request.user, form, Role.ENGINEER),
            "max_files": forms.MAX_FILES,
            **choices,
            "scoring": scoring,
            **qrels_context(request, chosen, scoring, versions=choices["qrels_versions"]),
        },
        status=status,
    )


def _default_scoring(form):
    """The measures to tick when the form has no valid scoring: those posted, else the
    dashboard set."""
    try:
        return dashboards.make_scoring(measure_specs=form.measure_specs or None, user=form.user)
    except dashboards.ScoringError:
        return None


def _start_jobs(request, form) -> list[Job]:
    """One job per acceptable file. A file already stored (same SHA-256), sent twice, or
    whose run name the system already has is refused here, with a message, and the others
    still go; the system is created only when some file goes."""
    system = form.chosen_system
    taken = forms.taken_run_names(system)
    seen: dict[str, str] = {}
    accepted = []
    for upload in form.cleaned_data["files"]:
        checksum = sha256_of(upload)
        existing = Run.objects.filter(checksum=checksum).select_related("system").first()
        name = default_run_name(upload.name)
        if existing is not None:
            theirs = not visible_runs(request.user, Run.objects.filter(pk=existing.pk)).exists()
            message = MESSAGES["duplicate_elsewhere"] if theirs else MESSAGES["duplicate"]
            messages.error(request, message.format(filename=upload.name, run=existing))
        elif checksum in seen:
            messages.warning(
                request,
                MESSAGES["duplicate_in_batch"].format(filename=upload.name, other=seen[checksum]),
            )
        elif name in taken:
            system_name = system.name if system else form.cleaned_data["new_name"]
            messages.error(
                request,
                MESSAGES["name_taken"].format(filename=upload.name, system=system_name, name=name),
            )
        else:
            seen[checksum] = upload.name
            taken.add(name)
            accepted.append(upload)
    if not accepted:
        return []
    scoring = form.scoring.task_params() if form.scoring else None
    jobs, staged_files = [], []
    system = form.system_name()
    try:
        with transaction.atomic():
            for upload in accepted:
                staged_files.append(stage_upload(upload, prefix="runs"))
                jobs.append(
                    start_job(
                        kind=JOB_KIND,
                        title=f"Import run {upload.name} of {system}",
                        user=request.user,
                        task=tasks.import_and_score_task,
                        staged=staged_files[-1],
                        filename=upload.name,
                        system=system,
                        description=form.cleaned_data["description"],
                        scoring=scoring,
                        new_system=form.new_system(),
                        team=form.team.pk,
                    )
                )
    except BaseException:
        for staged in staged_files:
            drop_staged(staged)
        raise
    return jobs


def _own_jobs(request, ids):
    jobs = Job.objects.filter(pk__in=ids, kind=JOB_KIND)
    if not request.user.is_superuser:
        jobs = jobs.filter(created_by=request.user)  # a job lists its file's errors
    return jobs


@require_GET
@login_required
def upload_status(request):
    """The jobs of one upload, each with its live progress bar."""
    ids = [parse_id(part) for part in request.GET.get("jobs", "").split(",")]
    ids = [i for i in ids if i is not None]
    jobs = sorted(_own_jobs(request, ids[: forms.MAX_FILES]), key=lambda job: job.pk)
    if not jobs:
        raise Http404("No such upload")
    return render(
        request,
        "evaluation/upload_status.html",
        {"jobs": jobs, "leaderboard_url": _leaderboard_url(request)},
    )


@require_GET
@login_required
def upload_job(request, pk):
    """One job's row, polled by htmx until the job is finished."""
    job = get_object_or_404(_own_jobs(request, [pk]))
    if not is_htmx(request):
        return redirect(job)
    return render(request, "evaluation/upload_status.html#job-row", {"job": job})


def _leaderboard_url(request) -> str:
    """The leaderboard with the upload's scoring (the status page's other parameters)."""
    query = request.GET.copy()
    query.pop("jobs", None)
    encoded = query.urlencode()
    return reverse("evaluation:leaderboard") + (f"?{encoded}" if encoded else "")
