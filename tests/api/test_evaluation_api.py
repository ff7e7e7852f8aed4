"""The evaluation API: qrels imports and downloads, systems, run uploads through jobs, and
evaluations. Who may call what is in test_permissions.py; this is what each call does."""

import pytest

from accounts.services.tokens import create_token
from evaluation import api as evaluation_api
from evaluation import measures, services, trec
from evaluation.measures import specs
from evaluation.models import Evaluation, QrelsEntry, QrelsVersion, Run, System
from jobs.models import Job, JobStatus
from tests.api.conftest import OTHER_RUN, QRELS, RUN, upload

pytestmark = pytest.mark.django_db

QRELS_URL = "/api/v1/qrels/"
RUNS_URL = "/api/v1/runs/"
SYSTEMS_URL = "/api/v1/systems/"
EVALUATIONS_URL = "/api/v1/evaluations/"


@pytest.fixture
def engineer(make_user):
    return make_user("eng", "engineer")


@pytest.fixture
def client(api, engineer):
    return api(engineer)


@pytest.fixture
def qrels(media_root):
    return services.import_qrels(source=QRELS, filename="dl.qrels", name="dl")


@pytest.fixture
def run(media_root, engineer):
    return services.import_run(source=RUN, filename="bm25.run", system="bm25", user=engineer)


def post_file(client, url, filename, data, **fields):
    return client.post(url, {"file": upload(filename, data), **fields}, format="multipart")


# --- qrels ---------------------------------------------------------------------------------


def test_uploading_qrels_publishes_the_next_version_of_the_name(client, media_root):
    first = post_file(client, QRELS_URL, "a.qrels", QRELS, name="dl")
    second = post_file(client, QRELS_URL, "b.qrels", QRELS + b"3 0 d9 1\n", name="dl")

    assert first.status_code == 201, first.content
    assert second.status_code == 201, second.content
    body = second.json()
    assert (body["name"], body["version"], body["label"]) == ("dl", 2, "dl v2")
    assert (body["topic_count"], body["judgment_count"]) == (3, 5)
    assert body["created_by"] == "eng"
    assert second["Location"] == f"http://testserver/api/v1/qrels/{body['id']}/"
    assert QrelsEntry.objects.filter(qrels_id=body["id"]).count() == 5


def test_a_bad_qrels_file_is_refused_with_every_line_error_and_nothing_is_stored(client):
    response = post_file(client, QRELS_URL, "bad.qrels", b"1 0 d1 2\n1 0 d2 x\n1 0\n", name="dl")

    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            "bad.qrels:2: grade 'x' is not an integer",
            "bad.qrels:3: expected 4 fields (qid iteration docno grade), found 2",
        ],
        "total": 2,
    }
    assert not QrelsVersion.objects.exists()
    assert not QrelsEntry.objects.exists()


def test_qrels_upload_fields_are_checked_before_the_file_is_read(client):
    response = client.post(QRELS_URL, {"name": "not a slug!"}, format="multipart")

    assert response.status_code == 400
    assert response.json() == {
        "file": ["No file was submitted."],
        "name": [evaluation_api.MESSAGES["qrels_name"]],
    }


def test_an_empty_qrels_file_is_refused(client):
    response = post_file(client, QRELS_URL, "empty.qrels", b"", name="dl")

    assert response.status_code == 400
    assert response.json() == {"file": ["The submitted file is empty."]}
    assert not QrelsVersion.objects.exists()


def test_an_upload_over_the_limit_is_refused_with_413_before_it_is_read(client, settings):
    settings.MAX_UPLOAD_MB = 0

    response = post_file(client, QRELS_URL, "a.qrels", QRELS, name="dl")

    assert response.status_code == 413
    assert response.json() == {
        "detail": "The upload is larger than the limit of 0 MB (MAX_UPLOAD_MB)."
    }
    assert not QrelsVersion.objects.exists()


def test_an_upload_over_the_limit_is_413_even_before_the_login_is_checked(api, settings):
    settings.MAX_UPLOAD_MB = 0

    response = post_file(api(), RUNS_URL, "a.run", RUN, system="bm25")

    assert response.status_code == 413
    assert not Job.objects.exists()


def test_qrels_download_is_the_trec_file_of_the_version(client, qrels):
    response = client.get(f"/api/v1/qrels/{qrels.pk}/download/", HTTP_ACCEPT="text/plain")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="dl-v1.qrels"'
    returned = trec.read_qrels(response.content).sort(["qid", "docno"])
    expected = trec.read_qrels(QRELS).sort(["qid", "docno"])
    assert returned.select("qid", "docno", "grade").equals(expected.select("qid", "docno", "grade"))


def test_a_missing_qrels_version_is_404_in_json_and_in_text(client):
    assert client.get("/api/v1/qrels/999/").status_code == 404
    response = client.get("/api/v1/qrels/999/download/", HTTP_ACCEPT="text/plain")
    assert response.status_code == 404
    assert response.content == b"No QrelsVersion matches the given query."


def test_qrels_cannot_change_once_published(client, qrels):
    assert client.patch(f"/api/v1/qrels/{qrels.pk}/", {"name": "x"}).status_code == 405
    assert client.delete(f"/api/v1/qrels/{qrels.pk}/").status_code == 405


def test_listing_qrels_costs_the_same_few_queries_however_many_there_are(
    client, media_root, django_assert_max_num_queries
):
    for index in range(5):
        services.import_qrels(source=QRELS, filename=f"{index}.qrels", name=f"q{index}")
    # 1 session, 2 user, 3 the user's roles in their teams (who may read which versions:
    # evaluation/access), 4 count, 5 the page with its creators and teams (select_related),
    # 6 the other teams each is shared with (prefetched: one query for the page)
    with django_assert_max_num_queries(6):
        response = client.get(QRELS_URL)
    assert response.json()["count"] == 5


# --- systems -------------------------------------------------------------------------------


def test_an_engineer_creates_changes_and_lists_systems(client):
    created = client.post(SYSTEMS_URL, {"name": "dense", "tags": ["neural"]}, format="json")
    assert created.status_code == 201, created.content
    pk = created.json()["id"]

    changed = client.patch(f"/api/v1/systems/{pk}/", {"description": "Dual encoder."})

    assert changed.status_code == 200
    body = changed.json()
    assert (body["name"], body["description"], body["tags"]) == (
        "dense",
        "Dual encoder.",
        ["neural"],
    )
    assert (body["run_count"], body["created_by"]) == (0, "eng")


def test_a_system_name_is_unique_and_tags_are_short(client):
    System.objects.create(name="dense")

    response = client.post(SYSTEMS_URL, {"name": "dense", "tags": ["x" * 51]}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "name": [evaluation_api.MESSAGES["system_name_taken"]],
        "tags": {"0": [evaluation_api.MESSAGES["tag_too_long"]]},
    }


def test_deleting_a_system_deletes_its_runs_and_their_files(
    client, run, media_root, django_capture_on_commit_callbacks
):
    assert media_root(), "the run's files should be stored"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.delete(f"/api/v1/systems/{run.system_id}/")

    assert response.status_code == 204
    assert not Run.objects.exists()
    assert media_root() == []


def test_listing_systems_counts_runs_in_the_same_query(
    client, run, media_root, django_assert_max_num_queries
):
    services.import_run(source=OTHER_RUN, filename="dense.run", system="dense")
    # 1 session, 2 user, 3 the user's roles, 4 count, 5 the page with run counts and creators
    with django_assert_max_num_queries(5):
        response = client.get(SYSTEMS_URL)
    assert [(s["name"], s["run_count"]) for s in response.json()["results"]] == [
        ("bm25", 1),
        ("dense", 1),
    ]


# --- runs ----------------------------------------------------------------------------------


def test_uploading_a_run_answers_202_with_a_job_whose_result_is_the_run(
    client, media_root, run_jobs
):
    with run_jobs():
        response = post_file(client, RUNS_URL, "bm25.run", RUN, system="bm25", description="BM25")

    assert response.status_code == 202, response.content
    job = response.json()
    assert response["Location"] == f"http://testserver/api/v1/jobs/{job['id']}/"
    assert job["kind"] == "evaluation.import_run"
    polled = client.get(response["Location"]).json()
    assert polled["status"] == JobStatus.SUCCEEDED, polled
    assert polled["finished"] is True
    stored = client.get(f"/api/v1/runs/{polled['result']['run']}/").json()
    assert (stored["system_name"], stored["name"], stored["tag"]) == ("bm25", "bm25", "bm25")
    assert (stored["line_count"], stored["topic_count"], stored["description"]) == (4, 2, "BM25")
    assert stored["uploaded_by"] == "eng"
    assert not [name for name in media_root() if name.startswith("staging/")]


def test_the_same_run_file_twice_is_409_naming_the_stored_run(client, run, media_root):
    files_before = media_root()

    response = post_file(client, RUNS_URL, "again.run", RUN, system="other")

    assert response.status_code == 409
    assert response.json() == {
        "detail": "again.run: this file was already uploaded as run bm25/bm25 (same SHA-256).",
        "run": run.pk,
    }
    assert not Job.objects.exists()
    assert media_root() == files_before


def test_a_run_name_the_system_already_has_is_409(client, run):
    response = post_file(client, RUNS_URL, "new.run", OTHER_RUN, system="bm25", name="bm25")

    assert response.status_code == 409
    assert response.json() == {
        "detail": "new.run: system bm25 already has a run named 'bm25'.",
        "run": run.pk,
    }


def test_a_bad_run_file_fails_its_job_with_the_line_errors_and_stores_nothing(
    client, media_root, run_jobs
):
    with run_jobs():
        response = post_file(client, RUNS_URL, "bad.run", b"1 Q0 d1 1 abc t\n", system="bm25")

    assert response.status_code == 202
    job = client.get(response["Location"]).json()
    assert job["status"] == JobStatus.FAILED
    assert job["step"] == "bad.run was not imported."
    assert (job["errors"], job["error_total"]) == (["bad.run:1: score 'abc' is not a number"], 1)
    assert not Run.objects.exists()
    assert media_root() == []


def test_a_run_upload_needs_a_file_and_a_system(client):
    response = client.post(RUNS_URL, {}, format="multipart")

    assert response.status_code == 400
    assert response.json() == {
        "file": ["No file was submitted."],
        "system": ["This field is required."],
    }


def test_deleting_a_run_deletes_its_files_and_evaluations(
    client, run, qrels, media_root, django_capture_on_commit_callbacks
):
    services.evaluate_run(run=run, qrels=qrels, measure_specs=["map"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.delete(f"/api/v1/runs/{run.pk}/")

    assert response.status_code == 204
    assert not Evaluation.objects.exists()
    assert media_root() == []
    assert client.get(f"/api/v1/runs/{run.pk}/").status_code == 404


def test_runs_filter_by_system_and_refuse_a_filter_that_is_not_a_number(client, run, media_root):
    services.import_run(source=OTHER_RUN, filename="dense.run", system="dense")

    filtered = client.get(RUNS_URL, {"system": run.system_id}).json()
    refused = client.get(RUNS_URL, {"system": "bm25"})

    assert [r["id"] for r in filtered["results"]] == [run.pk]
    assert refused.status_code == 400
    assert refused.json() == {"system": [evaluation_api.MESSAGES["whole_number"]]}


def test_listing_runs_costs_the_same_few_queries_however_many_there_are(
    client, run, media_root, django_assert_max_num_queries
):
    services.import_run(source=OTHER_RUN, filename="dense.run", system="dense")
    # 1 session, 2 user, 3 the user's roles, 4 count, 5 the page with systems and uploaders
    with django_assert_max_num_queries(5):
        response = client.get(RUNS_URL)
    assert response.json()["count"] == 2


# --- evaluations ---------------------------------------------------------------------------


def test_scoring_a_run_returns_the_means_and_per_topic_values_of_the_measures(client, run, qrels):
    response = client.post(
        EVALUATIONS_URL,
        {"run": run.pk, "qrels": qrels.pk, "measures": ["ndcg_cut.10", "map"], "gain": "exp"},
        format="json",
    )

    assert response.status_code == 201, response.content
    body = response.json()
    expected = measures.evaluate(
        services.load_qrels_frame(qrels),
        services.load_run_frame(run),
        ["ndcg_cut.10", "map"],
        measures.Options(gain="exp"),
    )
    assert body["measures"] == [
        {"name": "map", "display": "AP"},
        {"name": "ndcg_cut_10", "display": "nDCG@10"},
    ]
    assert body["means"] == pytest.approx(expected.means)
    per_topic = {row["qid"]: row for row in expected.per_topic.iter_rows(named=True)}
    assert body["per_topic"]["1"]["ndcg_cut_10"] == pytest.approx(per_topic["1"]["ndcg_cut_10"])
    assert (body["run_label"], body["qrels_label"], body["topic_count"]) == (
        "bm25/bm25",
        "dl v1",
        2,
    )
    assert body["options"]["gain"] == "exp"
    assert response["Location"] == f"http://testserver/api/v1/evaluations/{body['id']}/"


def test_scoring_the_same_inputs_again_returns_the_stored_evaluation(client, run, qrels):
    request = {"run": run.pk, "qrels": qrels.pk, "measures": ["P.5"]}
    first = client.post(EVALUATIONS_URL, request, format="json")
    again = client.post(EVALUATIONS_URL, request, format="json")

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert Evaluation.objects.count() == 1


def test_the_dashboard_measures_are_the_default(client, run, qrels):
    body = client.post(EVALUATIONS_URL, {"run": run.pk, "qrels": qrels.pk}, format="json").json()

    names = [m["name"] for m in body["measures"]]
    assert names == [
        "map",
        "recip_rank",
        "P_5",
        "P_10",
        "ndcg_cut_1",
        "ndcg_cut_3",
        "ndcg_cut_5",
        "ndcg_cut_10",
        "ndcg_cut_20",
        "ndcg_cut_100",
        "judged_10",
    ]


def test_an_unknown_measure_is_400_with_the_parsers_words(client, run, qrels):
    response = client.post(
        EVALUATIONS_URL,
        {"run": run.pk, "qrels": qrels.pk, "measures": ["ndgc.10"]},
        format="json",
    )

    assert response.status_code == 400
    [message] = response.json()["measures"]
    assert message.startswith("unknown measure 'ndgc' in 'ndgc.10'; known ir_measures names: nDCG,")
    assert "known trec_eval names: runid, num_q," in message


def test_a_measure_of_another_input_format_is_400_on_the_measures_field(client, run, qrels):
    response = client.post(
        EVALUATIONS_URL,
        {"run": run.pk, "qrels": qrels.pk, "measures": ["prefs_simp"]},
        format="json",
    )

    assert response.status_code == 400
    [message] = response.json()["measures"]
    assert message.startswith("measure 'prefs_simp' needs -R prefs or -R qrels_prefs")


def test_evaluation_inputs_are_checked_field_by_field(client, run):
    response = client.post(
        EVALUATIONS_URL,
        {
            "run": 999,
            "qrels": "x",
            "measures": [],
            "gain": "cubic",
            "relevance_level": 0,
            "trec_eval_version": 8,
            "depth": 0,
        },
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {
        "run": ["No run with id 999."],
        "qrels": ["Incorrect type. Expected pk value, received str."],
        "measures": [evaluation_api.MESSAGES["no_measures"]],
        # The words of evaluation.measures.specs, as on every other input shape.
        "gain": [specs.MESSAGES["gain"].format(value="'cubic'")],
        "relevance_level": [specs.MESSAGES["relevance_level"].format(value="0")],
        "trec_eval_version": [specs.MESSAGES["trec_eval_version"].format(value="8")],
        "depth": [specs.MESSAGES["depth"].format(value="0")],
    }


def test_a_run_and_qrels_without_a_common_topic_is_400_not_500(client, qrels, media_root):
    other = services.import_run(source=b"77 Q0 d1 1 1.0 t\n", filename="x.run", system="x")

    response = client.post(EVALUATIONS_URL, {"run": other.pk, "qrels": qrels.pk}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "non_field_errors": [
            "no topic has both relevance judgments and results: check that the qrels and the "
            "run use the same topic ids"
        ]
    }
    assert not Evaluation.objects.exists()


def test_evaluation_list_leaves_out_per_topic_values_and_filters(client, run, qrels, media_root):
    services.evaluate_run(run=run, qrels=qrels, measure_specs=["map"])
    other = services.import_run(source=OTHER_RUN, filename="dense.run", system="dense")
    services.evaluate_run(run=other, qrels=qrels, measure_specs=["map"])

    listed = client.get(EVALUATIONS_URL, {"run": run.pk}).json()

    assert listed["count"] == 1
    [item] = listed["results"]
    assert "per_topic" not in item
    assert item["run"] == run.pk
    assert "per_topic" in client.get(item["url"]).json()


def test_listing_evaluations_costs_the_same_few_queries_however_many_there_are(
    client, run, qrels, media_root, django_assert_max_num_queries
):
    for measure_specs in (["map"], ["P.5"], ["ndcg"]):
        services.evaluate_run(run=run, qrels=qrels, measure_specs=measure_specs)
    # 1 session, 2 user, 3 the user's roles, 4 count, 5 the page with runs, systems and qrels
    with django_assert_max_num_queries(5):
        response = client.get(EVALUATIONS_URL)
    assert response.json()["count"] == 3


# --- token authentication ------------------------------------------------------------------


def test_a_token_authenticates_without_a_session(api, engineer, run):
    client = api()
    _token, key = create_token(user=engineer, name="ci")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert client.get(RUNS_URL).status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    refused = client.get(RUNS_URL)
    assert refused.status_code == 403
    assert refused.json() == {"detail": "Invalid token."}
