"""Jobs that crash or lose their worker can be started again, exactly once, and leave no
stored file behind (jobs.services, evaluation.services.sweep_orphan_run_files)."""

import importlib
import time
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from evaluation import services as evaluation
from evaluation.models import Run
from jobs import services
from jobs.models import Job, JobStatus
from jobs.services import JobNotRetryable, recover_stalled_jobs, retry_job, running
from tests.jobs.conftest import RUN, make_stalled

pytestmark = pytest.mark.django_db


def test_a_job_keeps_its_task_and_arguments_to_start_it_again(start_import):
    job = start_import(run=False)
    assert job.task == "evaluation.tasks.import_run_task"
    assert job.params["staged"] == "staging/runs/bm25.run"
    assert job.params["system"] == "bm25"
    assert job.attempt == 1


def test_a_crashed_import_keeps_its_upload_and_succeeds_when_retried(
    start_import, media_root, monkeypatch, django_capture_on_commit_callbacks
):
    real_import = evaluation.import_run

    def crash_once(**kwargs):
        monkeypatch.setattr(evaluation, "import_run", real_import)
        raise ConnectionError("storage went away")

    monkeypatch.setattr(evaluation, "import_run", crash_once)
    job = start_import()
    assert (job.status, job.retryable, job.can_retry) == (JobStatus.FAILED, True, True)
    assert job.step == services.MESSAGES["crashed"]
    assert media_root() == ["staging/runs/bm25.run"], "kept for the retry"

    with django_capture_on_commit_callbacks(execute=True):
        retry_job(job=job)
    job.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2)
    assert (job.done, job.percent) == (job.total, 100), "a finished job shows every step done"
    run = Run.objects.get()
    assert job.result["run"] == run.pk
    assert media_root() == sorted(
        [run.original_file.name, run.artifact.name, run.top_lists.name]
    ), "the staged upload is deleted once the job succeeded"


def test_a_refused_file_is_not_retryable_and_its_upload_is_deleted(start_import, media_root):
    job = start_import(b"1 Q0 d1 1 three bm25\n")
    assert (job.status, job.retryable, job.can_retry) == (JobStatus.FAILED, False, False)
    assert job.errors, "the file's errors are listed"
    assert media_root() == []
    with pytest.raises(JobNotRetryable, match="trying again will not change"):
        retry_job(job=job)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (JobStatus.QUEUED, "not_retryable_queued"),
        (JobStatus.RUNNING, "not_retryable_running"),
        (JobStatus.SUCCEEDED, "not_retryable_succeeded"),
        (JobStatus.CANCELLED, "not_retryable_cancelled"),
    ],
)
def test_only_crashed_or_stalled_jobs_can_be_retried(start_import, status, message):
    job = start_import(run=False)
    Job.objects.filter(pk=job.pk).update(status=status)
    with pytest.raises(JobNotRetryable) as refused:
        retry_job(job=job)
    assert str(refused.value) == services.MESSAGES[message]
    job.refresh_from_db()
    assert job.attempt == 1


def test_a_job_from_before_retries_says_it_cannot_be_retried(engineer):
    job = Job.objects.create(
        kind="x", title="Old", created_by=engineer, status=JobStatus.FAILED, retryable=True
    )
    with pytest.raises(JobNotRetryable, match="predates retries"):
        retry_job(job=job)


def test_a_retry_whose_upload_is_gone_asks_for_it_again(start_import, media_root):
    job = make_stalled(start_import(run=False))
    default_storage.delete(job.params["staged"])
    with pytest.raises(JobNotRetryable) as refused:
        retry_job(job=job)
    assert str(refused.value) == services.MESSAGES["upload_gone"]


def test_a_stalled_job_is_recovered_and_a_beating_one_left_alone(start_import):
    stalled = make_stalled(start_import(run=False, filename="a.run"))
    alive = make_stalled(start_import(run=False, filename="b.run"), seconds=10)
    assert stalled.stalled and not alive.stalled

    recovered = recover_stalled_jobs(older_than=timedelta(minutes=5))

    assert [job.pk for job in recovered] == [stalled.pk]
    stalled.refresh_from_db()
    alive.refresh_from_db()
    assert (stalled.status, stalled.retryable, stalled.step) == (
        JobStatus.FAILED,
        True,
        services.MESSAGES["worker_lost"],
    )
    assert stalled.finished_at is not None
    assert alive.status == JobStatus.RUNNING


def test_a_stalled_job_can_be_retried_without_recovering_it_first(
    start_import, media_root, django_capture_on_commit_callbacks
):
    job = make_stalled(start_import(run=False))
    assert job.can_retry
    with django_capture_on_commit_callbacks(execute=True):
        retry_job(job=job)
    job.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2)
    assert Run.objects.count() == 1


def test_a_worker_thought_dead_cannot_overwrite_the_retry(start_import, media_root):
    job = start_import(run=False)
    with running(job.pk) as progress:  # the first attempt, silent so long it looks dead
        retry_job(job=make_stalled(job))
        progress.result = {"summary": "late"}
    job.refresh_from_db()
    assert (job.status, job.attempt, job.result) == (JobStatus.QUEUED, 2, {})
    assert default_storage.exists(job.params["staged"]), "the retry still needs the upload"


def test_a_retry_after_the_import_committed_reports_that_run(
    start_import, media_root, monkeypatch, django_capture_on_commit_callbacks
):
    """Killed after the import committed (e.g. while scoring): the second attempt finds the
    file stored by the same person and takes that run rather than refusing a duplicate."""
    job = start_import(run=False)
    run = evaluation.import_run(source=RUN, filename="bm25.run", system="bm25", user=job.created_by)
    make_stalled(job)
    with django_capture_on_commit_callbacks(execute=True):
        retry_job(job=job)
    job.refresh_from_db()
    assert (job.status, job.result["run"]) == (JobStatus.SUCCEEDED, run.pk)
    assert Run.objects.count() == 1


def test_a_file_someone_else_stored_is_still_refused_on_a_retry(
    start_import, media_root, django_user_model, django_capture_on_commit_callbacks
):
    job = make_stalled(start_import(run=False))
    other = django_user_model.objects.create_user("other")
    evaluation.import_run(source=RUN, filename="bm25.run", system="bm25", user=other)
    with django_capture_on_commit_callbacks(execute=True):
        retry_job(job=job)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert "already uploaded" in job.step


def test_the_sweep_deletes_run_files_no_run_points_at_once_old_enough(media_root):
    run = evaluation.import_run(source=RUN, filename="bm25.run", system="bm25")
    folder = run.original_file.name.rsplit("/", 1)[0]
    orphan_folder = "runs/ab/" + "ab" * 32
    orphans = [
        default_storage.save(f"{orphan_folder}/x.run", ContentFile(b"x")),
        default_storage.save(f"{folder}/bm25_extra.run", ContentFile(b"x")),
    ]

    assert evaluation.sweep_orphan_run_files(older_than=timedelta(minutes=5)) == [], (
        "files just written may belong to an import about to commit"
    )
    deleted = evaluation.sweep_orphan_run_files(older_than=timedelta(0))

    assert deleted == sorted(orphans)
    assert media_root() == sorted([run.original_file.name, run.artifact.name, run.top_lists.name])


def test_the_sweep_keeps_uploads_a_job_may_still_read(start_import, media_root):
    waiting = start_import(run=False, filename="waiting.run")
    crashed = start_import(run=False, filename="crashed.run")
    Job.objects.filter(pk=crashed.pk).update(status=JobStatus.FAILED, retryable=True)
    done = start_import(run=False, filename="done.run")
    Job.objects.filter(pk=done.pk).update(status=JobStatus.SUCCEEDED)
    stray = default_storage.save("staging/runs/stray.run", ContentFile(b"x"))

    deleted = services.sweep_staged_files(older_than=timedelta(0))

    assert sorted(deleted) == sorted([done.params["staged"], stray])
    assert media_root() == sorted([waiting.params["staged"], crashed.params["staged"]])


@pytest.mark.django_db(transaction=True)
def test_a_running_job_beats_so_it_never_looks_stalled(start_import, monkeypatch):
    monkeypatch.setattr(services, "HEARTBEAT_SECONDS", 0.05)
    job = make_stalled(start_import(run=False), seconds=3600)
    with running(job.pk):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            job.refresh_from_db()
            if timezone.now() - job.updated_at < timedelta(seconds=5):
                break
            time.sleep(0.05)
        assert not job.stalled, "the heartbeat refreshed updated_at while the work ran"


def test_a_crashed_campaign_import_keeps_its_upload_and_succeeds_when_retried(
    engineer, media_root, monkeypatch, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation import services as annotation
    from annotation import tasks as annotation_tasks
    from annotation.services import campaign_files

    lead = engineer  # any user may own the job; the campaign needs a lead
    campaign = annotation.create_campaign(lead=lead, name="Retry")
    real_import = campaign_files.import_topics

    def crash_once(**kwargs):
        monkeypatch.setattr(campaign_files, "import_topics", real_import)
        raise ConnectionError("database went away")

    monkeypatch.setattr(campaign_files, "import_topics", crash_once)
    upload = SimpleUploadedFile("t.tsv", b"1\tcheap flights\n")
    with django_capture_on_commit_callbacks(execute=True):
        job = campaign_files.start_import_job(
            campaign=campaign,
            upload=upload,
            user=engineer,
            what="topics",
            task=annotation_tasks.import_topics_job,
            fmt="tsv",
        )
    job.refresh_from_db()
    assert (job.status, job.can_retry) == (JobStatus.FAILED, True)
    assert len(media_root()) == 1, "the upload is kept for the retry"

    with django_capture_on_commit_callbacks(execute=True):
        retry_job(job=job)
    job.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2)
    assert list(campaign.topics.values_list("qid", "query")) == [("1", "cheap flights")]
    assert media_root() == [], "the upload is deleted once the job succeeded"


def test_jobs_of_the_former_scoring_tasks_module_are_moved_and_can_be_retried(engineer):
    """Migration jobs/0003: a job failed before evaluation/scoring_tasks.py merged into
    evaluation/tasks.py keeps a task path that can be imported (and so retried)."""
    from django.apps import apps
    from django.utils.module_loading import import_string

    move = importlib.import_module("jobs.migrations.0003_move_scoring_task_paths")
    old = Job.objects.create(
        kind="x",
        title="Old",
        created_by=engineer,
        status=JobStatus.FAILED,
        task="evaluation.scoring_tasks.score_runs_task",
        params={"runs": [], "scoring": {}},
    )
    other = Job.objects.create(
        kind="x", title="Other", created_by=engineer, task="evaluation.tasks.import_run_task"
    )
    move.move(apps, None)
    old.refresh_from_db()
    other.refresh_from_db()
    assert old.task == "evaluation.tasks.score_runs_task"
    assert other.task == "evaluation.tasks.import_run_task"
    assert import_string(old.task).name == "score_runs_task"
    move.move_back(apps, None)
    old.refresh_from_db()
    assert old.task == "evaluation.scoring_tasks.score_runs_task"


def _taken_by_a_worker(job: Job, *, status: str, seconds: int = 3600) -> Job:
    """What the database queue shows when a worker took ``job``'s task ``seconds`` ago (its
    row no longer READY) but the job row never left QUEUED: the worker died in between."""
    from django_tasks_db.models import DBTaskResult

    taken = timezone.now() - timedelta(seconds=seconds)
    row = DBTaskResult.objects.create(
        status=status,
        started_at=taken,
        args_kwargs={"args": [], "kwargs": {"job_id": job.pk}},
        task_path=job.task,
        backend_name="default",
        run_after=taken,
    )
    Job.objects.filter(pk=job.pk).update(task_result_id=str(row.pk), updated_at=taken)
    job.refresh_from_db()
    return job


@pytest.mark.parametrize("status", ["RUNNING", "FAILED"])
def test_a_job_taken_by_a_worker_that_died_before_starting_it_is_recovered(start_import, status):
    lost = _taken_by_a_worker(start_import(run=False, filename="a.run"), status=status)
    just_taken = _taken_by_a_worker(
        start_import(run=False, filename="b.run"), status="RUNNING", seconds=5
    )
    waiting = _taken_by_a_worker(start_import(run=False, filename="c.run"), status="READY")

    recovered = recover_stalled_jobs(older_than=timedelta(minutes=5))

    assert [job.pk for job in recovered] == [lost.pk]
    lost.refresh_from_db()
    assert (lost.status, lost.retryable, lost.step) == (
        JobStatus.FAILED,
        True,
        services.MESSAGES["worker_lost_before_start"],
    )
    assert lost.can_retry
    for job in (just_taken, waiting):
        job.refresh_from_db()
        assert job.status == JobStatus.QUEUED


def test_a_job_waiting_in_the_database_queue_remembers_its_row(start_import, settings):
    from django_tasks_db.models import DBTaskResult

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    job = start_import(run=True)  # enqueued after commit: a queue row, not run yet
    assert job.status == JobStatus.QUEUED
    row = DBTaskResult.objects.get(pk=job.task_result_id)
    assert row.task_path == "evaluation.tasks.import_run_task"
    assert row.args_kwargs["kwargs"]["job_id"] == job.pk


def test_a_job_the_immediate_backend_ran_keeps_no_queue_row(start_import):
    job = start_import(run=True)
    assert job.status == JobStatus.SUCCEEDED
    assert job.task_result_id == ""


@pytest.mark.parametrize(
    "status", [JobStatus.RUNNING, JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED]
)
def test_only_a_job_no_worker_started_is_ended_as_cancelled(engineer, status):
    queued = Job.objects.create(kind="k", title="t", created_by=engineer, task=RUN)
    assert services.end_queued_job(job_id=queued.pk, step="Cancelled before it started.")
    queued.refresh_from_db()
    assert queued.finished and queued.get_status_display() == "Cancelled"
    assert (queued.status, queued.step, queued.retryable) == (
        JobStatus.CANCELLED,
        "Cancelled before it started.",
        False,
    )
    assert queued.finished_at is not None and not queued.can_retry
    taken = Job.objects.create(kind="k", title="t", created_by=engineer, task=RUN, status=status)
    assert not services.end_queued_job(job_id=taken.pk, step="Cancelled before it started.")
    taken.refresh_from_db()
    assert (taken.status, taken.step) == (status, "")
