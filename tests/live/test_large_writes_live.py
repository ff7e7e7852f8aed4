"""A large write against a live server and task worker on SQLite (issue 27, finding 8).

Before: ``POST /api/v1/campaigns/3/pairs/`` with 100,000 pairs ran 74 s inside the request,
holding SQLite's only write lock; another user's ``GET /api/v1/campaigns/`` (whose token's
"last used" write waited for the lock) was a 500, and ``manage.py db_worker`` exited on
"database is locked".

Here gunicorn (DEBUG=0, two gthread workers of four threads, as production) and a task worker
run on this test's SQLite database. While a lead writes, another user reads the campaign list
in a loop with a token never used before (so its first read writes "last used" while the
lead's write may hold the lock):

1. the issue's 100,000 pairs as JSON: refused at once (413 naming SYNC_WRITE_ROWS and the file
   import);
2. the largest list allowed (SYNC_WRITE_ROWS pairs): added in the request;
3. a file of a little more than two batches of pairs: imported by a job, a batch per
   transaction;
4. the worker's busy timeout is short (1 s), so it meets the lock during those writes, and
   once more while this test holds the lock for 4 s itself: it must still be alive and take
   the next job (a topics import) afterwards.

No reader's answer may be an error. The timings are printed (run with ``-s``) for the report;
nothing here asserts a time. SQLite only: PostgreSQL has no database-wide write lock.
"""

import json
import threading
import time
import urllib.parse

import pytest
from django.db import connection

from accounts.services.tokens import create_token
from annotation import services
from annotation.models import Topic
from tests.faults.conftest import output, process_env, start, stop, wait_for
from tests.jobs.locks import write_lock_held
from tests.live.test_front_door_live import free_port, listening, send

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

ISSUE_PAIRS = 100_000
LIMIT = 5_000  # SYNC_WRITE_ROWS's default, which the servers run with
TOPICS = 100
READER_TOKENS = 150  # fresh tokens per reader: its first 15 s or so of reads each write
WORKER_TIMEOUT = "1"  # the worker's SQLITE_TIMEOUT: it meets the lock during every big write


@pytest.fixture
def site(settings, tmp_path, media_root):
    """{"port": gunicorn's port, "worker": the db_worker process}."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write lock is what this test is about")
    tasks = "django_tasks_db.DatabaseBackend"
    production = process_env(
        settings,
        DEBUG="0",
        SECRET_KEY="live-test-secret-key-" + "x" * 40,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        SECURE_COOKIES="0",
        SECURE_HSTS_SECONDS="0",
        TASKS_BACKEND=tasks,
        LOG_LEVEL="WARNING",
    )
    port = free_port()
    gunicorn = start(
        [
            "-m",
            "gunicorn",
            "config.wsgi",
            f"--bind=127.0.0.1:{port}",
            "--workers=2",
            "--threads=4",
            "--worker-class=gthread",
            "--timeout=300",
            f"--control-socket={tmp_path / 'gunicorn.ctl'}",
            "--log-level=warning",
        ],
        production,
        tmp_path / "gunicorn.log",
    )
    worker = start(
        ["manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.2"],
        {**production, "SQLITE_TIMEOUT": WORKER_TIMEOUT, "LOG_LEVEL": "INFO"},
        tmp_path / "worker.log",
    )
    try:
        wait_for(lambda: listening(port), seconds=60, what="gunicorn", process=gunicorn)
        wait_for(
            lambda: send(port, "GET", "/readyz")[0] == 200, seconds=60, what="gunicorn to answer"
        )
        yield {"port": port, "worker": worker, "gunicorn": gunicorn}
    finally:
        stop(gunicorn)
        stop(worker)


class Reader(threading.Thread):
    """Another user reading the campaign list in a loop, each read with a token never used
    before while there are some (so that each read writes its token's "last used", as the
    issue's 500 did), then with the last one."""

    def __init__(self, port: int, tokens: list[str]):
        super().__init__(daemon=True)
        self.port, self.tokens = port, list(tokens)
        self.answers: list[tuple[int, float, bytes]] = []  # status, seconds, body
        self.stopped = threading.Event()

    def run(self) -> None:
        token = self.tokens[0]
        while not self.stopped.is_set():
            token = self.tokens.pop() if self.tokens else token
            headers = {"Authorization": f"Bearer {token}"}
            began = time.monotonic()
            try:
                status, _, body = send(self.port, "GET", "/api/v1/campaigns/", b"", headers)
            except OSError as error:
                status, body = 0, repr(error).encode()
            self.answers.append((status, time.monotonic() - began, body))
            time.sleep(0.1)

    def finish(self) -> list[tuple[int, float, bytes]]:
        self.stopped.set()
        self.join(120)
        return self.answers


def while_reading(port: int, user, name: str, write):
    """Run ``write()`` while a fresh reader reads; (its answer, its seconds, the reads)."""
    tokens = [create_token(user=user, name=f"{name}-{i}")[1] for i in range(READER_TOKENS)]
    reader = Reader(port, tokens)
    began = time.monotonic()
    result = None

    def writing():
        nonlocal result
        result = write()

    writer = threading.Thread(target=writing)
    writer.start()
    time.sleep(0.3)  # the write has begun: the reader's first read meets it
    reader.start()
    writer.join(600)
    seconds = time.monotonic() - began
    time.sleep(0.5)
    return result, seconds, reader.finish()


def api(port: int, method: str, path: str, token: str, body=None, content_type=None):
    """(status, headers, body); status 0 when no answer came within send's 60 s."""
    headers = {"Authorization": f"Bearer {token}"}
    if content_type:
        headers["Content-Type"] = content_type
    try:
        return send(port, method, path, body or b"", headers)
    except OSError as error:
        return 0, {}, f"no answer: {error!r}".encode()


def multipart(name: str, data: bytes) -> tuple[bytes, str]:
    boundary = "----live-test-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def finished_job(port: int, token: str, location: str, seconds: float = 180) -> dict:
    path = urllib.parse.urlsplit(location).path
    deadline = time.monotonic() + seconds
    while True:
        status, _, body = api(port, "GET", path, token)
        job = json.loads(body) if status == 200 else {"status": f"HTTP {status}"}
        if job.get("finished") or time.monotonic() > deadline:
            return job
        time.sleep(0.2)


def errors_of(what: str, answers) -> list[str]:
    return [
        f"{what}: a read answered {status} after {seconds:.1f} s: {body[:200]!r}"
        for status, seconds, body in answers
        if status != 200
    ]


def test_a_large_write_leaves_readers_served_and_the_worker_alive(site, world):
    port, worker = site["port"], site["worker"]
    lead, reader_user = world.users["lead"], world.users["judge"]
    campaign = services.create_campaign(
        lead=lead, name="Large", overlap=1, judges=[world.users["judge"]]
    )
    Topic.objects.bulk_create(
        Topic(campaign=campaign, qid=f"t{i}", query=f"q{i}") for i in range(TOPICS)
    )
    lead_token = create_token(user=lead, name="live-lead")[1]
    pairs_url = f"/api/v1/campaigns/{campaign.pk}/pairs/"
    problems, figures = [], []

    def post_pairs(n: int, prefix: str):
        pairs = [{"qid": f"t{i % TOPICS}", "docno": f"{prefix}{i}"} for i in range(n)]
        body = json.dumps({"pairs": pairs}).encode()
        return api(port, "POST", pairs_url, lead_token, body, "application/json")

    # 1. The issue's 100,000 pairs as one JSON list.
    (status, _, body), seconds, reads = while_reading(
        port, reader_user, "reader-1", lambda: post_pairs(ISSUE_PAIRS, "issue")
    )
    figures.append(("100,000 pairs as JSON", status, seconds, reads))
    if status != 413 or b"SYNC_WRITE_ROWS" not in body:
        problems.append(f"100,000 pairs: {status} after {seconds:.1f} s, not a 413: {body[:300]!r}")
    problems += errors_of("during the 100,000 pairs", reads)

    # 2. The largest list allowed, written in the request.
    (status, _, body), seconds, reads = while_reading(
        port, reader_user, "reader-2", lambda: post_pairs(LIMIT, "limit")
    )
    figures.append((f"{LIMIT:,} pairs as JSON", status, seconds, reads))
    if status != 200:
        problems.append(f"{LIMIT:,} pairs: {status}, not 200: {body[:300]!r}")
    problems += errors_of(f"during the {LIMIT:,} pairs", reads)

    # 3. A file of a little more than two batches, imported by a job.
    lines = "".join(f"t{i % TOPICS}\tfile{i}\n" for i in range(2 * LIMIT + 1)).encode()
    file_body, file_type = multipart("pairs.tsv", lines)

    def import_file():
        status, headers, body = api(port, "POST", pairs_url, lead_token, file_body, file_type)
        if status != 202:
            return status, body, {}
        return status, body, finished_job(port, lead_token, headers["Location"])

    (status, body, job), seconds, reads = while_reading(port, reader_user, "reader-3", import_file)
    figures.append((f"{2 * LIMIT + 1:,} pairs as a file (job)", status, seconds, reads))
    if status != 202 or job.get("status") != "succeeded":
        problems.append(f"the pairs file: {status} {body[:200]!r}, job {job}")
    problems += errors_of("during the pairs file's job", reads)

    # 4. A lock held for four times the worker's busy timeout, then the next job.
    with write_lock_held(seconds=4 * float(WORKER_TIMEOUT)):
        pass
    time.sleep(4 * float(WORKER_TIMEOUT) + 0.5)
    if worker.poll() is not None:
        problems.append(f"the worker exited ({worker.returncode}):\n{output(worker)[-1500:]}")
    topics_body, topics_type = multipart("topics.tsv", b"n1\tnext job\n")
    status, headers, body = api(
        port,
        "POST",
        f"/api/v1/campaigns/{campaign.pk}/topics/",
        lead_token,
        topics_body,
        topics_type,
    )
    job = (
        finished_job(port, lead_token, headers.get("Location", ""), seconds=60)
        if status == 202
        else {}
    )
    if job.get("status") != "succeeded":
        problems.append(f"the next job after the writes: {status} {job or body[:200]!r}")

    for what, status, seconds, reads in figures:
        worst = max((s for _, s, _ in reads), default=0.0)
        print(
            f"\n{what}: {status} in {seconds:.2f} s; {len(reads)} reads meanwhile, "
            f"worst {worst:.2f} s, statuses {sorted({r[0] for r in reads})}"
        )
    locked = output(worker).count("the database is locked")
    print(
        f"worker met 'database is locked' {locked} times and is {'alive' if worker.poll() is None else 'dead'}"
    )
    assert not problems, "\n".join(problems) + "\n\ngunicorn:\n" + output(site["gunicorn"])[-3000:]
