"""gunicorn's settings live in config/gunicorn.conf.py, which the Dockerfile and the live
tests use alike; its worker (config/gunicorn_worker.py) bounds how long reading a request's
head and body may take, so slow clients hold a thread for seconds (issue 27, finding 6).

The deadlines are exercised here on a socket pair with short limits; tests/live/ runs the
real server against slow clients."""

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from config import gunicorn_worker
from config.gunicorn_worker import DeadlineUnreader, SlowRequest, _Reading
from tests.live.servers import PRODUCTION_GUNICORN

ROOT = Path(__file__).resolve().parents[2]


def print_config(**env) -> dict[str, str]:
    result = subprocess.run(
        [sys.executable, *PRODUCTION_GUNICORN, "--print-config"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "DEBUG": "1", **env},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return dict(re.findall(r"^(\w+)\s+= (.*)$", result.stdout, re.MULTILINE))


def test_the_dockerfile_and_the_live_tests_start_gunicorn_with_the_config_file():
    dockerfile = (ROOT / "Dockerfile").read_text()

    assert 'exec gunicorn -c config/gunicorn.conf.py config.wsgi"]' in dockerfile
    assert PRODUCTION_GUNICORN == ["-m", "gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi"]


def test_the_config_file_runs_threaded_workers_with_deadlines():
    config = print_config()

    assert config["worker_class"] == "config.gunicorn_worker.DeadlineThreadWorker"
    assert (config["workers"], config["threads"]) == ("3", "8")
    assert config["bind"] == "['0.0.0.0:8000']"
    assert config["accesslog"] == "-"
    # The app is imported once, in the master, and the workers forked from it.
    assert config["preload_app"] == "True"


def test_workers_threads_and_address_come_from_the_environment():
    config = print_config(WEB_WORKERS="5", WEB_THREADS="4", WEB_BIND="127.0.0.1:9000")

    assert (config["workers"], config["threads"], config["bind"]) == (
        "5",
        "4",
        "['127.0.0.1:9000']",
    )


def test_a_mistyped_number_of_threads_stops_the_start():
    result = subprocess.run(
        [sys.executable, *PRODUCTION_GUNICORN, "--check-config"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "WEB_THREADS": "eight"},
        capture_output=True,
        text=True,
    )

    assert result.returncode != 0
    assert "WEB_THREADS='eight' is not an integer" in result.stdout + result.stderr


# --- the deadlines ------------------------------------------------------------------------


@pytest.fixture
def short_limits(monkeypatch):
    monkeypatch.setattr(gunicorn_worker, "HEADER_TIMEOUT", 0.3)
    monkeypatch.setattr(gunicorn_worker, "BODY_IDLE_TIMEOUT", 0.3)
    monkeypatch.setattr(gunicorn_worker, "BODY_GRACE", 0.3)


@pytest.fixture
def connection():
    """(server side wrapped in the worker's reader, client side, the request's _Reading)."""
    server, client = socket.socketpair()
    reading = _Reading()
    yield DeadlineUnreader(server, reading), client, reading
    server.close()
    client.close()


def test_a_head_sent_in_time_is_read(short_limits, connection):
    reader, client, _reading = connection
    client.sendall(b"GET / HTTP/1.1\r\n")

    assert reader.chunk() == b"GET / HTTP/1.1\r\n"
    assert reader.sock.gettimeout() is None, "the socket was left with a timeout"


def test_a_head_not_complete_by_its_deadline_is_refused(short_limits, connection):
    reader, client, _reading = connection
    client.sendall(b"GET / HTTP/1.1\r\n")
    reader.chunk()  # the first read starts the head's deadline

    with pytest.raises(SlowRequest, match=r"^the request's head took longer than 0.3 s$"):
        reader.chunk()
    assert reader.sock.gettimeout() is None


def test_a_head_trickling_in_is_refused_at_its_deadline_however_often_it_sends(
    short_limits, connection
):
    reader, client, reading = connection
    client.sendall(b"GET / HTTP/1.1\r\n")
    reader.chunk()
    reading.deadline -= 1  # as if the head had been trickling in for a second

    client.sendall(b"X-Slow: 1\r\n")  # data is waiting, but the time is up
    with pytest.raises(SlowRequest, match="head took longer"):
        reader.chunk()


def test_a_body_that_stops_is_refused(monkeypatch, short_limits, connection):
    monkeypatch.setattr(gunicorn_worker, "BODY_GRACE", 60)  # the rate is not what stops it
    reader, client, reading = connection
    reading.body()
    client.sendall(b"a" * 100)

    assert reader.chunk() == b"a" * 100
    with pytest.raises(SlowRequest, match=r"^the request's body stopped for 0.3 s$"):
        reader.chunk()


def test_a_body_slower_than_the_minimum_rate_is_refused_after_the_grace(short_limits, connection):
    reader, client, reading = connection
    reading.body()
    reading.body_started -= 5  # five seconds in, 100 bytes: far under 1 KiB a second
    reading.body_bytes = 100
    client.sendall(b"a")

    with pytest.raises(SlowRequest, match=r"^the request's body came slower than 1024 bytes a"):
        reader.chunk()


def test_a_body_at_the_minimum_rate_is_read(short_limits, connection):
    reader, client, reading = connection
    reading.body()
    reading.body_started -= 5
    reading.body_bytes = 10 * 1024  # two kibibytes a second so far
    client.sendall(b"a" * 10)

    assert reader.chunk() == b"a" * 10
    assert reading.body_bytes == 10 * 1024 + 10


def test_a_new_request_on_the_connection_gets_a_new_head_deadline(short_limits, connection):
    reader, client, reading = connection
    client.sendall(b"GET / HTTP/1.1\r\n")
    reader.chunk()
    reading.deadline -= 1
    reading.body()

    reading.head()  # what the worker does when the connection's next request starts
    client.sendall(b"GET /next HTTP/1.1\r\n")

    assert reader.chunk() == b"GET /next HTTP/1.1\r\n"


def test_a_read_gunicorn_bounds_itself_is_left_to_it(short_limits, connection):
    # Draining an unread body before reusing the connection: gunicorn sets a timeout
    # and handles TimeoutError itself.
    reader, _client, reading = connection
    reading.body()
    reading.body_started -= 60
    reader.sock.settimeout(0.05)

    with pytest.raises(TimeoutError):
        reader.chunk()
    assert reader.sock.gettimeout() == 0.05


def test_slow_request_is_a_bad_request_for_django():
    # So that the app answers 400 through its own error pages when a body is too slow.
    from django.core.exceptions import BadRequest

    assert issubclass(SlowRequest, BadRequest)
    assert not issubclass(SlowRequest, OSError)  # Django would make that a 500
