"""manage.py recover_jobs: fails stalled jobs (and with --retry starts them again) and
deletes stored files nothing points at."""

from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command

from evaluation.models import Run
from jobs.models import JobStatus
from tests.jobs.conftest import make_stalled

pytestmark = pytest.mark.django_db


def recover(*args: str) -> str:
    out = StringIO()
    call_command("recover_jobs", *args, stdout=out)
    return out.getvalue()


def test_it_fails_stalled_jobs_and_deletes_orphan_files(start_import, media_root):
    job = make_stalled(start_import(run=False))
    orphan = default_storage.save("runs/ab/" + "ab" * 32 + "/bm25.run", ContentFile(b"x"))

    output = recover("--older-than", "0")

    job.refresh_from_db()
    assert (job.status, job.can_retry) == (JobStatus.FAILED, True)
    assert f"job {job.pk} (Import run bm25.run): its worker stopped; marked failed" in output
    assert f"deleted {orphan} (no run points at it)" in output
    assert media_root() == [job.params["staged"]], "the upload is kept for a retry"


def test_with_retry_it_starts_them_again(
    start_import, media_root, django_capture_on_commit_callbacks
):
    job = make_stalled(start_import(run=False))
    with django_capture_on_commit_callbacks(execute=True):
        output = recover("--older-than", "0", "--retry")
    job.refresh_from_db()
    assert f"job {job.pk}: started again" in output
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2)
    assert Run.objects.count() == 1


def test_with_retry_it_says_why_a_job_cannot_start_again(start_import, media_root):
    job = make_stalled(start_import(run=False))
    default_storage.delete(job.params["staged"])
    output = recover("--older-than", "0", "--retry")
    assert f"job {job.pk}: not started again: The uploaded file" in output


def test_jobs_that_beat_recently_and_fresh_files_are_left_alone(start_import, media_root):
    job = make_stalled(start_import(run=False), seconds=5)
    default_storage.save("runs/ab/" + "ab" * 32 + "/bm25.run", ContentFile(b"x"))
    assert recover() == ""
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING
    assert len(media_root()) == 2


def test_a_negative_age_is_refused():
    with pytest.raises(CommandError, match="0 or more seconds"):
        recover("--older-than", "-1")
