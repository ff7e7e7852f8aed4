"""gunicorn started as production starts it (the Dockerfile's CMD, README "Production"), on a
loopback port and a control socket of its own, on the test's database and media."""

import http.client
import secrets
import socket
from pathlib import Path

from tests.faults.conftest import process_env, start, wait_for

# The Dockerfile's command (tests/config/test_gunicorn.py holds it to that); a test adds
# only where to listen and its own control socket (gunicorn 27 opens one per user).
PRODUCTION_GUNICORN = ["-m", "gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def production_env(settings, **extra: str) -> dict:
    """DEBUG off with a real secret; plain http on loopback (no https redirect, HSTS or
    secure cookies, which would answer every request with 301 or lose the session)."""
    secret = secrets.token_urlsafe(40)
    settings.SECRET_KEY = secret
    return process_env(
        settings,
        DEBUG="0",
        SECRET_KEY=secret,
        ALLOWED_HOSTS="127.0.0.1",
        SECURE_SSL_REDIRECT="0",
        SECURE_COOKIES="0",
        SECURE_HSTS_SECONDS="0",
        **extra,
    )


def gunicorn_args(port: int, tmp_path: Path, *extra: str) -> list[str]:
    return [
        *PRODUCTION_GUNICORN,
        f"--bind=127.0.0.1:{port}",
        f"--control-socket={tmp_path / f'gunicorn-{port}.ctl'}",
        *extra,
    ]


def send(port: int, method: str, path: str, body: bytes = b"", headers=None, timeout=60):
    """One request; (status, headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def answering(port: int) -> bool:
    """gunicorn accepts connections a moment before its workers answer."""
    try:
        return send(port, "GET", "/accounts/login/", timeout=10)[0] == 200
    except OSError:
        return False


def start_gunicorn(settings, tmp_path: Path, *extra_args: str, **env: str):
    """(process, port) of a production gunicorn that answers; ``stop`` it when done."""
    port = free_port()
    process = start(
        gunicorn_args(port, tmp_path, *extra_args),
        production_env(settings, **env),
        tmp_path / f"gunicorn-{port}.log",
    )
    wait_for(lambda: answering(port), seconds=90, what="gunicorn to answer", process=process)
    return process, port
