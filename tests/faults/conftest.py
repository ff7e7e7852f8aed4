"""Helpers of the fault tests: real processes (a task worker, gunicorn) started on the test
database, which only transactional tests can share with them (their writes are committed)."""

import os
import signal
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def database_url() -> str:
    """DATABASE_URL of the test database this process uses."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    host = db["HOST"] or "localhost"
    if host.startswith("/"):  # a unix socket folder (CI's fallback when TCP wants a password)
        query = {"host": host, "user": db["USER"] or ""}
        if db.get("PASSWORD"):
            query["password"] = db["PASSWORD"]
        return f"postgres:///{db['NAME']}?{urllib.parse.urlencode(query)}"
    user = urllib.parse.quote(db["USER"] or "")
    password = f":{urllib.parse.quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{user}{password}@{host}{port}/{db['NAME']}"


def process_env(settings, **extra: str) -> dict:
    """The environment of a child process working on this test's database and media."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DEBUG": "1",  # the development secret key is fine for a test's child process
        "LOG_LEVEL": "WARNING",
        **extra,
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


def wait_for(condition, *, seconds: float, what: str, process=None) -> None:
    """Poll ``condition`` until true; fail with ``what`` after ``seconds`` or if ``process``
    ended first."""
    deadline = time.monotonic() + seconds
    while not condition():
        if process is not None and process.poll() is not None:
            pytest.fail(
                f"the process ended ({process.returncode}) before {what}:\n{output(process)}"
            )
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {seconds} s waiting for {what}")
        time.sleep(0.05)


def start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """``python *args`` in the project, its output in ``log`` (a pipe nobody reads could
    fill up and stall it)."""
    with log.open("w") as out:
        process = subprocess.Popen(
            [PYTHON, *args],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    process.log = log
    return process


def output(process: subprocess.Popen) -> str:
    return process.log.read_text()[-5000:]


def stop(process: subprocess.Popen) -> None:
    """Kill ``process`` (and its children: gunicorn's workers) if it still runs."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)
