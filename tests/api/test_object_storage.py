"""Run files, artifacts and staged uploads in an S3-compatible store (settings S3_BUCKET),
against a real S3-protocol server on loopback (moto's), behind a proxy that can drop an
upload half-way: the import fails cleanly, nothing half-written is referenced, a retry
succeeds. No code path may assume a local file path."""

import re
import uuid
from datetime import timedelta

import pytest
from botocore.config import Config
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from evaluation import services
from evaluation.models import Run
from jobs import services as jobs
from jobs.models import Job, JobStatus
from tests import s3_server as s3
from tests.api.conftest import QRELS, RUN, upload

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def store():
    """moto's S3 server, and the flaky proxy the app talks to."""
    with s3.moto_server() as endpoint, s3.FlakyProxy(endpoint) as proxy:
        yield endpoint, proxy


@pytest.fixture
def bucket(settings, store):
    """A fresh bucket as the default storage; returns a function listing its keys."""
    endpoint, proxy = store
    proxy.fail_uploads = None
    name = f"runs-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(endpoint, name)
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": name,
                "endpoint_url": proxy.url,
                "region_name": s3.REGION,
                "access_key": s3.ACCESS_KEY,
                "secret_key": s3.SECRET_KEY,
                "addressing_style": "path",
                "signature_version": "s3v4",
                "default_acl": None,
                "file_overwrite": False,
                # One attempt: a dropped upload fails now instead of after boto3's retries.
                "client_config": Config(
                    retries={"max_attempts": 1, "mode": "standard"},
                    connect_timeout=2,
                    read_timeout=10,
                ),
            },
        },
    }
    return lambda: s3.list_keys(endpoint, name)


@pytest.fixture
def engineer(make_user):
    return make_user("eng", "engineer")


@pytest.fixture
def client(api, engineer):
    return api(engineer)


def upload_run(client, run_jobs, data=RUN, filename="bm25.run"):
    with run_jobs():
        response = client.post(
            "/api/v1/runs/", {"file": upload(filename, data), "system": "bm25"}, format="multipart"
        )
    assert response.status_code == 202, response.content
    return Job.objects.get(pk=response.json()["id"])


def test_a_run_lives_in_the_bucket_and_is_scored_read_and_downloaded_from_it(
    client, bucket, run_jobs
):
    job = upload_run(client, run_jobs)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, (job.step, job.errors)

    run = Run.objects.get()
    keys = bucket()
    assert keys == sorted([run.original_file.name, run.artifact.name, run.top_lists.name])
    assert run.artifact.name.endswith(".parquet")
    assert not [key for key in keys if key.startswith("staging/")]
    with pytest.raises(NotImplementedError):
        _ = run.artifact.path  # object storage has no local path, and nothing needs one

    qrels = services.import_qrels(source=QRELS, filename="dl.qrels", name="dl")
    evaluation = services.evaluate_run(run=run, qrels=qrels, measure_specs=["P.1", "map"])
    assert evaluation.means["P_1"] == pytest.approx(1.0)
    topics = services.load_run_topics(run, ["2"])
    assert topics["docno"].to_list() == ["d4", "d3"]

    response = client.get(f"/evaluation/runs/{run.pk}/download/")
    assert response.status_code == 200
    assert response.streaming
    assert b"".join(response.streaming_content) == RUN


def test_an_upload_dropped_half_way_stores_nothing_and_its_retry_imports_once(
    client, bucket, run_jobs, store
):
    _, proxy = store
    proxy.fail_uploads = re.compile(r"ranking\.parquet")

    job = upload_run(client, run_jobs)
    job.refresh_from_db()

    assert proxy.dropped, "the proxy never saw the artifact's upload"
    assert job.status == JobStatus.FAILED
    assert job.retryable
    assert not Run.objects.exists()
    # Only the staged upload is left, kept for the retry; the run's own file was removed.
    assert [key.split("/")[0] for key in bucket()] == ["staging"]

    proxy.fail_uploads = None
    with run_jobs():
        response = client.post(f"/api/v1/jobs/{job.pk}/retry/")
    assert response.status_code == 202, response.content
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, (job.step, job.errors)
    run = Run.objects.get()
    assert bucket() == sorted([run.original_file.name, run.artifact.name, run.top_lists.name])


def test_a_store_that_refuses_the_staged_upload_is_a_503_and_no_job(client, bucket, store):
    _, proxy = store
    proxy.fail_uploads = re.compile(r"staging/")

    response = client.post(
        "/api/v1/runs/", {"file": upload("bm25.run", RUN), "system": "bm25"}, format="multipart"
    )

    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert response.json() == {"detail": jobs.MESSAGES["storage_unavailable"]}
    assert not Job.objects.exists()
    assert not Run.objects.exists()
    assert bucket() == []


def test_the_upload_page_says_the_store_is_unavailable(api, make_user, bucket, store):
    _, proxy = store
    proxy.fail_uploads = re.compile(r"staging/")
    client = api(make_user("eng2", "engineer"))

    response = client.post(
        "/evaluation/runs/upload/",
        {
            "files": [upload("bm25.run", RUN)],
            "system": "new",
            "new_name": "bm25",
            "gain": "linear",
            "relevance_level": 1,
        },
        format="multipart",
    )

    assert response.status_code == 503
    assert jobs.MESSAGES["storage_unavailable"] in response.content.decode()
    assert not Job.objects.exists()


def test_orphans_and_stale_staging_are_swept_from_the_bucket(bucket):
    orphan = default_storage.save("runs/ab/" + "ab" * 32 + "/ranking.parquet", ContentFile(b"x"))
    staged = default_storage.save("staging/runs/left.run", ContentFile(b"y"))

    assert services.sweep_orphan_run_files(older_than=timedelta(seconds=-1)) == [orphan]
    assert jobs.sweep_staged_files(older_than=timedelta(seconds=-1)) == [staged]
    assert bucket() == []
