"""What the loopback benchmarks share (judging_load.py, dashboard_bench.py, mixed_load.py,
cluster_load.py): a scratch PostgreSQL database and data folder with production settings, the
app's servers on 127.0.0.1, another commit's checkout to run them from, the CPU each process
used (/proc), and small HTTP helpers. Nothing here talks to any address but the loopback."""

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
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# The checkout a scratch instance runs from (manage.py, gunicorn's cwd): this one unless
# scratch_app was given another (checkout()); kept in the instance's environment.
CHECKOUT = "QRELSMITH_BENCH_CHECKOUT"
TICK = os.sysconf("SC_CLK_TCK")


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
def scratch_app(name: str, root: Path = ROOT) -> Iterator[dict]:
    """The environment of a migrated scratch instance (PostgreSQL database ``relevance_<name>_
    <random>``, a temporary data folder, production settings over plain http, tasks through
    the database queue) of the checkout at ``root``; both are dropped on the way out."""
    database = f"relevance_{name}_{secrets.token_hex(4)}"
    data_dir = Path(tempfile.mkdtemp(prefix=f"relevance-{name}-"))
    (data_dir / "staticfiles").mkdir()  # WhiteNoise warns when STATIC_ROOT is missing
    env = production_env(postgres_base().format(db=database), data_dir)
    env[CHECKOUT] = str(root)
    psql(f"create database {database}")
    try:
        subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, check=True)
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
        cwd=checkout_of(env),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        raise SystemExit(f"setup failed:\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1]


def checkout_of(env: dict) -> Path:
    return Path(env.get(CHECKOUT) or ROOT)


@contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """A detached git worktree of ``rev`` (a commit, branch or tag of this repository) in a
    temporary folder, run with this checkout's .venv (its packages must match); removed on the
    way out. The benchmarks run the same load against it and this checkout in one run."""
    folder = Path(tempfile.mkdtemp(prefix="qrelsmith-rev-"))
    folder.rmdir()
    subprocess.run(
        ["git", "worktree", "add", "--detach", "--quiet", str(folder), rev],
        cwd=ROOT,
        check=True,
    )
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def describe(root: Path) -> str:
    """The checkout's commit (short hash), with "+changes" when its files differ from it."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return head + ("+changes" if dirty else "")


@contextmanager
def servers(
    env: dict,
    *,
    workers: int,
    threads: int = 0,
    worker_interval: float | None = None,
    started: list | None = None,
):
    """gunicorn on a free loopback port (gthread workers when ``threads``), and a
    ``db_worker`` polling every ``worker_interval`` seconds when given; yields the port once
    gunicorn answers, and stops them all on the way out. ``started`` gets gunicorn's
    Popen (its master; the workers are its children)."""
    port = free_port()
    command = gunicorn_command(
        port,
        workers=workers,
        threads=threads,
        control_socket=Path(env["DATA_DIR"]) / "gunicorn.ctl",
    )
    root = checkout_of(env)
    processes = [subprocess.Popen(command, cwd=root, env=env, start_new_session=True)]
    if started is not None:
        started.append(processes[0])
    try:
        if worker_interval is not None:
            worker = [PYTHON, "manage.py", "db_worker", "--no-reload", "--no-startup-delay"]
            worker += ["--interval", str(worker_interval), "-v", "0"]
            processes.append(subprocess.Popen(worker, cwd=root, env=env, start_new_session=True))
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


# --- CPU accounting from /proc -------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads); 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14, 15)


def descendants(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def postgres_backends(database: str) -> list[int]:
    """The PostgreSQL backends serving ``database``, by their process titles ("postgres:
    15/main: postgres <database> 127.0.0.1(port) idle"): no query, so reading them often
    costs the server nothing."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                continue
            if title.startswith(b"postgres: ") and f" {database} ".encode() in title:
                found.append(int(entry.name))
    return found


def machine_busy() -> tuple[float, float]:
    """CPU seconds the whole machine spent busy, and in all (busy or idle), over all CPUs."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    busy = user + nice + system + irq + softirq + steal
    return busy / TICK, (busy + idle + iowait) / TICK


class CpuSampler:
    """CPU seconds each part (a name and a function listing its pids) used between
    ``start()`` and ``stop()``. The pids are read every ``interval`` seconds and each one's
    last reading kept, so a process that ends in between (a database connection closed after
    its CONN_MAX_AGE, a worker restarted) keeps what it used up to its last reading; one that
    starts counts from 0."""

    def __init__(self, parts: dict[str, Callable[[], list[int]]], interval: float = 0.25):
        self.parts, self.interval = parts, interval
        self.first: dict[str, dict[int, float]] = {}
        self.last: dict[str, dict[int, float]] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _read(self) -> None:
        for part, pids in self.parts.items():
            for pid in pids():
                used = cpu_seconds(pid)
                if used:
                    self.first[part].setdefault(pid, 0.0 if self.started else used)
                    self.last[part][pid] = max(used, self.last[part].get(pid, 0.0))

    def _sample(self) -> None:
        while not self.done.wait(self.interval):
            self._read()

    def start(self) -> None:
        self.first = {part: {} for part in self.parts}
        self.last = {part: {} for part in self.parts}
        self.started = False
        self._read()
        self.started = True
        self.busy_before = machine_busy()
        self.thread.start()

    def stop(self) -> dict[str, float]:
        self.done.set()
        self.thread.join()
        self._read()
        busy, total = machine_busy()
        used = {
            part: sum(last - self.first[part].get(pid, 0.0) for pid, last in pids.items())
            for part, pids in self.last.items()
        }
        used["machine"] = busy - self.busy_before[0]
        used["capacity"] = total - self.busy_before[1]
        return used
