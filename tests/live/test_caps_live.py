"""Issue 27's caps and leaks against a live server: gunicorn with DEBUG=0, as the Dockerfile
runs it, on a loopback port of its own, on this test's database (findings 9, 10 and 14).

9. A scale of 200 grades is refused with the cap in the message; one of 101 grades (the cap)
   is accepted, and the agreement of grades past 99 answers 200 with kappa's value.
10. Another lead's document is a 404 on the dashboards' document panel, as from the API, and
    the query of another lead's topic shows nowhere on an engineer's pages.
14. A campaign description of 9 MB is a 400 naming the field and the limit, and a JSON body
    that gives a key twice is a 400 naming the key.
"""

import http.client
import json
import secrets
import socket

import pytest
from django.test import Client
from sklearn.metrics import cohen_kappa_score

from accounts.services.tokens import create_token
from annotation import services as annotation
from annotation.models import Assignment, Campaign, Topic
from annotation.scales import MAX_GRADES
from tests.faults.conftest import output, process_env, start, stop, wait_for

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def send(port: int, method: str, path: str, body: bytes = b"", headers=None):
    """One raw request; (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def answering(port: int) -> bool:
    """gunicorn accepts connections a moment before its worker answers."""
    try:
        return send(port, "GET", "/accounts/login/")[0] == 200
    except OSError:
        return False


@pytest.fixture
def gunicorn(settings, tmp_path, media_root):
    """The port of a gunicorn (DEBUG=0) on this test's database and media."""
    secret = secrets.token_urlsafe(40)
    settings.SECRET_KEY = secret  # the sessions made here must be valid there
    port = free_port()
    env = process_env(
        settings,
        DEBUG="0",
        SECRET_KEY=secret,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        SECURE_COOKIES="0",
        SECURE_HSTS_SECONDS="0",
    )
    server = start(
        [
            "-m",
            "gunicorn",
            "config.wsgi",
            f"--bind=127.0.0.1:{port}",
            "--workers=1",
            "--timeout=120",
            f"--control-socket={tmp_path / 'gunicorn.ctl'}",
            "--log-level=warning",
        ],
        env,
        tmp_path / "gunicorn.log",
    )
    try:
        wait_for(lambda: answering(port), seconds=60, what="gunicorn to answer", process=server)
        yield port
    finally:
        stop(server)
        gunicorn.log = output(server)


def bearer(user) -> dict:
    return {
        "Authorization": f"Bearer {create_token(user=user, name=f'live {secrets.token_hex(4)}')[1]}"
    }


def session(user) -> dict:
    """A logged-in session's cookie (stored in the database the server reads)."""
    client = Client()
    client.force_login(user)
    return {"Cookie": f"sessionid={client.cookies['sessionid'].value}"}


def post_json(port, path, body: bytes, user) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **bearer(user)}
    status, answer = send(port, "POST", path, body, headers)
    return status, json.loads(answer)


def scale_of(n: int) -> list[dict]:
    return [{"grade": g, "label": f"{g}", "definition": ""} for g in range(n)]


# --- 9: scales and agreement -------------------------------------------------------------------


def test_a_200_grade_scale_is_refused_and_the_largest_allowed_one_is_agreed_on(gunicorn, make_user):
    lead = make_user("lea", "lead")
    judges = [make_user(name, "judge") for name in ("ann", "bob", "cy")]

    status, refused = post_json(
        gunicorn,
        "/api/v1/campaigns/",
        json.dumps({"name": "Two hundred", "scale": scale_of(200)}).encode(),
        lead,
    )
    assert status == 400, refused
    assert refused == {
        "scale": [f"a scale has at most {MAX_GRADES} grades (0 to 100); this one has 200"]
    }
    assert not Campaign.objects.filter(name="Two hundred").exists()

    body = {
        "name": "Percent",
        "scale": scale_of(MAX_GRADES),
        "overlap": 3,
        "relevance_threshold": 50,
        "judges": [j.pk for j in judges],
    }
    status, created = post_json(gunicorn, "/api/v1/campaigns/", json.dumps(body).encode(), lead)
    assert status == 201, created
    campaign = Campaign.objects.get(pk=created["id"])
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    annotation.add_pairs(
        campaign=campaign,
        pairs=[("1", "d1"), ("1", "d2"), ("2", "d3"), ("2", "d4")],
        source="imported",
    )
    grades = {"ann": [100, 0, 60, 20], "bob": [95, 3, 70, 35], "cy": [99, 1, 40, 10]}
    for judge in judges:
        mine = Assignment.objects.filter(judge=judge).order_by("pair__document__docno")
        for assignment, grade in zip(mine, grades[judge.username], strict=True):
            annotation.record_judgment(assignment_id=assignment.pk, judge=judge, grade=grade)

    status, answer = send(
        gunicorn, "GET", f"/api/v1/campaigns/{campaign.pk}/agreement/", headers=bearer(lead)
    )
    assert status == 200, answer[:500]
    report = json.loads(answer)
    assert report["scale"] == list(range(MAX_GRADES))
    kappas = {(row["judge_a"], row["judge_b"]): row["kappa"]["value"] for row in report["pairwise"]}
    oracle = cohen_kappa_score(
        grades["ann"], grades["bob"], labels=list(range(MAX_GRADES)), weights="quadratic"
    )
    assert abs(kappas["ann", "bob"] - oracle) < 1e-12
    status, page = send(
        gunicorn, "GET", f"/campaigns/{campaign.pk}/agreement/", headers=session(lead)
    )
    assert status == 200, page[:500]


# --- 10: documents and topics of another campaign ------------------------------------------------


def test_another_leads_document_and_topic_never_reach_a_lead_or_an_engineer(gunicorn, world):
    campaign, document = world.campaign, world.document  # "Robust", d1 "First.", topic 1
    q = f"qrels={world.qrels.pk}&measures=ndcg_cut.10&measures=map"
    lead = session(world.users["lead"])
    assert send(gunicorn, "GET", "/evaluation/documents/?docno=d1&qid=1", headers=lead)[0] == 200

    for who in ("other_lead", "engineer"):
        user = world.users[who]
        status, body = send(
            gunicorn, "GET", "/evaluation/documents/?docno=d1&qid=1", headers=session(user)
        )
        api, _ = send(
            gunicorn,
            "GET",
            f"/api/v1/campaigns/{campaign.pk}/documents/{document.pk}/",
            headers=bearer(user),
        )
        assert (who, status, api) == (who, 404, 404)
        assert b"First." not in body and b"Robust" not in body
        status, page = send(gunicorn, "GET", f"/evaluation/topics/1/?{q}", headers=session(user))
        assert status == 200 and b"cheap flights" not in page, who
        status, rows = send(
            gunicorn, "GET", f"/api/v1/runs/{world.run.pk}/topics/?{q}", headers=bearer(user)
        )
        assert status == 200
        assert {row["qid"]: row["query"] for row in json.loads(rows)["topics"]} == {
            "1": "",
            "2": "",
        }


# --- 14: free text and duplicate keys ----------------------------------------------------------


def test_a_9_mb_description_and_a_key_given_twice_are_400s_that_say_why(gunicorn, make_user):
    lead = make_user("lea", "lead")
    description = "x" * (9 << 20)

    status, answer = post_json(
        gunicorn,
        "/api/v1/campaigns/",
        json.dumps({"name": "Huge", "description": description}).encode(),
        lead,
    )
    assert status == 400, answer
    assert answer == {"description": ["Ensure this field has no more than 10000 characters."]}

    status, answer = post_json(
        gunicorn, "/api/v1/campaigns/", b'{"name": "First", "name": "Second"}', lead
    )
    assert status == 400
    assert answer == {
        "detail": "JSON parse error - duplicate key 'name' (a key may appear once per object)."
    }
    assert not Campaign.objects.exists()
