"""A task worker killed in the middle of an import leaves no partial run, and the job can be
started again, importing the run exactly once (issue 6, item 5).

A real `manage.py db_worker` (django-tasks-db) runs the import on the test database; the
import pauses just before its commit (jobs/faults.py), with the run's files written and its
row inserted but not committed, and the test kills the worker there with SIGKILL: nothing
the worker could clean up after.
"""

import signal

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services.roles import Role
from evaluation.models import Run, System
from jobs.faults import PAUSE_AT, PAUSE_MARKER
from jobs.models import Job, JobStatus
from tests.faults.conftest import output, process_env, start, stop, wait_for

RUN = b"1 Q0 d1 1 3.0 bm25\n1 Q0 d2 2 2.0 bm25\n2 Q0 d4 1 5.5 bm25\n2 Q0 d3 2 1.5 bm25\n"
WORKER = ["manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.1"]


@pytest.fixture
def database_tasks(settings):
    """Tasks go to the database queue, as in production, for a worker process to take."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_import_leaves_no_run_and_the_job_can_be_retried(
    database_tasks, settings, media_root, django_user_model, tmp_path
):
    engineer = django_user_model.objects.create_user("eng")
    engineer.groups.add(Group.objects.get(name=Role.ENGINEER))
    api = APIClient()
    api.force_login(engineer)
    response = api.post(
        reverse("api:run-list"),
        {"file": SimpleUploadedFile("bm25.run", RUN), "system": "bm25"},
        format="multipart",
    )
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["id"])
    staged = job.params["staged"]
    assert media_root() == [staged]

    # 1. A worker takes the job and is killed just before the import commits.
    marker = tmp_path / "paused"
    env = process_env(
        settings,
        TASKS_BACKEND="django_tasks_db.DatabaseBackend",
        **{PAUSE_AT: "import_run.before_commit", PAUSE_MARKER: str(marker)},
    )
    worker = start(WORKER, env, tmp_path / "worker.log")
    try:
        wait_for(marker.exists, seconds=90, what="the import to pause", process=worker)
        written = [name for name in media_root() if name.startswith("runs/")]
        assert len(written) == 3, (
            f"the run's upload, artifact and top lists are written: {media_root()}"
        )
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
    finally:
        stop(worker)

    # 2. Nothing of the run was committed; the job still says running.
    assert Run.objects.count() == 0, "the killed import's row never committed"
    assert System.objects.count() == 0, "nor the system it created"
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING
    assert sorted(media_root()) == sorted([*written, staged]), "files left behind, for now"

    # 3. Recovery: the job is failed as retryable, the orphan files go, the upload stays.
    call_command("recover_jobs", older_than=0)
    job.refresh_from_db()
    assert (job.status, job.retryable, job.can_retry) == (JobStatus.FAILED, True, True)
    assert media_root() == [staged], "no orphan file; the upload is kept for the retry"

    # 4. The owner retries; a worker imports the run, once.
    response = api.post(reverse("api:job-retry", args=[job.pk]))
    assert response.status_code == 202, response.content
    worker = start(
        [*WORKER, "--batch"],
        process_env(settings, TASKS_BACKEND=env["TASKS_BACKEND"]),
        tmp_path / "worker-again.log",
    )
    try:
        worker.wait(120)
    finally:
        stop(worker)
    assert worker.returncode == 0, output(worker)
    job.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2), (job.step, output(worker))
    run = Run.objects.get()
    assert job.result["run"] == run.pk
    assert (run.line_count, run.uploaded_by) == (4, engineer)
    assert media_root() == sorted(
        [run.original_file.name, run.artifact.name, run.top_lists.name]
    ), "the run's three files, and the staged upload deleted after success"
