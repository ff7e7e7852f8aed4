"""GET /api/v1/diff/ and POST /api/v1/diff/unjudged/ through the HTTP client: the page's
numbers as JSON, and both runs' unjudged top k sent to a campaign's pool."""

import math

import pytest
from rest_framework.test import APIClient

from annotation import services as annotation
from annotation.models import Pair, Topic
from evaluation.analysis import rundiff
from tests.evaluation.dashboard_data import small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def client_for(account) -> APIClient:
    client = APIClient()
    client.force_login(account)
    return client


@pytest.fixture
def engineer_api(django_user_model):
    return client_for(user(django_user_model, "eng", "engineer"))


def test_the_diff_lists_every_topic_most_different_first(engineer_api, world):
    qrels, bm25, dense = world

    response = engineer_api.get(
        "/api/v1/diff/", {"qrels": qrels.pk, "a": bm25.pk, "b": dense.pk, "order": "rbo"}
    )

    assert response.status_code == 200
    body = response.json()
    assert (body["a"], body["b"], body["measure"], body["k"], body["depth"]) == (
        bm25.pk,
        dense.pk,
        "ndcg_cut_10",
        10,
        20,
    )
    rbos = [t["rbo"] for t in body["topics"]]
    assert rbos == sorted(rbos)
    one = next(t for t in body["topics"] if t["qid"] == "1")
    assert one["rbo"] == pytest.approx(rundiff.rbo_ext(["d1", "u5", "d3"], ["d9", "d1", "d3"]))
    assert one["tau_ap"] == pytest.approx(rundiff.tau_ap(["d1", "u5", "d3"], ["d9", "d1", "d3"]))
    assert (one["only_a"], one["only_b"]) == (1, 1)
    two = next(t for t in body["topics"] if t["qid"] == "2")
    assert two["delta"] is None and two["value_b"] is None
    assert body["topic"]["qid"] == body["topics"][0]["qid"]
    assert body["totals"]["topics"] == 3


def test_a_topic_is_listed_rank_by_rank_with_bounds(engineer_api, world):
    qrels, bm25, dense = world

    body = engineer_api.get(
        "/api/v1/diff/",
        {"qrels": qrels.pk, "a": bm25.pk, "b": dense.pk, "qid": "3", "measure": "P_5"},
    ).json()

    rows = body["topic"]["rows"]
    assert [(r["docno_a"], r["docno_b"]) for r in rows] == [
        ("u8", "u10"),
        ("d7", "u11"),
        (None, "u12"),
    ]
    assert (rows[1]["grade_a"], rows[0]["grade_a"]) == (1, None)
    assert body["topic"]["bounds_a"] == {"worst": pytest.approx(0.2), "best": pytest.approx(0.4)}
    assert body["topic"]["bounds_b"] == {"worst": 0.0, "best": pytest.approx(0.6)}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"order": "kendall"}, "order"),
        ({"p": 1}, "p"),
        ({"depth": 2, "k": 10}, "depth"),
        ({"qid": "nope"}, "qid"),
        ({"b": "x"}, "b"),
    ],
)
def test_bad_parameters_are_400s_naming_the_field(engineer_api, world, params, field):
    qrels, bm25, dense = world

    response = engineer_api.get(
        "/api/v1/diff/", {"qrels": qrels.pk, "a": bm25.pk, "b": dense.pk, **params}
    )

    assert response.status_code == 400 and field in response.json()


def test_the_same_run_twice_is_a_400_and_an_unknown_run_a_404(engineer_api, world):
    qrels, bm25, _ = world

    same = engineer_api.get("/api/v1/diff/", {"qrels": qrels.pk, "a": bm25.pk, "b": bm25.pk})
    unknown = engineer_api.get("/api/v1/diff/", {"qrels": qrels.pk, "a": bm25.pk, "b": 99999})

    assert same.status_code == 400 and "different runs" in str(same.json())
    assert unknown.status_code == 404


def test_unscored_runs_are_a_404_naming_them(engineer_api, world):
    qrels, bm25, dense = world

    response = engineer_api.get(
        "/api/v1/diff/", {"qrels": qrels.pk, "a": bm25.pk, "b": dense.pk, "gain": "exp"}
    )

    assert response.status_code == 404 and "bm25/bm25" in response.json()["detail"]


def test_a_lead_sends_both_runs_unjudged_top_k(django_user_model, world):
    qrels, bm25, dense = world
    lead = user(django_user_model, "lea", "lead")
    campaign = annotation.create_campaign(lead=lead, name="Pool", judges=[])
    Topic.objects.create(campaign=campaign, qid="3", query="three")
    body = {"qrels": qrels.pk, "campaign": campaign.pk, "a": bm25.pk, "b": dense.pk, "k": 2}

    response = client_for(lead).post("/api/v1/diff/unjudged/", {**body, "qid": "3"}, format="json")
    everything = client_for(lead).post("/api/v1/diff/unjudged/", body, format="json")

    assert response.status_code == 200
    assert response.json() == {
        "unjudged": 3,  # u8 (bm25), u10 and u11 (dense's top 2)
        "added": 3,
        "already": 0,
        "assigned": 0,
        "left_out": 0,
        "missing_qids": [],
    }
    assert everything.json()["missing_qids"] == ["1", "2"]
    assert Pair.objects.filter(campaign=campaign).count() == 3


def test_an_engineer_leads_no_campaign_and_finds_none(engineer_api, world, django_user_model):
    qrels, bm25, dense = world
    campaign = annotation.create_campaign(
        lead=user(django_user_model, "lea", "lead"), name="Pool", judges=[]
    )

    response = engineer_api.post(
        "/api/v1/diff/unjudged/",
        {"qrels": qrels.pk, "campaign": campaign.pk, "a": bm25.pk, "b": dense.pk, "k": 2},
        format="json",
    )

    assert response.status_code == 404


def test_tau_ap_is_null_when_fewer_than_two_documents_are_shared(engineer_api, world):
    qrels, bm25, dense = world

    body = engineer_api.get(
        "/api/v1/diff/", {"qrels": qrels.pk, "a": bm25.pk, "b": dense.pk, "order": "tau_ap"}
    ).json()

    three = next(t for t in body["topics"] if t["qid"] == "3")
    assert three["tau_ap"] is None and three["common"] == 0
    assert body["topics"][0]["tau_ap"] is None  # undefined counts as most different
    assert not any(isinstance(t["rbo"], float) and math.isnan(t["rbo"]) for t in body["topics"])
