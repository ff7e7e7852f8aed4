"""Evaluation work that can take a while, run as background tasks (DESIGN.md, "Work that takes
time"): importing an uploaded run (the task itself is scoring_tasks.import_and_score_task).

The task reads the upload staged in storage (jobs.services.stage_upload), hands it to
services.import_run inside jobs.services.running, and turns a refused file into JobFailed so
the job lists the file's errors. running() deletes the staged file once the job is over
(succeeded or refused) and keeps it when the job crashed or its worker died, so the job can
be started again (jobs.services.retry_job).
"""

from django.conf import settings
from django.core.files.storage import default_storage
from django.tasks import task

from evaluation import services
from evaluation.models import Run
from evaluation.trec import TrecFormatError
from jobs.services import JobFailed, Progress

MESSAGES = {"not_imported": "{filename} was not imported."}


def max_upload_bytes() -> int:
    """Largest file an import reads (after decompression), from settings.MAX_UPLOAD_MB."""
    return settings.MAX_UPLOAD_MB * 1024 * 1024


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
            )
    except TrecFormatError as error:
        raise JobFailed(
            MESSAGES["not_imported"].format(filename=filename),
            errors=[str(line) for line in error.errors],
            total=error.total,
        ) from None
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
    scoring_tasks.import_and_score_task without scoring, which new uploads start directly.
    Kept under this name because jobs store their task's path (Job.task, the database
    queue's rows) and are started again by it (jobs.services.retry_job)."""
    # Imported here: scoring_tasks imports import_staged_run from this module.
    from evaluation.scoring_tasks import import_and_score_task

    import_and_score_task.call(
        job_id=job_id,
        staged=staged,
        filename=filename,
        system=system,
        name=name,
        description=description,
    )
