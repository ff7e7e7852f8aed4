"""The dashboards over the API: leaderboard, a run's topics, a topic across runs and
comparisons, with the numbers of `manage.py evaluate` and evaluation.analysis.significance; and a run
upload that is scored by the same job. Who may call what is in test_permissions.py."""

import contextlib
import io
import json

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import call_command

from evaluation import dashboards, services, tasks
from evaluation.analysis import significance
from evaluation.measures.specs import MESSAGES
from evaluation.models import Evaluation
from jobs.models import Job, JobStatus
from jobs.services import start_job
from tests.api.conftest import upload
from tests.evaluation.dashboard_data import BM25, DENSE, small_world
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

MEASURES = list(services.DASHBOARD_MEASURES)


@pytest.fixture
def client(api, make_user):
    return api(make_user("eng", "engineer"))


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def evaluate_json(qrels, run) -> dict:
    out = io.StringIO()
    args = ["evaluate", f"{qrels.name}@{qrels.version}", str(run), "-q", "--format", "json"]
    for spec in MEASURES:
        args += ["-m", spec]
    with contextlib.redirect_stdout(out):
        call_command(*args)
    return json.loads(out.getvalue())


def test_the_leaderboard_has_evaluates_means_and_the_stored_intervals(client, world):
    qrels, bm25, dense = world

    body = client.get("/api/v1/leaderboard/", {"qrels": qrels.pk}).json()

    assert body["scoring"] == {
        "qrels": qrels.pk,
        "qrels_label": "dl v1",
        "measures": MEASURES,
        "gain": "linear",
        "relevance_level": 1,
        "complete": False,
        "trec_eval_version": 9,
    }
    assert [m["name"] for m in body["measures"]] == dashboards.output_names(MEASURES)
    rows = {row["run"]: row for row in body["rows"]}
    for run in (bm25, dense):
        assert rows[run.pk]["means"] == {
            name: value
            for name, value in evaluate_json(qrels, run)["all"].items()
            if name in rows[run.pk]["means"]
        }
        stored = Evaluation.objects.get(run=run).intervals
        assert {n: [i["low"], i["high"]] for n, i in rows[run.pk]["intervals"].items()} == stored
        assert "judged_10" in rows[run.pk]["warnings"]
    assert body["unscored_runs"] == 0


def test_the_leaderboard_sorts_and_takes_other_options(client, world):
    qrels, _, _ = world

    body = client.get(
        "/api/v1/leaderboard/", {"qrels": qrels.pk, "gain": "exp", "sort": "system"}
    ).json()

    assert body["rows"] == [] and body["unscored_runs"] == 2
    assert body["scoring"]["gain"] == "exp"


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"measures": "num_ret"}, "measures", "dashboards show means over topics"),
        ({"measures": "ndcg_cut.0"}, "measures", "is not a positive integer"),
        ({"qrels": 999}, "qrels", "No qrels version with id 999."),
        ({"measures": "nDCG@x"}, "measures", "the cutoff 'x' is not a whole number"),
        (
            {"relevance_level": 0},
            "relevance_level",
            MESSAGES["relevance_level"].format(value="'0'"),
        ),
        ({"gain": "log"}, "gain", MESSAGES["gain"].format(value="'log'")),
        ({"complete": "maybe"}, "complete", MESSAGES["complete"].format(value="'maybe'")),
    ],
)
def test_bad_options_are_a_400_naming_them(client, world, params, field, message):
    response = client.get("/api/v1/leaderboard/", params)

    assert response.status_code == 400
    assert message in " ".join(response.json()[field])


def test_a_runs_topics_are_evaluates_worst_first_with_their_unjudged_documents(client, world):
    qrels, bm25, _ = world

    response = client.get(
        f"/api/v1/runs/{bm25.pk}/topics/", {"qrels": qrels.pk, "measure": "P_5", "k": 2}
    )

    body = response.json()
    printed = evaluate_json(qrels, bm25)
    assert (body["measure"], body["k"], body["evaluation"]) == (
        "P_5",
        2,
        Evaluation.objects.get(run=bm25).pk,
    )
    assert body["means"] == {n: printed["all"][n] for n in body["means"]}
    topics = {t["qid"]: t for t in body["topics"]}
    for qid, values in printed["per_topic"].items():
        assert topics[qid]["values"] == {n: values[n] for n in topics[qid]["values"]}
    assert [t["qid"] for t in body["topics"]] == sorted(
        topics, key=lambda q: (topics[q]["values"]["P_5"], q)
    )
    assert topics["1"]["unjudged_docnos"] == ["u5"] and topics["3"]["unjudged_docnos"] == ["u8"]
    assert (topics["1"]["unjudged"], topics["1"]["retrieved"]) == (1, 2)


def test_a_runs_topics_carry_the_residuals_the_run_page_shows(client, world):
    qrels, bm25, _ = world

    body = client.get(
        f"/api/v1/runs/{bm25.pk}/topics/", {"qrels": qrels.pk, "measure": "P_5"}
    ).json()

    # As on the run page (tests/evaluation/test_residual_pages.py): bm25, P@5: topic 1
    # d1 u5 d3 -> 2/5 or 3/5; topic 2 d4 u6 -> 1/5 or 2/5; topic 3 u8 d7 -> 1/5 or 2/5.
    assert body["residual"] == pytest.approx({"worst": 0.8 / 3, "best": 1.4 / 3})
    assert body["top_grade"] == 3  # the highest grade in the small world's qrels
    topics = {t["qid"]: t["residual"] for t in body["topics"]}
    assert topics == {
        "1": pytest.approx({"worst": 0.4, "best": 0.6}),
        "2": pytest.approx({"worst": 0.2, "best": 0.4}),
        "3": pytest.approx({"worst": 0.2, "best": 0.4}),
    }


def test_judged_at_k_has_no_residual_over_the_api(client, world):
    qrels, bm25, _ = world

    body = client.get(
        f"/api/v1/runs/{bm25.pk}/topics/", {"qrels": qrels.pk, "measure": "judged_10"}
    ).json()

    assert body["residual"] is None and body["top_grade"] is None
    assert {t["residual"] for t in body["topics"]} == {None}


def test_the_leaderboard_gives_residuals_on_its_sort_measure_when_asked(client, world):
    qrels, bm25, dense = world
    params = {"qrels": qrels.pk, "sort": "-P_5"}

    plain = client.get("/api/v1/leaderboard/", params).json()
    asked = client.get("/api/v1/leaderboard/", {**params, "residuals": "true"}).json()

    assert plain["residual_measure"] is None
    assert {row["residual"] for row in plain["rows"]} == {None}
    assert asked["residual_measure"] == "P_5"
    rows = {row["run"]: row["residual"] for row in asked["rows"]}
    # The leaderboard page's "if judged" cells: bm25 0.2667-0.4667, dense 0.3000-0.6000.
    assert rows[bm25.pk] == pytest.approx({"worst": 0.8 / 3, "best": 1.4 / 3})
    assert rows[dense.pk] == pytest.approx({"worst": 0.3, "best": 0.6})


def test_the_residuals_flag_is_true_or_false(client, world):
    response = client.get("/api/v1/leaderboard/", {"residuals": "maybe"})

    assert response.status_code == 400
    assert response.json() == {"residuals": ["true or false."]}


def test_a_run_not_scored_with_the_options_is_a_404_naming_it(client, world):
    qrels, bm25, _ = world

    response = client.get(f"/api/v1/runs/{bm25.pk}/topics/", {"qrels": qrels.pk, "complete": 1})

    assert response.status_code == 404
    assert response.json()["detail"] == "Not scored with these options: bm25/bm25."


def test_a_topic_across_runs(client, world):
    qrels, bm25, _ = world

    body = client.get("/api/v1/leaderboard/topics/1/", {"qrels": qrels.pk, "k": 3}).json()

    assert (body["qid"], body["k"], body["judged"]) == ("1", 3, 4)
    assert body["grades"] == {"0": 1, "1": 1, "2": 1, "3": 1}
    assert body["ideal"] == [
        {"docno": "d1", "grade": 3},
        {"docno": "d9", "grade": 2},
        {"docno": "d3", "grade": 1},
    ]
    runs = {r["run"]: r for r in body["runs"]}
    assert runs[bm25.pk]["values"] == Evaluation.objects.get(run=bm25).per_topic["1"]
    assert [(d["docno"], d["grade"]) for d in runs[bm25.pk]["top"]] == [
        ("d1", 3),
        ("u5", None),
        ("d3", 1),
    ]
    assert client.get("/api/v1/leaderboard/topics/404/").status_code == 404


def test_a_comparison_is_significance_on_the_common_topics(client, world):
    qrels, bm25, dense = world

    body = client.get(
        "/api/v1/comparison/",
        {"qrels": qrels.pk, "baseline": bm25.pk, "runs": dense.pk, "measure": "ndcg_cut_10"},
    ).json()

    a = Evaluation.objects.get(run=bm25).per_topic
    b = Evaluation.objects.get(run=dense).per_topic
    expected = significance.compare(
        [a[q]["ndcg_cut_10"] for q in ("1", "3")], [b[q]["ndcg_cut_10"] for q in ("1", "3")]
    )
    assert (body["topics"], body["left_out"], body["permutations"]) == (2, 1, 10_000)
    [c] = body["comparisons"]
    assert c["mean_delta"] == expected.mean_delta
    assert c["randomisation"]["p_value"] == expected.randomisation.p_value
    assert c["t_test"]["statistic"] == expected.t_test.statistic
    assert c["wilcoxon"]["p_value"] == expected.wilcoxon.p_value
    assert c["delta_interval"]["low"] == expected.delta_interval.low
    assert c["cohens_d"] == expected.cohens_d
    assert (c["wins"], c["ties"], c["losses"]) == (expected.wins, expected.ties, expected.losses)
    assert [d["qid"] for d in c["deltas"]] == sorted(
        ("1", "3"), key=lambda q: b[q]["ndcg_cut_10"] - a[q]["ndcg_cut_10"]
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "baseline"),
        ({"baseline": "x", "runs": "1"}, "baseline"),
        ({"baseline": "{bm25}", "runs": "{bm25}"}, "runs"),
        ({"baseline": "{bm25}", "runs": "999"}, "runs"),
    ],
)
def test_a_comparison_needs_a_baseline_and_other_known_runs(client, world, params, field):
    qrels, bm25, _ = world
    params = {k: v.format(bm25=bm25.pk) for k, v in params.items()}

    response = client.get("/api/v1/comparison/", {"qrels": qrels.pk, **params})

    assert response.status_code == 400 and field in response.json()


def test_comparing_an_unscored_run_is_a_404(client, world):
    qrels, bm25, dense = world
    Evaluation.objects.filter(run=dense).delete()

    response = client.get(
        "/api/v1/comparison/", {"qrels": qrels.pk, "baseline": bm25.pk, "runs": dense.pk}
    )

    assert response.status_code == 404 and "dense/dense" in response.json()["detail"]


def test_an_upload_with_qrels_is_imported_and_scored_by_one_job(client, world, run_jobs):
    qrels, _, _ = world

    with run_jobs():
        response = client.post(
            "/api/v1/runs/",
            {
                "file": upload("new.run", BM25.replace(b"bm25", b"new")),
                "system": "new",
                "qrels": qrels.pk,
            },
            format="multipart",
        )

    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["id"])
    assert (job.kind, job.status) == ("evaluation.import_and_score", JobStatus.SUCCEEDED)
    body = client.get("/api/v1/leaderboard/", {"qrels": qrels.pk}).json()
    assert job.result["run"] in {row["run"] for row in body["rows"]}


def test_an_upload_without_qrels_only_imports(client, world, run_jobs):
    with run_jobs():
        response = client.post(
            "/api/v1/runs/",
            {"file": upload("new.run", DENSE.replace(b"dense", b"x")), "system": "x"},
            format="multipart",
        )

    job = Job.objects.get(pk=response.json()["id"])
    assert (job.kind, job.status) == ("evaluation.import_run", JobStatus.SUCCEEDED)
    # One import task for both kinds of upload: scoring is its optional last step.
    assert job.task == "evaluation.tasks.import_and_score_task"
    assert job.params["scoring"] is None
    assert job.result["summary"].startswith("Imported new.run as run x/new: 6 lines")
    assert Evaluation.objects.count() == 2


def test_a_job_stored_with_the_old_import_task_still_runs(world, run_jobs, make_user):
    """Jobs keep their task's path, and a retry starts that path again: the name stays."""
    staged = default_storage.save(
        "staging/runs/old.run", ContentFile(DENSE.replace(b"dense", b"o"))
    )
    with run_jobs():
        job = start_job(
            kind="evaluation.import_run",
            title="Import run old.run",
            user=make_user("old", "engineer"),
            task=tasks.import_run_task,
            staged=staged,
            filename="old.run",
            system="old",
        )

    job.refresh_from_db()
    assert job.task == "evaluation.tasks.import_run_task"
    assert job.status == JobStatus.SUCCEEDED, job.step
    assert job.result["summary"].startswith("Imported old.run as run old/old")
    assert not default_storage.exists(staged)


def test_an_upload_with_bad_scoring_options_is_refused_before_anything_is_stored(client, world):
    qrels, _, _ = world

    response = client.post(
        "/api/v1/runs/",
        {
            "file": upload("n.run", b"1 Q0 a 1 1 t\n"),
            "system": "x",
            "qrels": qrels.pk,
            "measures": "num_q",
        },
        format="multipart",
    )

    assert response.status_code == 400 and "measures" in response.json()
    assert not Job.objects.exists()


# --- closing the loop: unjudged documents to a campaign's pool -----------------------------


@pytest.fixture
def led_campaign(make_user):
    from annotation import services as annotation
    from annotation.models import Topic

    lead = make_user("lea", "lead")
    campaign = annotation.create_campaign(lead=lead, name="Fill the holes")
    for qid in ("1", "3"):  # no topic 2: its pairs are left out and named
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    return lead, campaign


def test_a_lead_sends_a_runs_unjudged_top_k_to_a_campaign(api, world, led_campaign):
    qrels, bm25, _ = world
    lead, campaign = led_campaign

    response = api(lead).post(
        "/api/v1/unjudged/",
        {"qrels": qrels.pk, "campaign": campaign.pk, "run": bm25.pk, "k": 2},
        format="json",
    )

    assert response.status_code == 200, response.content
    # bm25's top 2: u5 (topic 1), u6 (topic 2, not in the campaign), u8 (topic 3)
    assert response.json() == {
        "unjudged": 3,
        "added": 2,
        "already": 0,
        "assigned": 0,
        "left_out": 1,
        "missing_qids": ["2"],
    }
    pool = set(campaign.pairs.values_list("topic__qid", "document__docno"))
    assert pool == {("1", "u5"), ("3", "u8")}
    again = api(lead).post(
        "/api/v1/unjudged/",
        {"qrels": qrels.pk, "campaign": campaign.pk, "run": bm25.pk, "k": 2},
        format="json",
    )
    assert (again.json()["added"], again.json()["already"]) == (0, 2), "sending twice adds nothing"


def test_more_unjudged_pairs_than_a_request_may_write_are_a_413_and_nothing_is_sent(
    api, world, led_campaign, settings
):
    """At most SYNC_WRITE_ROWS pairs per request (jobs/services/limits.py): the two kept pairs of
    bm25's top 2 are one too many here, and the answer says what to do instead."""
    settings.SYNC_WRITE_ROWS = 1
    qrels, bm25, _ = world
    lead, campaign = led_campaign

    response = api(lead).post(
        "/api/v1/unjudged/",
        {"qrels": qrels.pk, "campaign": campaign.pk, "run": bm25.pk, "k": 2},
        format="json",
    )

    assert response.status_code == 413, response.content
    detail = response.json()["detail"]
    assert detail.startswith("2 unjudged pairs are more than one request may write: at most 1")
    assert "a smaller k, or one topic" in detail and "/pairs/" in detail
    assert not campaign.pairs.exists()


def test_a_lead_sends_a_topics_unjudged_documents_of_every_scored_run(api, world, led_campaign):
    qrels, _, _ = world
    lead, campaign = led_campaign

    response = api(lead).post(
        "/api/v1/unjudged/",
        {"qrels": qrels.pk, "campaign": campaign.pk, "qid": "3", "k": 3},
        format="json",
    )

    assert response.status_code == 200, response.content
    pool = set(campaign.pairs.values_list("document__docno", flat=True))
    assert pool == {"u8", "u10", "u11", "u12"}


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"run": 1, "qid": "3"}, 400, "Name either a run or a topic"),
        ({}, 400, "Name either a run or a topic"),
        ({"run": 999999}, 404, "No run with id 999999."),
        ({"run": 1, "campaign": 999999}, 404, "No such campaign among those you lead."),
        ({"run": 1, "k": 0}, 400, "greater than or equal to 1"),
    ],
)
def test_sending_unjudged_says_what_is_wrong(api, world, led_campaign, body, status, words):
    qrels, bm25, _ = world
    lead, campaign = led_campaign
    data = {"qrels": qrels.pk, "campaign": campaign.pk, "k": 2, **body}
    if data.get("run") == 1:
        data["run"] = bm25.pk

    response = api(lead).post("/api/v1/unjudged/", data, format="json")

    assert response.status_code == status
    assert words in response.content.decode()
    assert not campaign.pairs.exists()
