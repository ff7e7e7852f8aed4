"""GET /api/v1/leaderboard/download/ and POST /api/v1/leaderboard/check/ through the HTTP
client."""

import io

import pytest
from rest_framework.test import APIClient

from evaluation.trec import leaderboards as formats
from tests.evaluation.dashboard_data import small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


@pytest.fixture
def api(django_user_model):
    client = APIClient()
    client.force_login(user(django_user_model, "eng", "engineer"))
    return client


def upload(data: bytes, name="theirs.tot"):
    handle = io.BytesIO(data)
    handle.name = name
    return handle


@pytest.mark.parametrize("layout", formats.LAYOUTS)
def test_a_download_checks_as_the_same(api, world, layout):
    qrels, _, _ = world
    text = api.get("/api/v1/leaderboard/download/", {"qrels": qrels.pk, "layout": layout})
    assert text.status_code == 200

    response = api.post(
        "/api/v1/leaderboard/check/",
        {"qrels": qrels.pk, "layout": layout, "file": upload(text.content)},
        format="multipart",
    )

    body = response.json()
    assert response.status_code == 200
    assert body["compared"] == body["same"] > 0 and body["differences"] == []
    assert (body["only_ours"], body["only_theirs"]) == (0, 0)


def test_differences_are_listed_largest_first(api, world):
    qrels, _, _ = world
    data = b"bm25/bm25 P_5 1 0.9\nbm25/bm25 P_5 3 0.3\nbm25/bm25 P_5 2 0.2\n"

    body = api.post(
        "/api/v1/leaderboard/check/",
        {"qrels": qrels.pk, "layout": "tot", "file": upload(data)},
        format="multipart",
    ).json()

    # bm25 P@5: topic 1 0.4, topic 2 0.2, topic 3 0.2
    assert [(d["topic"], round(d["delta"], 4)) for d in body["differences"]] == [
        ("1", 0.5),
        ("3", 0.1),
    ]
    assert (body["compared"], body["same"]) == (3, 1)


def test_a_bad_file_is_a_400_with_file_line_errors(api, world):
    qrels, _, _ = world

    response = api.post(
        "/api/v1/leaderboard/check/",
        {"qrels": qrels.pk, "layout": "jsonl", "file": upload(b'{"run_id": 1}\n[]\n', "x.jsonl")},
        format="multipart",
    )

    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            "x.jsonl:1: missing topic_id, measure, value",
            "x.jsonl:2: expected an object {run_id, topic_id, measure, value}",
        ],
        "total": 2,
    }


def test_a_bad_layout_is_a_400_naming_it(api, world):
    qrels, _, _ = world

    download = api.get("/api/v1/leaderboard/download/", {"qrels": qrels.pk, "layout": "csv"})
    check = api.post(
        "/api/v1/leaderboard/check/",
        {"qrels": qrels.pk, "layout": "csv", "file": upload(b"x")},
        format="multipart",
    )

    assert download.status_code == 400 and "layout" in download.json()
    assert check.status_code == 400 and "layout" in check.json()


def test_parameters_in_the_query_string_of_a_post_are_refused_by_name(api, world):
    """They used to be ignored: the check ran against the newest qrels version instead."""
    qrels, _, _ = world
    text = api.get("/api/v1/leaderboard/download/", {"qrels": qrels.pk, "layout": "tot"}).content

    response = api.post(
        f"/api/v1/leaderboard/check/?qrels={qrels.pk}&measure=P_5",
        {"layout": "tot", "file": upload(text)},
        format="multipart",
    )

    assert response.status_code == 400
    message = "Send this in the request body with the other fields, not in the query string."
    assert response.json() == {"qrels": [message], "measure": [message]}


def test_a_post_with_a_query_string_is_refused_only_after_the_login_is_checked(client, world):
    response = client.post("/api/v1/leaderboard/check/?qrels=1", {"layout": "tot"})
    assert response.status_code in (401, 403)
