"""A database restart during judging loses no acknowledged grade, and stores none twice
(issue 6, item 5). PostgreSQL only.

gunicorn serves the app on the test database with persistent connections, as in
production; judges grade through the judging page's endpoint the way static/js/judge.js
does: a submission that fails (no answer, or a 5xx) is sent again with the same
request_id until acknowledged. Meanwhile the test terminates every server connection to the
test database (pg_terminate_backend: what a restart does to them, without touching the
cluster other processes use), over and over.
"""

import http.client
import json
import secrets
import socket
import threading
import time
import urllib.parse
import uuid

import psycopg
import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.db.models import Count
from django.test import Client

from accounts.services.roles import Role
from annotation import services
from annotation.models import (
    Document,
    Judgment,
    JudgmentAction,
    JudgmentChange,
    PairSource,
    Topic,
)
from tests.faults.conftest import database_url, output, process_env, start, stop, wait_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        "config.settings"
        and __import__("os").environ.get("DATABASE_URL", "").split(":")[0]
        not in ("postgres", "postgresql"),
        reason="PostgreSQL only: terminating the server's connections (pg_terminate_backend) "
        "is how a database restart is simulated; SQLite has no server to restart.",
    ),
]

JUDGES = 6
PAIRS_PER_JUDGE = 25
CSRF = "x" * 32  # any 32-character secret: the cookie and the header must only agree
TERMINATE = """
    select count(*) filter (where pg_terminate_backend(pid)) from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and pid <> %s
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def secret_key(settings) -> str:
    """One SECRET_KEY for this process and the server: the sessions made here are signed
    with it."""
    settings.SECRET_KEY = secrets.token_urlsafe(40)
    return settings.SECRET_KEY


@pytest.fixture
def judging(django_user_model, secret_key):
    """A campaign with JUDGES judges, each with a queue of PAIRS_PER_JUDGE pairs, and a
    logged-in session each: {"campaign": pk, "queues": {session: [assignment ids]}}."""
    judges = []
    for i in range(JUDGES):
        user = django_user_model.objects.create_user(f"judge{i}")
        user.groups.add(Group.objects.get(name=Role.JUDGE))
        judges.append(user)
    lead = django_user_model.objects.create_user("lead")
    campaign = services.create_campaign(lead=lead, name="restart", overlap=1, judges=judges)
    Topic.objects.bulk_create(
        Topic(campaign=campaign, qid=f"q{t}", query=f"query {t}") for t in range(JUDGES)
    )
    services.add_pairs(
        campaign=campaign,
        pairs=[(f"q{t}", f"d{t}-{d}") for t in range(JUDGES) for d in range(PAIRS_PER_JUDGE)],
        source=PairSource.IMPORTED,
    )
    # Judges grade only documents with text (a pair without text waits outside the queue).
    Document.objects.filter(campaign=campaign).update(text="A passage to grade.")
    queues = {}
    for judge in judges:
        client = Client()
        client.force_login(judge)
        queues[client.cookies["sessionid"].value] = services.judge_queue(
            campaign=campaign, judge=judge
        )
    return {"campaign": campaign.pk, "queues": queues}


@pytest.fixture
def server(settings, tmp_path, secret_key):
    """``server(workers, threads)``: gunicorn on the test database; returns its port."""
    processes = []

    def serve(workers: int, threads: int) -> int:
        port = free_port()
        env = process_env(
            settings,
            DEBUG="0",
            SECRET_KEY=secret_key,
            ALLOWED_HOSTS="127.0.0.1",
            SECURE_SSL_REDIRECT="0",
            SECURE_COOKIES="0",
            SECURE_HSTS_SECONDS="0",
            DATABASE_CONN_MAX_AGE="600",
        )
        process = start(
            [
                "-m",
                "gunicorn",
                "config.wsgi",
                f"--bind=127.0.0.1:{port}",
                f"--workers={workers}",
                f"--threads={threads}",
                "--worker-class=gthread",
                "--log-level=warning",
            ],
            env,
            tmp_path / f"gunicorn-{port}.log",
        )
        processes.append(process)

        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_for(listening, seconds=60, what="gunicorn to listen", process=process)
        return port

    serve.logs = lambda: "\n".join(output(process) for process in processes)
    yield serve
    for process in processes:
        stop(process)


def grade_once(port: int, campaign: int, session: str, assignment: int, grade: int, rid: str):
    """One submission as judge.js sends it; returns the status, or None with no answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(
            "POST",
            f"/campaigns/{campaign}/judge/{assignment}/grade/",
            urllib.parse.urlencode({"grade": grade, "seconds": "2.5", "request_id": rid}),
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"sessionid={session}; csrftoken={CSRF}",
                "X-CSRFToken": CSRF,
                "Accept": "application/json",
            },
        )
        response = conn.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException):
        return None, b""
    finally:
        conn.close()
    return response.status, body


def own_backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("select pg_backend_pid()")
        return cursor.fetchone()[0]


def test_no_acknowledged_grade_is_lost_or_doubled_when_the_database_restarts(judging, server):
    port = server(workers=2, threads=3)
    campaign = judging["campaign"]
    acknowledged: dict[int, int] = {}  # assignment -> grade the server acknowledged
    failures, refusals = [], []
    lock = threading.Lock()
    clients_done = threading.Event()

    def judge(session: str, queue: list[int]) -> None:
        for assignment in queue:
            grade, rid = assignment % 4, str(uuid.uuid4())
            delay, deadline = 0.02, time.monotonic() + 60
            while True:
                status, body = grade_once(port, campaign, session, assignment, grade, rid)
                if status == 200 and json.loads(body).get("status") == "done":
                    with lock:
                        acknowledged[assignment] = grade
                    break
                if status is not None and 400 <= status < 500:
                    with lock:
                        refusals.append((assignment, status, body[:300]))
                    break
                with lock:
                    failures.append(status)
                if time.monotonic() > deadline:
                    return  # never acknowledged: the assertions below say so
                time.sleep(delay)  # judge.js backs off too
                delay = min(delay * 2, 0.5)

    keep = own_backend_pid()
    terminated = []

    def restart_database_again_and_again() -> None:
        with psycopg.connect(database_url(), autocommit=True) as admin:
            while not clients_done.wait(0.15):
                terminated.append(admin.execute(TERMINATE, (keep,)).fetchone()[0])

    judges = [
        threading.Thread(target=judge, args=item, daemon=True) for item in judging["queues"].items()
    ]
    killer = threading.Thread(target=restart_database_again_and_again, daemon=True)
    killer.start()
    for thread in judges:
        thread.start()
    for thread in judges:
        thread.join(120)
    clients_done.set()
    killer.join(30)

    assert not refusals, f"the server refused submissions: {refusals[:5]}"
    assert sum(terminated) > 0, "the test terminated no server connection: it proved nothing"
    expected = {a for queue in judging["queues"].values() for a in queue}
    assert set(acknowledged) == expected, (
        f"{len(expected - set(acknowledged))} submissions were never acknowledged within 60 s "
        f"of retries; server log:\n{server.logs()}"
    )
    stored = dict(Judgment.objects.values_list("assignment_id", "grade"))
    assert stored == acknowledged, "every acknowledged grade is stored, as acknowledged"
    doubled = (
        JudgmentChange.objects.filter(action=JudgmentAction.GRADED)
        .values("assignment")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
    )
    assert not doubled.exists(), "a resent submission was applied twice"
    assert JudgmentChange.objects.count() == len(expected)
    print(
        f"\n{len(expected)} grades, {sum(terminated)} connections terminated in "
        f"{len(terminated)} rounds, {len(failures)} failed sends resent "
        f"({sum(s is None for s in failures)} unanswered, "
        f"{sum(s is not None for s in failures)} 5xx)"
    )


def test_the_first_request_after_a_database_restart_succeeds(judging, server):
    """One worker, one thread: one kept connection. After the restart, the next request
    finds it dead before using it (conn_health_checks) and reconnects: no 500."""
    port = server(workers=1, threads=1)
    campaign = judging["campaign"]
    session, queue = next(iter(judging["queues"].items()))
    status, body = grade_once(port, campaign, session, queue[0], 1, str(uuid.uuid4()))
    assert status == 200, body[:500]

    keep = own_backend_pid()
    with psycopg.connect(database_url(), autocommit=True) as admin:
        assert admin.execute(TERMINATE, (keep,)).fetchone()[0] >= 1, "the kept connection"

        def gone() -> bool:
            count = admin.execute(
                "select count(*) from pg_stat_activity where datname = current_database() "
                "and pid <> pg_backend_pid() and pid <> %s",
                (keep,),
            ).fetchone()[0]
            return count == 0

        wait_for(gone, seconds=10, what="the terminated connections to go")

    status, body = grade_once(port, campaign, session, queue[1], 2, str(uuid.uuid4()))
    assert status == 200, f"the first request after the restart: {status} {body[:500]!r}"
    assert Judgment.objects.get(assignment_id=queue[1]).grade == 2
