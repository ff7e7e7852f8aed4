"""Uploads cannot hold or exhaust the server (issue 27, findings 4 and 5), against live
processes on this test's database, on loopback: gunicorn with DEBUG=0, as the Dockerfile runs
it, and a ``manage.py db_worker`` taking the jobs from the database queue.

1. A run whose ir_metadata header nests 20,000 deep (40 KB) held the only worker for 3 min 10 s
   and ended in RecursionError ("Failed unexpectedly"). Now its job fails with the header's
   file:line error.
2. A 1.2 MB gzip of one bad run line repeated (480 MiB expanded, built here in a temporary
   folder) drove the worker to 9.3 GB for two minutes, counting 59 million errors. Now its
   job fails with the first errors and the line where checking stopped, and the worker's peak
   memory (VmHWM) stays under MEMORY_BOUND.
3. The same bomb as a qrels file, which the web worker reads in the request: a 400 with the
   same kind of error list, the web worker under the same bound.
4. The task worker is still running and imports the next run.

The bound is generous (about 0.4 GB was measured for each); no timing is asserted, only that
each job ends before a give-up deadline.
"""

import gzip
import http.client
import json
import secrets
import socket
import uuid

import pytest
from django.contrib.auth.models import Group

from accounts.services.roles import Role
from accounts.services.tokens import create_token
from tests.faults.conftest import output, process_env, start, stop, wait_for

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

MEMORY_BOUND = 1 << 30  # bytes
EXPANDED = 480 << 20
WORKER = ["manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.1"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def peak_memory(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def web_worker(gunicorn) -> int:
    """The pid of gunicorn's one worker process."""
    with open(f"/proc/{gunicorn.pid}/task/{gunicorn.pid}/children") as children:
        return int(children.read().split()[0])


def bomb(line: bytes) -> bytes:
    """EXPANDED bytes of ``line`` repeated, as concatenated gzip members of 16 MiB each (one
    compressed, then repeated): about 1.2 MB, made in a fraction of a second."""
    block = line * ((16 << 20) // len(line))
    return gzip.compress(block, 9, mtime=0) * (EXPANDED // len(block))


class Server:
    def __init__(self, port: int, key: str) -> None:
        self.port, self.key = port, key

    def send(self, method: str, path: str, body: bytes = b"", headers=None):
        """(status, JSON body) of one request with the test user's token."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.request(
                method,
                path,
                body=body,
                headers={"Authorization": f"Bearer {self.key}", **(headers or {})},
            )
            response = conn.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            conn.close()

    def upload(self, path: str, filename: str, content: bytes, **fields: str):
        boundary = uuid.uuid4().hex
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items()
        ]
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n".encode()
            + content
            + b"\r\n"
        )
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        return self.send("POST", path, body, headers)

    def finished_job(self, answer, worker) -> dict:
        """The job a 202 answer names, once it has succeeded or failed."""
        status, body = answer
        assert status == 202, body
        path = f"/api/v1/jobs/{body['id']}/"
        job = {}

        def over() -> bool:
            job.update(self.send("GET", path)[1])
            return job["status"] in ("succeeded", "failed")

        wait_for(over, seconds=300, what=f"job {body['id']} to end", process=worker)
        return job


@pytest.fixture
def live(settings, tmp_path, media_root, django_user_model):
    """(Server, gunicorn, worker): gunicorn (DEBUG=0, one worker process) and a task worker on
    this test's database, and a token of a user who is lead and engineer."""
    user = django_user_model.objects.create_user("uploader")
    user.groups.add(*Group.objects.filter(name__in=[Role.LEAD, Role.ENGINEER]))
    _, key = create_token(user=user, name="live")
    secret = secrets.token_urlsafe(40)
    settings.SECRET_KEY = secret
    port = free_port()
    env = process_env(
        settings,
        DEBUG="0",
        SECRET_KEY=secret,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        SECURE_COOKIES="0",
        SECURE_HSTS_SECONDS="0",
        TASKS_BACKEND="django_tasks_db.DatabaseBackend",
        TMPDIR=str(tmp_path),
    )
    gunicorn = start(
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
    worker = start(WORKER, env, tmp_path / "worker.log")
    server = Server(port, key)

    def answering() -> bool:
        try:
            return server.send("GET", "/api/v1/runs/")[0] == 200
        except OSError:
            return False

    try:
        wait_for(answering, seconds=60, what="gunicorn to answer", process=gunicorn)
        yield server, gunicorn, worker
    finally:
        stop(gunicorn)
        stop(worker)


def test_a_nested_header_and_a_gzip_bomb_end_in_file_line_errors_and_the_worker_goes_on(live):
    server, gunicorn, worker = live

    # 1. The header nested 20,000 deep.
    nested = (
        b"# ir_metadata.start\n# method: "
        + b"[" * 20_000
        + b"]" * 20_000
        + b"\n# ir_metadata.end\n1 Q0 d1 1 1.0 t\n"
    )
    job = server.finished_job(
        server.upload("/api/v1/runs/", "nested.run", nested, system="a"), worker
    )
    assert (job["status"], job["errors"], job["error_total"]) == (
        "failed",
        ["nested.run:2: the ir_metadata header nests mappings and lists deeper than 32 levels"],
        1,
    ), output(worker)

    # 2. The run bomb: checking stops at the 10,000th error (line 5,001: the first line has
    # one error, each other two, a bad score and a repeated pair).
    data = bomb(b"1 Q0 a 1 abc run\n")
    assert len(data) < 1_300_000
    job = server.finished_job(
        server.upload("/api/v1/runs/", "bomb.run.gz", data, system="b"), worker
    )
    assert (job["status"], job["error_total"], len(job["errors"])) == ("failed", 10_000, 51)
    assert job["errors"][:2] == [
        "bomb.run.gz:1: score 'abc' is not a number",
        "bomb.run.gz:2: score 'abc' is not a number",
    ]
    assert job["errors"][-1] == (
        "bomb.run.gz:5001: checking stopped at this line after 10,000 errors; the lines after "
        "it were not checked"
    )
    peak = peak_memory(worker.pid)
    assert peak < MEMORY_BOUND, f"the task worker peaked at {peak / 2**20:.0f} MiB"

    # 3. The qrels bomb, read by the web worker in the request.
    status, body = server.upload("/api/v1/qrels/", "bomb.qrels.gz", bomb(b"1 0 a x\n"), name="bomb")
    assert (status, body["total"], body["errors"][0], body["errors"][-1]) == (
        400,
        10_000,
        "bomb.qrels.gz:1: grade 'x' is not an integer",
        "bomb.qrels.gz:5001: checking stopped at this line after 10,000 errors; the lines "
        "after it were not checked",
    )
    peak = peak_memory(web_worker(gunicorn))
    assert peak < MEMORY_BOUND, f"the web worker peaked at {peak / 2**20:.0f} MiB"

    # 4. The task worker is alive and takes the next job.
    assert worker.poll() is None, output(worker)
    run = b"1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n"
    job = server.finished_job(server.upload("/api/v1/runs/", "next.run", run, system="c"), worker)
    assert (job["status"], job["result"]["summary"]) == (
        "succeeded",
        "Imported next.run as run c/next: 2 lines, 1 topics.",
    ), job
