"""Uploading runs in the browser: several files (plain and gzip) for a chosen or new system,
each imported and scored by a background job (in-process here, as on the embedded default);
bad files listed with file:line and stored nowhere; duplicates recognised by checksum."""

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluation import dashboards, services
from evaluation.models import Evaluation, Run, System
from jobs.models import Job, JobStatus
from tests.evaluation.dashboard_data import BM25, DENSE, QRELS, user

pytestmark = pytest.mark.django_db

URL = "/evaluation/runs/upload/"


@pytest.fixture
def qrels(media_root):
    return services.import_qrels(source=QRELS, filename="dl.qrels", name="dl")


@pytest.fixture
def engineer(client, django_user_model):
    account = user(django_user_model, "eng", "engineer")
    client.force_login(account)
    return account


def files(*pairs):
    return [SimpleUploadedFile(name, data) for name, data in pairs]


@pytest.fixture
def post(client, django_capture_on_commit_callbacks):
    """POST the upload form; the jobs it starts run when the request commits (in-process,
    ImmediateBackend, the default for tests and a bare `manage.py runserver`)."""

    def send(data, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(URL, data, **kwargs)

    return send


def test_the_form_offers_systems_qrels_and_the_default_measures(client, engineer, qrels):
    System.objects.create(name="bm25")

    html = client.get(URL).content.decode()

    assert 'name="files" multiple' in html and "data-dropzone" in html
    assert ">bm25</option>" in html and "New system…" in html
    assert f'<option value="{qrels.pk}" selected>dl v1 · ' in html
    for spec in dashboards.single_specs(services.DASHBOARD_MEASURES):
        assert f'value="{spec}" checked' in html, spec


def test_two_files_one_gzip_are_imported_and_scored_for_a_new_system(client, engineer, qrels, post):
    response = post(
        {
            "files": files(("bm25.run", BM25), ("dense.run.gz", gzip.compress(DENSE))),
            "system": "new",
            "new_name": "lexical",
            "new_description": "BM25 and friends.",
            "new_tags": "baseline, sparse",
            "qrels": qrels.pk,
            "gain": "linear",
            "relevance_level": 1,
            "measures": dashboards.single_specs(services.DASHBOARD_MEASURES),
        }
    )

    jobs = list(Job.objects.order_by("pk"))
    assert response.status_code == 302
    assert response["Location"] == (
        f"/evaluation/runs/upload/status/?qrels={qrels.pk}&jobs={jobs[0].pk}%2C{jobs[1].pk}"
    )
    assert [job.status for job in jobs] == [JobStatus.SUCCEEDED] * 2, [j.step for j in jobs]
    system = System.objects.get(name="lexical")
    assert (system.description, system.tags, system.created_by) == (
        "BM25 and friends.",
        ["baseline", "sparse"],
        engineer,
    )
    runs = list(Run.objects.order_by("name"))
    assert [(r.system, r.name) for r in runs] == [(system, "bm25"), (system, "dense")]
    scoring = dashboards.make_scoring(qrels=qrels)
    for run in runs:
        evaluation = dashboards.scored(scoring).get(run=run)
        assert evaluation.intervals, "the leaderboard row is ready"
    status = client.get(response["Location"]).content.decode()
    assert status.count('data-status="succeeded"') == 2
    ndcg = Evaluation.objects.get(run=runs[0]).means["ndcg_cut_10"]
    assert f"nDCG@10 {ndcg:.4f}" in status
    assert f'href="/evaluation/leaderboard/?qrels={qrels.pk}"' in status


def test_a_bad_file_fails_with_its_lines_and_stores_nothing_while_the_good_one_goes(
    client, engineer, qrels, post, media_root
):
    bad = b"1 Q0 d1 1 3.0 x\n1 Q0 d2 2 two x\n1 Q0 d1 3 1.0 x\n"
    system = System.objects.create(name="bm25")

    response = post(
        {
            "files": files(("bad.run", bad), ("bm25.run", BM25)),
            "system": system.pk,
            "qrels": qrels.pk,
            "gain": "linear",
            "relevance_level": 1,
        }
    )

    failed, done = Job.objects.order_by("pk")
    assert (failed.status, done.status) == (JobStatus.FAILED, JobStatus.SUCCEEDED)
    assert failed.step == "bad.run was not imported."
    assert any(error.startswith("bad.run:2:") for error in failed.errors), failed.errors
    assert [run.name for run in Run.objects.all()] == ["bm25"]
    assert not [f for f in media_root() if "bad" in f], "nothing of the bad file is kept"
    html = client.get(response["Location"]).content.decode()
    assert "bad.run:2:" in html and "nothing was stored" in html


def test_a_file_already_stored_is_recognised_by_its_checksum(client, engineer, qrels, post):
    stored = services.import_run(source=BM25, filename="old-name.run", system="bm25")

    response = post(
        {
            "files": files(("renamed.run", BM25)),
            "system": stored.system.pk,
            "gain": "linear",
            "relevance_level": 1,
        },
        follow=True,
    )

    assert response.status_code == 400
    html = response.content.decode()
    assert (
        "renamed.run: this file was already uploaded as run bm25/old-name (same SHA-256)." in html
    )
    assert "No file was sent" in html
    assert not Job.objects.exists() and Run.objects.count() == 1


def test_the_same_file_twice_in_one_upload_is_sent_once(client, engineer, qrels, post):
    response = post(
        {
            "files": files(("a.run", BM25), ("b.run", BM25)),
            "system": "new",
            "new_name": "bm25",
            "gain": "linear",
            "relevance_level": 1,
        },
        follow=True,
    )

    assert Job.objects.count() == 1 and Run.objects.get().name == "a"
    assert "b.run: the same file as a.run in this upload; sent once." in response.content.decode()


def test_a_run_name_the_system_has_is_refused(client, engineer, qrels, post):
    stored = services.import_run(source=BM25, filename="bm25.run", system="bm25")

    response = post(
        {
            "files": files(("bm25.run", DENSE)),
            "system": stored.system.pk,
            "gain": "linear",
            "relevance_level": 1,
        },
        follow=True,
    )

    assert "system bm25 already has a run named &#x27;bm25&#x27;" in response.content.decode()
    assert not Job.objects.exists()


def test_without_qrels_runs_are_imported_and_not_scored(client, engineer, qrels, post):
    post(
        {
            "files": files(("bm25.run", BM25)),
            "system": "new",
            "new_name": "x",
            "gain": "linear",
            "relevance_level": 1,
        }
    )

    assert Run.objects.count() == 1 and not Evaluation.objects.exists()


def test_a_run_without_a_topic_in_common_is_imported_with_a_warning(client, engineer, qrels, post):
    response = post(
        {
            "files": files(("other.run", b"99 Q0 d1 1 1.0 t\n")),
            "system": "new",
            "new_name": "x",
            "qrels": qrels.pk,
            "gain": "linear",
            "relevance_level": 1,
        }
    )

    job = Job.objects.get()
    assert job.status == JobStatus.SUCCEEDED and Run.objects.count() == 1
    assert job.result["warning"].startswith("Not scored against dl v1: no topic has both")
    assert "Not scored against dl v1" in client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"system": "new", "new_name": "x"}, "Choose at least one run file."),
        ({"files": files(("a.run", BM25)), "system": ""}, "Choose a system, or name a new one."),
        (
            {"files": files(("a.run", BM25)), "system": "new", "new_name": "taken"},
            "A system named taken already exists",
        ),
        (
            {
                "files": files(("a.run", BM25)),
                "system": "new",
                "new_name": "y",
                "new_tags": "x" * 51,
            },
            "A tag has at most 50 characters.",
        ),
        (
            {
                "files": files(("a.run", BM25)),
                "system": "new",
                "new_name": "y",
                "new_description": "d" * 10_001,
            },
            "Ensure this value has at most 10000 characters (it has 10001).",
        ),
        (
            {
                "files": files(("a.run", BM25)),
                "system": "new",
                "new_name": "y",
                "description": "d" * 10_001,
            },
            "Ensure this value has at most 10000 characters (it has 10001).",
        ),
        (
            {
                "files": files(("a.run", BM25)),
                "system": "new",
                "new_name": "y",
                "measures": ["num_q"],
            },
            "dashboards show means over topics",
        ),
    ],
)
def test_a_bad_form_says_what_is_wrong_and_starts_nothing(
    client, engineer, qrels, post, data, message
):
    System.objects.create(name="taken")

    response = post({"gain": "linear", "relevance_level": 1, "qrels": qrels.pk, **data})

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Job.objects.exists()


@pytest.mark.parametrize("roles", [("lead",), ("judge",), ()])
def test_only_engineers_upload(client, django_user_model, qrels, roles):
    client.force_login(user(django_user_model, "someone", *roles))

    assert client.get(URL).status_code == 403
    assert client.post(URL, {"files": files(("a.run", BM25))}).status_code == 403


def test_an_upload_needs_a_login(client):
    assert client.get(URL).status_code == 302


def test_a_job_row_is_polled_by_its_owner_only(client, engineer, qrels, post, django_user_model):
    post(
        {
            "files": files(("a.run", BM25)),
            "system": "new",
            "new_name": "x",
            "gain": "linear",
            "relevance_level": 1,
        }
    )
    job = Job.objects.get()

    row = client.get(f"/evaluation/runs/upload/jobs/{job.pk}/", headers={"HX-Request": "true"})
    client.force_login(user(django_user_model, "other", "engineer"))
    other = client.get(f"/evaluation/runs/upload/jobs/{job.pk}/", headers={"HX-Request": "true"})
    status = client.get(f"/evaluation/runs/upload/status/?jobs={job.pk}")

    assert row.status_code == 200 and b'data-status="succeeded"' in row.content
    assert b"hx-get" not in row.content, "a finished job is not polled again"
    assert other.status_code == 404 and status.status_code == 404


def test_a_queued_job_row_polls_itself(client, engineer, qrels):
    # No commit callbacks run here: the job stays queued, as with a worker that has not
    # picked it up yet.
    client.post(
        URL,
        {
            "files": files(("a.run", BM25)),
            "system": "new",
            "new_name": "x",
            "gain": "linear",
            "relevance_level": 1,
        },
    )
    job = Job.objects.get()

    html = client.get(f"/evaluation/runs/upload/status/?jobs={job.pk}").content.decode()

    assert f'hx-get="/evaluation/runs/upload/jobs/{job.pk}/"' in html
    assert 'hx-trigger="every 1s"' in html and "Waiting for a worker" in html
