"""Evaluation work that can take a while, run as background tasks (DESIGN.md, "Work that takes
time"): importing an uploaded run and scoring it right away, and scoring stored runs with a
new set of options.

Each task runs inside jobs.services.running, so the job row carries the progress bar, the
file's errors when it is refused, and the result when done. Task arguments are plain JSON
(ids, names, option values) so any task backend can carry them. An import reads the upload
staged in storage (jobs.services.stage_upload); running() deletes the staged file once the
job is over (succeeded or refused) and keeps it when the job crashed or its worker died, so
the job can be started again (jobs.services.retry_job).

Jobs store their task's import path (Job.task, the database queue's rows), so a task keeps
its name: migration jobs/0003 moved the paths of the tasks that lived in the former
evaluation/scoring_tasks.py.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.tasks import task
from django.urls import reverse

from common.uploads import max_upload_bytes
from evaluation import dashboards, measures, services
from evaluation.analysis import pool_fairness
from evaluation.background import SCHEDULE_FIRING, register_background
from evaluation.models import QrelsVersion, Run, SearchEndpoint, SearchRun
from evaluation.services import endpoint_runs, sandbox, schedule_runs
from evaluation.trec import TrecFormatError
from jobs.faults import pause_point
from jobs.services import JobFailed, Progress, running, start_job

MESSAGES = {
    "qrels_imported": "Imported {filename} as {qrels}: {n:,} grades.",
    "imported": "Imported {filename} as run {run}: {lines:,} lines, {topics:,} topics.",
    "scored": "Scored against {qrels}: {measure} {mean:.4f} (95% interval {low:.4f}–{high:.4f}).",
    "not_scored": "Not scored against {qrels}: {reason}",
    "qrels_gone": "the qrels version no longer exists.",
    "runs_scored": "Scored {n} run{s} against {qrels}.",
    "runs_failed": "{n} could not be scored: {details}",
    "trial_done": "{measure} over {topics:,} judged topics: {means}.",
    "fairness_done": (
        "Left each of {n} runs out of the pool at depth {depth}: the largest drop of "
        "{measure} is {drop:.4f}."
    ),
}


def import_staged_run(
    progress: Progress,
    *,
    staged: str,
    filename: str,
    system: str,
    name: str,
    description: str,
    new_system: dict | None = None,
    notices: list | None = None,
    team: int | None = None,
) -> Run:
    """services.import_run on the staged upload, a refused file raised as JobFailed; the
    file's notices (trec.Notice) are appended to ``notices``, if given.

    On a second attempt of the job, the file already stored by this job's owner is the run
    the first attempt imported before it was interrupted (e.g. while scoring): that run is
    the result, not a duplicate to refuse."""
    job = progress.job
    try:
        with default_storage.open(staged, "rb") as file:
            return services.import_run(
                source=file,
                filename=filename,
                system=system,
                name=name,
                description=description,
                user=job.created_by,
                max_bytes=max_upload_bytes(),
                new_system=new_system,
                notices=notices,
                team=team,
            )
    except TrecFormatError as error:
        raise JobFailed.not_imported(filename, error) from None
    except services.ImportRejected as rejected:
        earlier = rejected.existing
        if (
            job.attempt > 1
            and earlier is not None
            and earlier.uploaded_by_id == job.created_by_id
            and earlier.original_filename == filename
        ):
            return earlier
        raise JobFailed(str(rejected)) from None


def headline(evaluation, scoring: dashboards.Scoring) -> str:
    """One line naming the evaluation's main number with its interval."""
    name = dashboards.choose_measure(scoring.names, None)
    low, high = evaluation.intervals.get(name, (evaluation.means[name],) * 2)
    return MESSAGES["scored"].format(
        qrels=scoring.qrels.label,
        measure=measures.display_name(name),
        mean=evaluation.means[name],
        low=low,
        high=high,
    )


@task
def import_and_score_task(
    *,
    job_id: int,
    staged: str,
    filename: str,
    system: str,
    name: str = "",
    description: str = "",
    scoring: dict | None = None,
    new_system: dict | None = None,
    team: int | None = None,
) -> None:
    """Import the staged run file as a run of ``system`` (created if new), then, when
    ``scoring`` is given (``Scoring.task_params``), score it and compute its intervals. The job's
    result: {"run", "url" (the run's page with this scoring), "label", "summary"}; a run that
    imports but cannot be scored still succeeds, with the reason in "warning"; what the file
    holds that trec_eval accepts but its author may not mean is in "notices". The staged
    file is deleted when the job is over (jobs.services.running), kept for a retry if not."""
    with running(job_id) as progress:
        steps = 3 if scoring else 2
        progress.step(f"Reading and checking {filename}", done=0, total=steps)
        notices = []
        run = import_staged_run(
            progress,
            staged=staged,
            filename=filename,
            system=system,
            name=name,
            description=description,
            new_system=new_system,
            notices=notices,
            team=team,
        )
        summary = MESSAGES["imported"].format(
            filename=filename, run=run, lines=run.line_count, topics=run.topic_count
        )
        result = {"run": run.pk, "url": run.get_absolute_url(), "label": "See the run"}
        if notices:
            result["notices"] = [str(notice) for notice in notices]
        if scoring:
            progress.step(f"Scoring {run}", done=1)
            try:
                chosen = dashboards.Scoring.from_params(scoring)
            except QrelsVersion.DoesNotExist:
                result["warning"] = MESSAGES["not_scored"].format(
                    qrels=f"qrels {scoring['qrels']}", reason=MESSAGES["qrels_gone"]
                )
            except dashboards.ScoringError as error:  # options that no longer read
                result["warning"] = MESSAGES["not_scored"].format(
                    qrels=f"qrels {scoring['qrels']}", reason=error
                )
            else:
                result["url"] = run.get_absolute_url() + chosen.query()
                try:
                    evaluation = services.score_run(
                        run=run,
                        qrels=chosen.qrels,
                        measure_specs=list(chosen.specs),
                        options=chosen.options,
                    )
                except ValueError as error:  # e.g. no topic in common with the qrels
                    result["warning"] = MESSAGES["not_scored"].format(
                        qrels=chosen.qrels.label, reason=error
                    )
                else:
                    summary += " " + headline(evaluation, chosen)
                    result["evaluation"] = evaluation.pk
        progress.result = {**result, "summary": summary}


@task
def score_runs_task(*, job_id: int, runs: list[int], scoring: dict) -> None:
    """Score stored runs with ``scoring`` (``Scoring.task_params``), one after the other; the
    result links to the leaderboard with that scoring. Runs that cannot be scored (no topic
    in common with the qrels) are listed, and the others still scored."""
    with running(job_id) as progress:
        try:
            chosen = dashboards.Scoring.from_params(scoring)
        except QrelsVersion.DoesNotExist:
            raise JobFailed(MESSAGES["qrels_gone"]) from None
        except dashboards.ScoringError as error:
            raise JobFailed(str(error)) from None
        todo = list(Run.objects.filter(pk__in=runs).select_related("system"))
        failed = []
        for done, run in enumerate(todo):
            progress.step(
                f"Scoring {run} ({done + 1:,} of {len(todo):,})", done=done, total=len(todo)
            )
            try:
                services.score_run(
                    run=run,
                    qrels=chosen.qrels,
                    measure_specs=list(chosen.specs),
                    options=chosen.options,
                )
            except ValueError as error:
                failed.append(f"{run} ({error})")
        n = len(todo) - len(failed)
        summary = MESSAGES["runs_scored"].format(
            n=n, s="" if n == 1 else "s", qrels=chosen.qrels.label
        )
        if failed:
            summary += " " + MESSAGES["runs_failed"].format(
                n=len(failed), details="; ".join(failed)
            )
        progress.result = {
            "url": reverse("evaluation:leaderboard") + chosen.query(),
            "label": "See the leaderboard",
            "summary": summary,
        }


@task
def import_run_task(
    *,
    job_id: int,
    staged: str,
    filename: str,
    system: str,
    name: str = "",
    description: str = "",
) -> None:
    """Import the staged run file as a run of ``system`` (created if new): the work of
    import_and_score_task without scoring, which new uploads start directly.
    Kept under this name because jobs store their task's path (Job.task, the database
    queue's rows) and are started again by it (jobs.services.retry_job)."""
    import_and_score_task.call(
        job_id=job_id,
        staged=staged,
        filename=filename,
        system=system,
        name=name,
        description=description,
    )


@task
def import_qrels_task(
    *,
    job_id: int,
    staged: str,
    filename: str,
    name: str,
    description: str = "",
    team: int | None = None,
) -> None:
    """Import a staged TREC qrels file with more grades than a request may write
    (SYNC_WRITE_ROWS) as the next version of ``name``, as POST /api/v1/qrels/ does with a
    smaller one; the result names the version."""
    with running(job_id) as progress:
        progress.step(f"Reading and storing {filename}", done=0, total=1)
        try:
            with default_storage.open(staged, "rb") as file:
                qrels = services.import_qrels(
                    source=file,
                    filename=filename,
                    name=name,
                    description=description,
                    user=progress.job.created_by,
                    max_bytes=max_upload_bytes(),
                    team=team,
                )
        except TrecFormatError as error:
            raise JobFailed.not_imported(filename, error) from None
        except services.ImportRejected as rejected:
            raise JobFailed(str(rejected)) from None
        progress.result = {
            "url": reverse("evaluation:qrels-detail", args=[qrels.pk]),
            "label": "See the qrels",
            "summary": MESSAGES["qrels_imported"].format(
                filename=filename, qrels=qrels.label, n=qrels.judgment_count
            ),
            "qrels": qrels.pk,
        }


@task
def pool_fairness_task(*, job_id: int, scoring: dict, depth: int | None = None) -> None:
    """The leave-one-run-out test (services.compute_pool_fairness) of the runs scored with
    ``scoring`` (``Scoring.task_params``), stored for the leaderboard, run pages and the API;
    the result links to the leaderboard."""
    with running(job_id) as progress:
        try:
            chosen = dashboards.Scoring.from_params(scoring)
        except QrelsVersion.DoesNotExist:
            raise JobFailed(MESSAGES["qrels_gone"]) from None
        except dashboards.ScoringError as error:
            raise JobFailed(str(error)) from None
        try:
            row = services.compute_pool_fairness(
                qrels=chosen.qrels,
                key=chosen.key,
                measure_specs=list(chosen.specs),
                options=chosen.options,
                depth=depth,
                progress=lambda step, done, total: progress.step(step, done=done, total=total),
            )
        except ValueError as error:
            raise JobFailed(str(error)) from None
        name = dashboards.choose_measure(chosen.names, None)
        report = pool_fairness.FairnessReport.from_dict(row.report)
        progress.result = {
            "url": reverse("evaluation:leaderboard") + chosen.query(),
            "label": "See the leaderboard",
            "summary": MESSAGES["fairness_done"].format(
                n=len(report.runs),
                depth=row.depth,
                measure=measures.display_name(name),
                drop=report.largest_drop(name) if name in report.measures else 0.0,
            ),
        }


TRIAL_JOB_KIND = "evaluation.search_trial"


def start_search_trial(*, endpoint, user, plan: dict):
    """The job of a sandbox trial (services.sandbox.plan_trial's checked ``plan``), for the
    page, the API and anyone else who starts one."""
    edit = " with an edit" if plan["template"] else ""
    return start_job(
        kind=TRIAL_JOB_KIND,
        title=f"Sandbox trial of {endpoint.name}{edit}",
        user=user,
        task=search_trial_task,
        **{key: value for key, value in plan.items() if key != "endpoint"},
        endpoint_id=endpoint.pk,
    )


@task
def search_trial_task(*, job_id: int, endpoint_id: int, **plan) -> None:
    """A sandbox trial (evaluation.services.sandbox.run_trial): every arm asked and stored
    as a hidden run, scored; the result links to the trial's page. A second attempt finds
    the trial its first one kept, or starts the arms again (deleting what it left)."""
    with running(job_id) as progress:
        found = SearchEndpoint.objects.filter(pk=endpoint_id).first()
        if found is None:
            raise JobFailed("The search endpoint no longer exists.")
        progress.step(f"Asking {found.name}", done=0)
        try:
            trial = sandbox.run_trial(
                endpoint=found,
                user=progress.job.created_by,
                job_id=progress.job.pk,
                on_progress=lambda done, total: progress.step(
                    f"Asked {done:,} of {total:,} queries", done=done, total=total
                ),
                **plan,
            )
        except ValidationError as error:
            raise JobFailed(" ".join(error.messages)) from None
        name, table = sandbox.table(trial)
        means = ", ".join(
            f"{arm['label']} {mean:.4f}" for arm, mean in zip(trial.arms, table.means, strict=True)
        )
        progress.result = {
            "trial": trial.pk,
            "url": trial.get_absolute_url(),
            "label": "See the trial",
            "summary": MESSAGES["trial_done"].format(
                measure=measures.display_name(name), means=means, topics=len(table.rows)
            ),
        }


@task
def search_run_task(
    *,
    job_id: int,
    endpoint: int,
    k: int,
    campaign: int | None = None,
    qrels: int | None = None,
    system: str = "",
    name: str = "",
) -> None:
    """Ask a search endpoint every topic of a query set and store the answers as a run
    (evaluation.services.endpoint_runs.make_search_run). The result links to the run; failed
    queries are named in its summary. A second attempt of the job asks again (a live engine
    may answer differently) and stores a run of its own name, never the same row twice."""
    with running(job_id) as progress:
        found = SearchEndpoint.objects.filter(pk=endpoint).first()
        if found is None:
            raise JobFailed("The search endpoint no longer exists.")
        progress.step(f"Asking {found.name}", done=0)
        # A job started again after its worker died once its run was stored: that run is
        # the result (the row names its job, once), not a second run.
        made = SearchRun.objects.filter(job_id=progress.job.pk).select_related("run").first()
        try:
            made = made or endpoint_runs.make_search_run(
                endpoint=found,
                user=progress.job.created_by,
                k=k,
                campaign=campaign,
                qrels=qrels,
                system=system,
                name=name,
                job_id=progress.job.pk,
                on_progress=lambda done, total: progress.step(
                    f"Asked {done:,} of {total:,} queries", done=done, total=total
                ),
            )
        except ValidationError as error:
            raise JobFailed(" ".join(error.messages)) from None
        except services.ImportRejected as rejected:
            raise JobFailed(str(rejected)) from None
        run = made.run
        progress.result = {
            "run": run.pk,
            "url": run.get_absolute_url(),
            "label": "See the run",
            "summary": endpoint_runs.summary(made),
            "failed": made.failed_count,
        }


SEARCH_RUN_JOB = "evaluation.search_run"


def start_search_run(*, endpoint, user, k, campaign=None, qrels=None, system="", name=""):
    """The job that makes a run from ``endpoint``, as the page and the API start it."""
    return start_job(
        kind=SEARCH_RUN_JOB,
        title=f"Make a run from {endpoint.name}",
        user=user,
        task=search_run_task,
        endpoint=endpoint.pk,
        k=k,
        campaign=campaign,
        qrels=qrels,
        system=system,
        name=name,
    )


@task
def schedule_firing_task(*, job_id: int, firing: int) -> None:
    """One firing of a schedule (evaluation.services.schedule_runs.perform_firing): its run,
    its evaluation, and the alert a drop raises. A second attempt of the job (its worker
    died) finds the run the first stored. The result links to the schedule's page."""
    pause_point("schedule_firing.taken")  # the fault tests kill the worker here: never started
    with running(job_id) as progress:
        try:
            done = schedule_runs.perform_firing(
                firing_id=firing, job=progress.job, on_step=lambda text: progress.step(text)
            )
        except schedule_runs.FiringFailed as failed:
            raise JobFailed(str(failed)) from None
        progress.result = {
            "url": done.schedule.get_absolute_url(),
            "label": "See the schedule",
            "summary": done.message,
            "run": done.run_id,
        }


register_background(**{SCHEDULE_FIRING: schedule_firing_task})
