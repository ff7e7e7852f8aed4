"""Issue 27's machine-judge findings against a live server: gunicorn with DEBUG=0 and a task
worker (``manage.py db_worker``) on loopback, a lead with an API token, and "the lead's own
server" (a scripted chat server, tests/llm_server.py) on a loopback port the operator allowed,
standing in for a host on the internet. Every other loopback port (the app itself, PostgreSQL,
Redis) stays as production has it: out of reach.

1. A lead cannot make a machine judge read any environment variable but the operator's
   QRELSMITH_LLM_KEY_* ones, and the API never says whether a variable is set.
2. A key an admin stored never follows a base URL the lead moved to their own server.
3. Base URLs inside the server's network are refused when configured (literal addresses in
   every spelling, credentials, ``?``) or when connecting (names that resolve inside), and no
   byte of an internal answer comes back.
4. A key that would break its header (CR/LF) is refused without being echoed.
"""

import json
import secrets

import pytest

from accounts.services.tokens import create_token
from annotation.models import MachineAnswer, MachineJudge
from annotation.services import machine_judges
from tests.faults.conftest import process_env, start, stop, wait_for
from tests.live.test_front_door_live import answering, free_port, listening, send
from tests.llm_server import ChatServer

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

OPS_KEY = "sk-operator-shared-key-0123456789"
ADMIN_KEY = "sk-admin-stored-key-9876543210"


@pytest.fixture
def attacker():
    """The lead's own server, which would love to receive the server's secrets."""
    with ChatServer(key=None) as server:
        yield server


@pytest.fixture
def live(settings, tmp_path, media_root, attacker):
    """(port, secret key) of gunicorn (DEBUG=0) with a task worker beside it."""
    secret = secrets.token_urlsafe(40)
    settings.SECRET_KEY = secret
    attacker_port = attacker.base_url.split(":")[2].split("/")[0]
    env = process_env(
        settings,
        DEBUG="0",
        SECRET_KEY=secret,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        SECURE_COOKIES="0",
        SECURE_HSTS_SECONDS="0",
        TASKS_BACKEND="django_tasks_db.DatabaseBackend",
        OUTBOUND_ALLOW=f"127.0.0.1:{attacker_port}",
        QRELSMITH_LLM_KEY_OPS=OPS_KEY,
    )
    port = free_port()
    gunicorn = start(
        [
            "-m",
            "gunicorn",
            "config.wsgi",
            f"--bind=127.0.0.1:{port}",
            "--workers=2",
            f"--control-socket={tmp_path / 'gunicorn.ctl'}",
            "--log-level=warning",
        ],
        env,
        tmp_path / "gunicorn.log",
    )
    worker = start(
        ["manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.2"],
        env,
        tmp_path / "worker.log",
    )
    try:
        wait_for(lambda: listening(port), seconds=60, what="gunicorn", process=gunicorn)
        wait_for(lambda: answering(port), seconds=30, what="gunicorn to answer")
        yield port, secret
    finally:
        stop(gunicorn)
        stop(worker)


def api(port, token, method, path, data=None):
    headers = {"Authorization": f"Bearer {token}"}
    body = b""
    if data is not None:
        headers["Content-Type"] = "application/json"
        body = json.dumps(data).encode()
    status, _, answer = send(port, method, path, body, headers)
    return status, answer.decode()


def finished(port, token, job) -> dict:
    result = {}

    def done() -> bool:
        _status, text = api(port, token, "GET", f"/api/v1/jobs/{job}/")
        result.update(json.loads(text))
        return result["status"] in ("succeeded", "failed")

    wait_for(done, seconds=60, what=f"job {job} to end")
    return result


def test_a_lead_cannot_turn_a_machine_judge_against_the_server(live, world, attacker):
    port, secret_key = live
    lead = world.users["lead"]
    token = create_token(user=lead, name="attack")[1]
    base = f"/api/v1/campaigns/{world.campaign.pk}/machine-judges/"

    # 1. The server's own variables cannot be named.
    for name in ("SECRET_KEY", "DATABASE_URL", "PATH", "S3_SECRET_ACCESS_KEY", "REDIS_URL"):
        status, text = api(
            port,
            token,
            "POST",
            base,
            {
                "name": f"steal-{name}",
                "model_name": "m",
                "base_url": attacker.base_url,
                "api_key_env": name,
            },
        )
        assert status == 400 and "QRELSMITH_LLM_KEY_<NAME>" in text, (name, status, text)
    assert not MachineJudge.objects.filter(judge__name__startswith="steal").exists()
    # The operator's variable may be named; the API never says whether it is set.
    status, text = api(
        port,
        token,
        "POST",
        base,
        {
            "name": "ops",
            "model_name": "m",
            "base_url": "https://llm.example.invalid/v1",
            "api_key_env": "QRELSMITH_LLM_KEY_OPS",
        },
    )
    assert status == 201 and "(set)" not in text and OPS_KEY not in text

    # 2. A key an admin stored stays behind when the lead moves the base URL.
    stored = machine_judges.create_machine_judge(
        campaign=world.campaign,
        name="admins-judge",
        model_name="m",
        base_url="https://llm.example.invalid/v1",
        api_key=ADMIN_KEY,
    )
    status, text = api(port, token, "PATCH", f"{base}{stored.pk}/", {"base_url": attacker.base_url})
    assert status == 200 and "none (the endpoint needs no key)" in text
    status, text = api(port, token, "POST", f"{base}{stored.pk}/run/", {"scope": "pool"})
    assert status == 202, text
    job = finished(port, token, json.loads(text)["id"])
    assert job["status"] == "succeeded", job
    assert attacker.requests, "the run reached the lead's server"
    seen = " ".join(attacker.auth_seen) + json.dumps(attacker.requests)
    for leaked in (ADMIN_KEY, secret_key, OPS_KEY):
        assert leaked not in seen

    # 3. Addresses inside the server's network: refused when written as addresses...
    inside = [
        f"http://127.0.0.1:{port}/api/v1",
        f"http://2130706433:{port}/api/v1",
        f"http://0x7f.1:{port}/api/v1",
        f"http://[::1]:{port}/api/v1",
        f"http://[::ffff:127.0.0.1]:{port}/api/v1",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/v1",
        "http://127.0.0.1:5432/v1",
        f"http://lead:pw@{attacker.base_url.removeprefix('http://')}",
        f"{attacker.base_url}?",
        f"{attacker.base_url}#",
    ]
    for url in inside:
        status, text = api(port, token, "PATCH", f"{base}{stored.pk}/", {"base_url": url})
        assert status == 400, (url, status, text)
    # ... and when a name resolves inside: refused at connection, no byte of the answer kept.
    status, text = api(
        port, token, "PATCH", f"{base}{stored.pk}/", {"base_url": f"http://localhost:{port}/api/v1"}
    )
    assert status == 200, text
    MachineAnswer.objects.filter(machine=stored).delete()
    from annotation.models import ExternalGrade

    ExternalGrade.objects.filter(judge=stored.judge).delete()
    status, text = api(port, token, "POST", f"{base}{stored.pk}/run/", {"scope": "pool"})
    assert status == 202, text
    finished(port, token, json.loads(text)["id"])
    answers = list(
        MachineAnswer.objects.filter(machine=stored)
        .exclude(failure="no_text")  # d1 alone has text
        .values("failure", "reason", "raw")
    )
    assert answers and all(a["failure"] == "unreachable" for a in answers), answers
    assert all("does not reach" in a["reason"] and a["raw"] == "" for a in answers)
    status, text = api(port, token, "GET", f"{base}{stored.pk}/answers/?outcome=failed")
    assert status == 200 and "campaigns" not in text.replace(base, "")

    # 4. A key with a line break is refused, never echoed.
    status, text = api(
        port,
        token,
        "POST",
        base,
        {
            "name": "crlf",
            "model_name": "m",
            "base_url": attacker.base_url,
            "api_key": "sk-crlf-secret\r\nX-Injected: 1",
        },
    )
    assert status == 400 and "sk-crlf-secret" not in text
