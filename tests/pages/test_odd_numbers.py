"""Numbers in query strings and forms that str.isdigit() accepts but int() refuses ("²"), or
that overflow SQLite's integers, are a 4xx or ignored, never a 500 (common/ids.py)."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


BIG = "99999999999999999999999"
C = "/campaigns/{campaign}"


@pytest.mark.parametrize("odd", ["²", BIG])
@pytest.mark.parametrize(
    ("role", "method", "path", "field"),
    [
        ("lead", "GET", C + "/adjudicate/", "topic"),
        ("lead", "GET", C + "/download/provenance/", "publication"),
        ("lead", "POST", C + "/calibration/", "pair"),
        ("lead", "POST", C + "/adjudicate/{pair}/", "based_on"),
        ("lead", "GET", "/evaluation/qrels/{qrels}/download/?binary=1", "threshold"),
        ("engineer", "GET", "/evaluation/runs/upload/status/", "jobs"),
        ("engineer", "POST", "/evaluation/runs/upload/", "system"),
        # found on the real demo's pages (a session later): lists of run ids read with
        # str.isdigit() and int()
        ("engineer", "GET", "/evaluation/compare/", "runs"),
        ("engineer", "GET", "/evaluation/compare/?baseline={run}", "runs"),
        ("engineer", "GET", "/evaluation/compare/", "baseline"),
        ("engineer", "GET", "/evaluation/diff/?a={run}", "runs"),
        ("engineer", "GET", "/evaluation/diff/", "a"),
        ("engineer", "GET", "/evaluation/topics/{qid}/", "runs"),
        ("engineer", "GET", "/evaluation/topics/{qid}/", "k"),
        ("engineer", "GET", "/evaluation/leaderboard/", "k"),
        ("engineer", "GET", "/evaluation/leaderboard/", "depth"),
        ("engineer", "GET", "/evaluation/runs/{run}/", "k"),
        ("engineer", "GET", "/evaluation/rankings/", "old"),
        ("engineer", "GET", "/evaluation/rankings/", "k"),
        ("engineer", "POST", "/evaluation/leaderboard/score/", "runs"),
        ("engineer", "POST", "/evaluation/diff/send/", "a"),
    ],
)
def test_an_odd_number_is_never_a_server_error(world, role, method, path, field, odd):
    client = Client(raise_request_exception=False)
    client.force_login(world.users[role])
    url = path.format(**world.ids)
    if method == "GET":
        joiner = "&" if "?" in url else "?"
        response = client.get(f"{url}{joiner}{field}={odd}")
    else:
        response = client.post(url, {field: odd, "grade": "1"})
    assert response.status_code < 500, response.content[:300]


@pytest.mark.parametrize("odd", ["²", BIG])
def test_the_apis_disagreement_queue_refuses_an_odd_topic_with_a_400(world, api, odd):
    """Found by st run against gunicorn: ?topic= past 2**63 - 1 overflowed SQLite (a 500)."""
    url = f"/api/v1/campaigns/{world.ids['campaign']}/disagreements/?topic={odd}"
    response = api(world.users["lead"]).get(url)
    assert response.status_code == 400, response.content[:300]
    assert "topic" in response.json()


@pytest.mark.parametrize("odd", ["²", BIG])
@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/comparison/?baseline={odd}&runs={run}",
        "/api/v1/comparison/?baseline={run}&runs={odd}",
        "/api/v1/rankings/?old={qrels}&new={qrels}&runs={odd}",
        "/api/v1/leaderboard/topics/{qid}/?runs={odd}",
        "/api/v1/leaderboard/topics/{qid}/?k={odd}",
    ],
)
def test_the_dashboard_apis_refuse_an_odd_number_with_a_400(world, api, path, odd):
    response = api(world.users["engineer"]).get(path.format(odd=odd, **world.ids))
    assert response.status_code == 400, (response.status_code, response.content[:300])
