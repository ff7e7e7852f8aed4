"""What the loopback benchmarks share (judging_load.py, dashboard_bench.py, mixed_load.py): a
scratch PostgreSQL database and data folder with production settings, the app's servers on
127.0.0.1, and small HTTP helpers. Nothing here talks to any address but the loopback."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_base() -> str:
    """Trust auth over TCP on these machines, else the unix socket (as .ci/run does)."""
    probe = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-w", "-d", "postgres", "-c", "select 1"],
        capture_output=True,
    )
    if probe.returncode == 0:
        return "postgres://postgres@127.0.0.1:5432/{db}"
    return "postgres:///{db}?host=/var/run/postgresql&user=postgres"


def production_env(database_url: str, data_dir: Path) -> dict[str, str]:
    """The environment of a scratch instance with production settings over plain http on
    loopback, a database-backed task queue and quiet logs."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DATA_DIR": str(data_dir),
        "TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "SECURE_HSTS_SECONDS": "0",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


def psql(sql: str) -> None:
    subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-w", "-d", "postgres", "-q", "-c", sql],
        check=True,
        capture_output=True,
    )


@contextmanager
def scratch_app(name: str) -> Iterator[dict]:
    """The environment of a migrated scratch instance (PostgreSQL database ``relevance_<name>_
    <random>``, a temporary data folder, production settings over plain http, tasks through
    the database queue); both are dropped on the way out."""
    database = f"relevance_{name}_{secrets.token_hex(4)}"
    data_dir = Path(tempfile.mkdtemp(prefix=f"relevance-{name}-"))
    (data_dir / "staticfiles").mkdir()  # WhiteNoise warns when STATIC_ROOT is missing
    env = production_env(postgres_base().format(db=database), data_dir)
    psql(f"create database {database}")
    try:
        subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        yield env
    finally:
        psql(f"drop database if exists {database}")
        shutil.rmtree(data_dir, ignore_errors=True)


def django(env: dict, code: str, *args: str) -> str:
    """Run ``code`` in the app (``manage.py shell``) with ``sys.argv[1:] = args``; its last
    printed line."""
    result = subprocess.run(
        [
            PYTHON,
            "manage.py",
            "shell",
            "-c",
            f"import sys; sys.argv = ['x', *{list(args)!r}]\n{code}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        raise SystemExit(f"setup failed:\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1]


@contextmanager
def servers(env: dict, *, workers: int, threads: int = 0, worker_interval: float | None = None):
    """gunicorn on a free loopback port (gthread workers when ``threads``), and a
    ``db_worker`` polling every ``worker_interval`` seconds when given; yields the port once
    gunicorn answers, and stops them all on the way out."""
    port = free_port()
    command = gunicorn_command(
        port,
        workers=workers,
        threads=threads,
        control_socket=Path(env["DATA_DIR"]) / "gunicorn.ctl",
    )
    processes = [subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)]
    try:
        if worker_interval is not None:
            worker = [PYTHON, "manage.py", "db_worker", "--no-reload", "--no-startup-delay"]
            worker += ["--interval", str(worker_interval), "-v", "0"]
            processes.append(subprocess.Popen(worker, cwd=ROOT, env=env, start_new_session=True))
        wait_for_port(port)
        yield port
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                # A db_worker finishes its task before it stops; a long one (a large
                # campaign's agreement) is cut short rather than lose the results.
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(30)


def gunicorn_command(
    port: int, *, workers: int, threads: int, control_socket: Path, cpus: str = ""
) -> list[str]:
    """gunicorn serving the app on 127.0.0.1:``port`` (gthread workers when ``threads``),
    with its own control socket: gunicorn 27 opens one per user by default, and a second
    server on the host would find it taken. ``cpus`` pins it (taskset's list, e.g. "0")."""
    command = [PYTHON, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}"]
    command += ["--workers", str(workers), "--timeout", "120", "--log-level", "warning"]
    command += ["--control-socket", str(control_socket)]
    if threads:
        command += ["--threads", str(threads), "--worker-class", "gthread", "--keep-alive", "30"]
    return ["taskset", "-c", cpus, *command] if cpus else command


def wait_for_port(port: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not start")


def request(conn, method, path, *, headers=None, body=None) -> tuple[int, bytes]:
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    return response.status, response.read()


def multipart(fields: dict, file_field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
            f'filename="{filename}"\r\nContent-Type: text/plain\r\n\r\n'
        ).encode()
        + data
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (q in 0.1 steps), inclusive method."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 10) - 1]
