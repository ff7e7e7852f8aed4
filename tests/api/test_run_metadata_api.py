"""ir_metadata headers over the API (issue 17, part 3): an upload stores the header, the
runs list returns it and searches it, a bad header fails the job with its file:line."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluation import services
from evaluation.models import Run
from tests.evaluation.dashboard_data import BM25, DENSE
from tests.evaluation.test_run_metadata_uploads import BAD, HEADER

pytestmark = pytest.mark.django_db


def test_the_api_returns_and_searches_the_header(api, make_user, media_root, run_jobs):
    client = api(make_user("api-eng", "engineer"))
    with run_jobs():
        response = client.post(
            "/api/v1/runs/",
            {"file": SimpleUploadedFile("bm25.run", HEADER + BM25), "system": "bm25"},
            format="multipart",
        )
    assert response.status_code == 202
    services.import_run(source=DENSE, filename="dense.run", system="dense")

    found = client.get("/api/v1/runs/", {"search": "bm25-rm3"}).json()
    everything = client.get("/api/v1/runs/").json()

    [row] = found["results"]
    assert row["ir_metadata"] == {
        "tag": "bm25-rm3",
        "method": {"retrieval": [{"name": "bm25", "k1": 0.9}]},
    }
    assert sorted(r["ir_metadata"] != {} for r in everything["results"]) == [False, True]


def test_the_api_upload_of_a_bad_header_fails_its_job_with_the_line(
    api, make_user, media_root, run_jobs
):
    client = api(make_user("api-eng", "engineer"))
    with run_jobs():
        response = client.post(
            "/api/v1/runs/",
            {"file": SimpleUploadedFile("bad.run", BAD + BM25), "system": "bm25"},
            format="multipart",
        )

    job = client.get(f"/api/v1/jobs/{response.json()['id']}/").json()
    assert job["status"] == "failed"
    assert job["errors"] == [
        "bad.run:2: the ir_metadata header is not valid YAML: expected ',' or ']', "
        "but got '<stream end>'"
    ]
    assert not Run.objects.exists()
