"""ir_metadata headers through every way in (issue 17, part 3): the browser upload, the API
and ``manage.py import_run`` store them; the run page shows them, the runs list and the API
search them, the API returns them; the download is the file as uploaded; a bad header is
refused with its file:line and stores nothing; runs without one are unchanged."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from evaluation import services
from evaluation.models import Run
from jobs.models import Job, JobStatus
from tests.evaluation.dashboard_data import BM25, DENSE, user

pytestmark = pytest.mark.django_db

HEADER = b"""# ir_metadata.start
# tag: bm25-rm3
# method:
#   retrieval:
#     - name: bm25
#       k1: 0.9
# ir_metadata.end
"""
BAD = b"# ir_metadata.start\n# method: [bm25\n# ir_metadata.end\n"


@pytest.fixture
def engineer(client, django_user_model):
    account = user(django_user_model, "eng", "engineer")
    client.force_login(account)
    return account


def test_import_run_stores_the_header_and_keeps_the_file_as_uploaded(client, engineer, media_root):
    run = services.import_run(source=HEADER + BM25, filename="bm25.run", system="bm25")

    assert run.ir_metadata == {
        "tag": "bm25-rm3",
        "method": {"retrieval": [{"name": "bm25", "k1": 0.9}]},
    }
    assert run.ir_metadata_text.startswith("tag: bm25-rm3\nmethod:\n")
    assert run.line_count == BM25.count(b"\n")
    download = client.get(f"/evaluation/runs/{run.pk}/download/")
    assert b"".join(download.streaming_content) == HEADER + BM25


def test_a_run_without_a_header_has_none(media_root):
    run = services.import_run(source=BM25, filename="bm25.run", system="bm25")

    assert (run.ir_metadata, run.ir_metadata_text) == ({}, "")


def test_a_bad_header_stores_nothing_and_names_its_line(media_root):
    with pytest.raises(Exception) as error:
        services.import_run(source=BAD + BM25, filename="bad.run", system="bm25")

    assert str(error.value) == (
        "bad.run:2: the ir_metadata header is not valid YAML: expected ',' or ']', "
        "but got '<stream end>'"
    )
    assert not Run.objects.exists() and media_root() == []


def test_the_command_says_what_the_header_holds(media_root, tmp_path):
    path = tmp_path / "bm25.run"
    path.write_bytes(HEADER + BM25)
    out = io.StringIO()

    call_command("import_run", str(path), "--system", "bm25", stdout=out)

    assert "ir_metadata: tag, method." in out.getvalue()
    assert Run.objects.get().ir_metadata["tag"] == "bm25-rm3"


def test_the_run_page_shows_the_header_and_the_list_searches_it(client, engineer, media_root):
    headed = services.import_run(source=HEADER + BM25, filename="bm25.run", system="bm25")
    services.import_run(source=DENSE, filename="dense.run", system="dense")

    page = client.get(f"/evaluation/runs/{headed.pk}/").content.decode()
    found = client.get("/evaluation/runs/", {"q": "K1: 0.9"}).content.decode()
    everything = client.get("/evaluation/runs/").content.decode()

    assert 'data-testid="ir-metadata">tag: bm25-rm3\nmethod:' in page
    assert f'href="/evaluation/runs/{headed.pk}/"' in found and "dense" not in found
    assert "dense" in everything and everything.count(">ir_metadata</span>") == 1
    nothing = client.get("/evaluation/runs/", {"q": "rm4\x00"}).content.decode()
    assert "No run matches" in nothing


def test_the_browser_upload_reads_the_header_or_lists_its_error(
    client, engineer, media_root, django_capture_on_commit_callbacks
):
    files = [
        SimpleUploadedFile("bm25.run", HEADER + BM25),
        SimpleUploadedFile("bad.run", BAD + DENSE),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/evaluation/runs/upload/", {"files": files, "system": "new", "new_name": "sys"}
        )

    assert response.status_code == 302
    done, failed = Job.objects.order_by("pk")
    assert (done.status, failed.status) == (JobStatus.SUCCEEDED, JobStatus.FAILED)
    assert failed.errors == [
        "bad.run:2: the ir_metadata header is not valid YAML: expected ',' or ']', "
        "but got '<stream end>'"
    ]
    assert Run.objects.get().ir_metadata["tag"] == "bm25-rm3"
