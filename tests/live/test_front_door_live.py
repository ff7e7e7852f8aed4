"""The front door against live servers (issue 19): gunicorn with DEBUG=0, started as the
Dockerfile starts it (tests/live/servers.py), and ``manage.py runserver`` with DEBUG=1, as
``make run DEBUG=1`` starts it for development (test_make_run_live.py starts ``make run``
itself), each on a loopback port of its own, on this test's database.

1. The hostile requests of the issue's table, sent raw (a Host not allowed, multipart without a
   boundary, JSON nested 5,000 deep, too many fields, a body over the limit, no CSRF token,
   an undeclared content type), and a create whose answer must reach the client (runserver is
   wsgiref, which refused a Location that was not a plain str after the campaign was stored).
2. Schemathesis' own command line (``st run``) over the whole OpenAPI schema as a judge, a
   lead, an engineer and an admin, with its coverage (undeclared content types, malformed
   bodies, boundary values), fuzzing and stateful phases; the only check is that no answer is
   a server error. tests/api/test_contract.py runs in-process, faster and stricter about the
   schema; this one sees what only a real server sees.

Bounded: each role has LIVE_CONTRACT_SECONDS (default 12: two thirds for the coverage and
fuzzing phases, a third for the stateful phase, each its own ``st run``) and both servers are
tested at once, so the module takes about 2 minutes. A failure prints st's report, with the
seed and a curl command for each server error.
"""

import http.client
import json
import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from accounts.services.tokens import create_token
from tests.faults.conftest import output, process_env, start, stop, wait_for
from tests.live.servers import gunicorn_args

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

ROLES = ("judge", "lead", "engineer", "admin")
SECONDS = int(os.environ.get("LIVE_CONTRACT_SECONDS", "12"))
ST = Path(sys.executable).with_name("st")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def answering(port: int) -> bool:
    """gunicorn accepts connections a moment before its worker answers."""
    try:
        return send(port, "GET", "/accounts/login/")[0] == 200
    except OSError:
        return False


@pytest.fixture
def servers(settings, tmp_path, media_root):
    """{"gunicorn": port, "runserver": port}, both on this test's database and media."""
    secret = secrets.token_urlsafe(40)
    settings.SECRET_KEY = secret
    ports = {"gunicorn": free_port(), "runserver": free_port()}
    production = process_env(
        settings,
        DEBUG="0",
        SECRET_KEY=secret,
        ALLOWED_HOSTS="127.0.0.1",
        # Plain http on loopback: no https redirect (it would answer every request with 301).
        SECURE_SSL_REDIRECT="0",
        SECURE_COOKIES="0",
        SECURE_HSTS_SECONDS="0",
    )
    gunicorn = start(
        gunicorn_args(ports["gunicorn"], tmp_path, "--log-level=warning"),
        production,
        tmp_path / "gunicorn.log",
    )
    development = process_env(settings, DEBUG="1", SECRET_KEY=secret)
    runserver = start(
        ["manage.py", "runserver", f"127.0.0.1:{ports['runserver']}", "--noreload"],
        development,
        tmp_path / "runserver.log",
    )
    processes = {"gunicorn": gunicorn, "runserver": runserver}
    try:
        for name, port in ports.items():
            wait_for(lambda p=port: listening(p), seconds=60, what=name, process=processes[name])
            wait_for(lambda p=port: answering(p), seconds=30, what=f"{name} to answer")
        yield ports
    finally:
        for process in processes.values():
            stop(process)
        servers.logs = {name: output(process) for name, process in processes.items()}


def send(port: int, method: str, path: str, body: bytes = b"", headers=None):
    """One raw request; (status, headers, body). ``headers`` may name the Host."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def hostile_requests(tokens: dict) -> list[tuple[str, str, str, bytes, dict, int]]:
    """(what, method, path, body, headers, status) for each row of the issue's table and the
    other errors that come before a view."""
    lead = {"Authorization": f"Bearer {tokens['lead']}"}
    json_type = {"Content-Type": "application/json"}
    form_type = {"Content-Type": "application/x-www-form-urlencoded"}
    fields = "&".join(f"f{i}=1" for i in range(1001)).encode()
    return [
        ("a Host not allowed", "GET", "/accounts/login/", b"", {"Host": "evil.example"}, 400),
        (
            "a Host not allowed, API",
            "GET",
            "/api/v1/campaigns/",
            b"",
            {"Host": "evil.example", **lead},
            400,
        ),
        (
            "multipart without a boundary",
            "POST",
            "/accounts/login/",
            b"x=1",
            {"Content-Type": "multipart/form-data"},
            400,
        ),
        (
            "multipart without a boundary, API",
            "POST",
            "/api/v1/campaigns/",
            b"x=1",
            {"Content-Type": "multipart/form-data", **lead},
            400,
        ),
        (
            "JSON nested 5,000 deep",
            "POST",
            "/api/v1/campaigns/",
            b"[" * 5000 + b"]" * 5000,
            {**json_type, **lead},
            400,
        ),
        (
            "JSON nested 5,000 deep, dashboards",
            "POST",
            "/api/v1/unjudged/",
            b"[" * 5000,
            {**json_type, **lead},
            400,
        ),
        ("too many fields, API", "POST", "/api/v1/campaigns/", fields, {**form_type, **lead}, 400),
        ("no CSRF token", "POST", "/accounts/login/", b"username=a&password=b", form_type, 403),
        (
            "a declared body over the limit",
            "POST",
            "/api/v1/campaigns/",
            b"{}",
            {**json_type, **lead, "Content-Length": str(10**12)},
            413,
        ),
        (
            "an undeclared content type",
            "POST",
            "/api/v1/campaigns/",
            b"<a/>",
            {"Content-Type": "application/xml", **lead},
            415,
        ),
        (
            "a JSON body that is not UTF-8",
            "POST",
            "/api/v1/campaigns/",
            b'{"name": "\xff"}',
            {**json_type, **lead},
            400,
        ),
        ("an unknown API path", "GET", "/api/v1/no-such-thing/", b"", lead, 404),
    ]


def test_the_front_door_answers_hostile_requests_and_schemathesis_finds_no_server_error(
    servers, world, tmp_path
):
    tokens = {role: create_token(user=world.users[role], name="live")[1] for role in ROLES}

    # 1. The table, on both servers.
    wrong = []
    for server, port in servers.items():
        for what, method, path, body, headers, expected in hostile_requests(tokens):
            status, _, answer = send(port, method, path, body, headers)
            if status != expected:
                wrong.append(f"{server}: {what}: {status}, not {expected}: {answer[:200]!r}")
        name = f"Made on {server}"
        status, answered, answer = send(
            port,
            "POST",
            "/api/v1/campaigns/",
            json.dumps({"name": name}).encode(),
            {"Content-Type": "application/json", "Authorization": f"Bearer {tokens['lead']}"},
        )
        if status != 201 or "Location" not in answered:
            wrong.append(f"{server}: a created campaign answered {status}: {answer[:200]!r}")
    assert not wrong, "\n".join(wrong)

    # 2. Schemathesis' command line, both servers at once, one role after another. The
    # stateful phase runs on its own: after the others in one run it would get no time.
    # Each server's schema is fetched from it once, here (it is the same for every role:
    # the schema view serves the whole API to whoever is logged in), and each run reads it
    # from that file: fetched by each of the sixteen runs, its generation took 2-8 s of the
    # run's time budget on a busy machine (the first run's coverage phase once got none).
    schemas = {}
    for server, port in servers.items():
        headers = {"Authorization": f"Bearer {tokens['judge']}"}
        status, _, answer = send(port, "GET", "/api/v1/schema/?format=json", b"", headers)
        assert status == 200, f"{server}: the schema answered {status}: {answer[:200]!r}"
        schemas[server] = tmp_path / f"schema-{server}.json"
        schemas[server].write_bytes(answer)
    failures = []
    for role in ROLES:
        for phases, seconds in (("coverage,fuzzing", SECONDS * 2 // 3), ("stateful", SECONDS // 3)):
            logs = {server: tmp_path / f"st-{server}-{role}-{phases}.txt" for server in servers}
            runs = {
                server: subprocess.Popen(
                    st_command(port, schemas[server], tokens[role], phases, seconds),
                    cwd=tmp_path,
                    stdout=logs[server].open("w"),
                    stderr=subprocess.STDOUT,
                )
                for server, port in servers.items()
            }
            for server, run in runs.items():
                code = run.wait(seconds + 300)
                report = logs[server].read_text()
                if code != 0 or "Server error" in report:
                    failures.append(
                        f"st run --phases {phases} on {server} as {role} (exit {code}):\n"
                        f"{report[-6000:]}"
                    )
    assert not failures, "\n\n".join(failures)


def st_command(port: int, schema: Path, token: str, phases: str, seconds: int) -> list[str]:
    return [
        str(ST),
        "run",
        str(schema),
        "--url",
        f"http://127.0.0.1:{port}/",
        "--header",
        f"Authorization: Bearer {token}",
        "--checks",
        "not_a_server_error",
        "--phases",
        phases,
        "--max-examples",
        "5",
        "--max-time",
        str(seconds),
        "--continue-on-failure",
        "--request-timeout",
        "60",
        "--generation-database",
        "none",
        "--workers",
        "1",
        "--no-color",
    ]
