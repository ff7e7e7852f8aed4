"""Background work of the dashboards (DESIGN.md, "Work that takes time"): importing an
uploaded run and scoring it right away, and scoring stored runs with a new set of options.

Like evaluation.tasks, each task runs inside jobs.services.running, so the job row carries
the progress bar, the file's errors when it is refused, and the result when done. Task
arguments are plain JSON (ids, names, option values) so any task backend can carry them.
"""

from __future__ import annotations

from django.tasks import task
from django.urls import reverse

from evaluation import dashboards, measures, services
from evaluation.models import QrelsVersion, Run
from evaluation.tasks import import_staged_run
from jobs.services import JobFailed, running

MESSAGES = {
    "imported": "Imported {filename} as run {run}: {lines:,} lines, {topics:,} topics.",
    "scored": "Scored against {qrels}: {measure} {mean:.4f} (95% interval {low:.4f}–{high:.4f}).",
    "not_scored": "Not scored against {qrels}: {reason}",
    "qrels_gone": "the qrels version no longer exists.",
    "runs_scored": "Scored {n} run{s} against {qrels}.",
    "runs_failed": "{n} could not be scored: {details}",
}


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
