"""Beyond one machine: two web nodes and two task workers sharing one PostgreSQL, an S3 store
and Redis, under judges and uploading engineers, while a worker is killed and a node stopped.

    .venv/bin/python bench/cluster_load.py [--seconds 45] [--scale-seconds 20] [--judges 20]

Loopback only and bounded in time. It starts moto's S3 server (tests/s3_server.py) with a
fresh bucket, uses Redis on 127.0.0.1:6379 (a scratch database number and a random
CACHE_KEY_PREFIX, whose keys are deleted at the end), creates a scratch PostgreSQL database
and data folder (bench/harness.py), and sets up one campaign whose judges each have a queue
of pairs and a session, the small qrels of bench/synthetic.py and engineers with API tokens.
Then it starts two gunicorn nodes (A pinned to CPU 0, B to CPU 1, each on its own port and
control socket) and two ``manage.py db_worker`` processes (one per CPU), and runs three
phases:

1. **one node**: ``--judges-per-node`` judges grade as fast as one node answers (A, then B in
   the next round);
2. **two nodes**: twice as many judges, half on A and half on B, as fast as answered;
   phases 1 and 2 take turns ``--rounds`` times (2), each phase ``--scale-seconds`` (20) in
   all, so that the machine's other work falls on both alike;
3. **faults**, for ``--seconds``: ``--judges`` judges (reading ``--think`` seconds on average
   before each grade) and ``--engineers`` engineers (uploading a new 5,000-line run through
   the API with ``qrels``, waiting until it is imported and scored, pausing ``--think``) spread
   over both nodes, while worker 1 is killed with SIGKILL in the middle of an import (it runs
   with the fault tests' pause point before the import's commit, so the kill always lands on
   work in progress) and started again, and node B is killed (``--node-stop kill``, the whole
   process group: a crash) or stopped (``term``, gunicorn's graceful stop) and started again.

Clients go through a small balancer, as behind a load balancer: each has a home node, a
request that cannot connect or is cut takes the node out of rotation and is sent again to the
other node, and a node comes back once its ``/readyz`` answers 200. A grade is resent with the
same ``request_id`` (a repeat is a no-op); an upload whose answer was lost is resent with the
same bytes (409 names the run when the first copy arrived); a job whose worker died is started
again with ``POST /api/v1/jobs/<id>/retry/`` once it is stalled (the bench sets
JOB_HEARTBEAT_SECONDS=1 and JOB_STALE_AFTER_SECONDS=5 instead of 30 and 300).

It reports per phase the grades per second, p50/p95/p99 per node and the CPU each part used
per grade (from /proc/<pid>/stat: the nodes' gunicorn processes, the database's backends of
the scratch database, the load generator itself, and what else ran on the machine), the
scaling ratio, and checks that nothing was lost or doubled: stored judgments equal
acknowledged grades with no assignment graded twice and no time counted twice, and every
accepted upload is exactly one run with exactly one evaluation. Exit status 1 if a check
fails; a missed target is only reported.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from contextlib import ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    PYTHON,
    ROOT,
    cpu_seconds,
    descendants,
    django,
    free_port,
    gunicorn_command,
    machine_busy,
    multipart,
    percentile,
    postgres_backends,
    scratch_app,
)
from judging_load import SETUP as JUDGING_SETUP
from mixed_load import SETUP as MIXED_SETUP
from synthetic import ensure_dataset

sys.path.insert(0, str(ROOT))
from tests import s3_server  # moto's S3 server on loopback; imports no Django

TARGET_P95_MS = 50.0
TARGET_RATIO = 1.6
AFTER_READY_SECONDS = 5.0  # the fault phase lasts at least this long after node B is back
GRADE_SECONDS = "3.5"  # each grade's active time: a resend counted twice would show as 7.0
PAUSE_AT = "import_run.before_commit"  # jobs/faults.py: where worker 1 is killed
CUT = (OSError, http.client.HTTPException)  # refused, reset, closed mid-answer, timed out

CHECK = """
import json, sys
from collections import Counter
from django.db.models import Count
from annotation.models import Judgment, JudgmentChange
from evaluation.models import Evaluation, Run
from jobs.models import Job

named = json.loads(sys.argv[1])  # checksum of each accepted file -> the run the app named
accepted = set(named)
graded = JudgmentChange.objects.filter(action="graded")
runs = list(Run.objects.values_list("pk", "checksum"))
copies = Counter(checksum for _, checksum in runs)
scored = dict(Evaluation.objects.values("run").annotate(n=Count("pk")).values_list("run", "n"))
mine = [pk for pk, checksum in runs if checksum in accepted]
print(json.dumps({
    "judgments": Judgment.objects.count(),
    "graded_changes": graded.count(),
    "graded_twice": graded.values("assignment").annotate(n=Count("pk")).filter(n__gt=1).count(),
    "time_counted_twice": Judgment.objects.exclude(seconds=float(sys.argv[2])).count(),
    "accepted_files": len(accepted),
    "accepted_files_stored": sum(1 for checksum in accepted if copies[checksum]),
    "files_stored_twice": sum(1 for n in copies.values() if n > 1),
    "runs_not_accepted": sum(1 for _, checksum in runs if checksum not in accepted),
    "runs_named_wrongly": sum(1 for pk, checksum in runs if checksum in named and named[checksum] != pk),
    "scored_once": sum(1 for pk in mine if scored.get(pk) == 1),
    "scored_twice": sum(1 for pk in mine if scored.get(pk, 0) > 1),
    "jobs": dict(Counter(Job.objects.values_list("status", flat=True))),
    "jobs_started_again": Job.objects.filter(attempt__gt=1).count(),
}))
"""


# --- processes -------------------------------------------------------------------------


class Process:
    """A server process of the cluster, pinned to ``cpu``, its output in a log file."""

    def __init__(self, name: str, env: dict, cpu: int, logs: Path):
        self.name, self.env, self.cpu = name, env, cpu
        self.log = logs / f"{name}.log"
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self, **extra_env: str) -> None:
        with self.log.open("a") as out:
            self.process = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env={**self.env, **extra_env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def signal(self, number: int) -> None:
        """Send ``number`` to the whole process group (gunicorn's master and workers)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, number)
            self.process.wait(60)

    def pids(self) -> list[int]:
        if self.process is None or self.process.poll() is not None:
            return []
        return [self.process.pid, *descendants(self.process.pid)]


class Node(Process):
    def __init__(self, name, env, cpu, logs, *, workers: int, threads: int):
        super().__init__(f"node-{name}", env, cpu, logs)
        self.label, self.port, self.workers, self.threads = name, free_port(), workers, threads
        self.control = logs / f"{name}.ctl"

    def command(self) -> list[str]:
        self.control.unlink(missing_ok=True)  # left behind by a killed master
        return gunicorn_command(
            self.port,
            workers=self.workers,
            threads=self.threads,
            control_socket=self.control,
            cpus=str(self.cpu),
        )


class Worker(Process):
    def command(self) -> list[str]:
        return [
            *("taskset", "-c", str(self.cpu), PYTHON, "manage.py", "db_worker", "--no-reload"),
            *("--no-startup-delay", "--interval", "0.1", "-v", "0"),
        ]


def wait_ready(port: int, seconds: float = 60) -> float:
    """Poll ``/readyz`` until it answers 200; the seconds it took."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if readyz(port) == 200:
            return time.monotonic() - started
        time.sleep(0.1)
    raise SystemExit(f"the node on port {port} was not ready after {seconds:.0f} s")


def readyz(port: int) -> int | None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        response.read()
        return response.status
    except CUT:
        return None
    finally:
        conn.close()


# --- CPU accounting (harness: /proc) ---------------------------------------------------


class CpuMeter:
    """CPU seconds per part of the system between ``start()`` and ``stop()``."""

    def __init__(self, nodes: list[Node], workers: list[Worker], database: str):
        self.nodes, self.workers, self.database = nodes, workers, database

    def _read(self) -> dict:
        per_pid = {
            part: {pid: cpu_seconds(pid) for pid in pids}
            for part, pids in {
                **{node.label: node.pids() for node in self.nodes},
                "workers": [pid for worker in self.workers for pid in worker.pids()],
                "postgres": postgres_backends(self.database),
            }.items()
        }
        busy, total = machine_busy()
        return {"per_pid": per_pid, "self": cpu_seconds(os.getpid()), "busy": busy, "all": total}

    def start(self) -> None:
        self.before = self._read()

    def stop(self) -> dict[str, float]:
        after = self._read()
        used = {
            # Processes started during the phase count from 0; those gone are not counted.
            part: sum(now - self.before["per_pid"][part].get(pid, 0.0) for pid, now in pids.items())
            for part, pids in after["per_pid"].items()
        }
        used["generator"] = after["self"] - self.before["self"]
        used["machine"] = after["busy"] - self.before["busy"]
        used["capacity"] = after["all"] - self.before["all"]
        used["others"] = used["machine"] - sum(
            used[part] for part in (*(n.label for n in self.nodes), "workers", "postgres")
        )
        used["others"] -= used["generator"]
        return used


# --- the balancer and its clients --------------------------------------------------------


class Balancer:
    """What a load balancer does for the clients: sends each request to the client's home
    node while that node is in rotation, to another one otherwise. A node leaves rotation when
    a request to it cannot connect or is cut, and comes back once its /readyz answers 200
    (checked every 0.2 s while it is out)."""

    def __init__(self, nodes: list[Node]):
        self.ports = {node.label: node.port for node in nodes}
        self.out: set[str] = set()
        self.lock = threading.Lock()
        self.closed = threading.Event()
        threading.Thread(target=self._check, daemon=True).start()

    def pick(self, home: str) -> str:
        with self.lock:
            if home not in self.out:
                return home
            return next((name for name in self.ports if name not in self.out), home)

    def fail(self, name: str) -> None:
        with self.lock:
            self.out.add(name)

    def _check(self) -> None:
        while not self.closed.wait(0.2):
            for name in sorted(self.out):
                if readyz(self.ports[name]) == 200:
                    with self.lock:
                        self.out.discard(name)


class Client:
    """One user's keep-alive connections (one per node) through the balancer; cookies are
    kept as a browser keeps them."""

    def __init__(self, balancer: Balancer, home: str, cookies: dict | None = None, headers=None):
        self.balancer, self.home = balancer, home
        self.cookies = dict(cookies or {})
        self.headers = dict(headers or {})
        self.connections: dict[str, http.client.HTTPConnection] = {}

    def send(self, method, path, body=None, headers=None, give_up_after: float = 90):
        """Send until some node answers; (status, body, node, seconds of the answered attempt,
        attempts that were cut before it)."""
        cut = 0
        deadline = time.monotonic() + give_up_after
        while True:
            node = self.balancer.pick(self.home)
            conn = self.connections.get(node)
            if conn is None:
                port = self.balancer.ports[node]
                conn = self.connections[node] = http.client.HTTPConnection(
                    "127.0.0.1", port, timeout=60
                )
            all_headers = {**self.headers, **(headers or {})}
            if self.cookies:
                all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            begin = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=all_headers)
                response = conn.getresponse()
                data = response.read()
            except CUT:
                conn.close()
                del self.connections[node]
                self.balancer.fail(node)
                cut += 1
                if time.monotonic() > deadline:
                    raise
                if self.balancer.pick(self.home) == node:  # every node is out: wait a little
                    time.sleep(0.1)
                continue
            elapsed = time.perf_counter() - begin
            for value in response.headers.get_all("Set-Cookie") or []:
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
            return response.status, data, node, elapsed, cut

    def close(self) -> None:
        for conn in self.connections.values():
            conn.close()
        self.connections.clear()


class Tally:
    """What one kind of request did in one phase: latencies by node, resends, errors."""

    def __init__(self):
        self.latencies: dict[str, list[float]] = {}
        self.times: dict[str, list[float]] = {}  # when each answer came (time.monotonic)
        self.count = 0
        self.resent = 0
        self.resent_to: dict[str, int] = {}  # answered here after a cut elsewhere
        self.used_up = 0  # judges whose queue ran out
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def add(self, node: str, seconds: float, cut: int) -> None:
        with self.lock:
            self.latencies.setdefault(node, []).append(seconds)
            self.times.setdefault(node, []).append(time.monotonic())
            self.count += 1
            if cut:
                self.resent += 1
                self.resent_to[node] = self.resent_to.get(node, 0) + 1

    def all(self) -> list[float]:
        return [x for values in self.latencies.values() for x in values]


class Judge:
    """A simulated judge: grades their queue (one grade per pair, in order) in phases."""

    def __init__(self, name, session, queue, campaign, balancer):
        self.name, self.campaign = name, campaign
        self.queue = iter(queue)
        self.client = Client(balancer, "A", cookies={"sessionid": session})
        self.random = random.Random(name)

    def open_page(self) -> None:
        status, *_ = self.client.send("GET", f"/campaigns/{self.campaign}/judge/")
        if status != 200 or "csrftoken" not in self.client.cookies:
            raise SystemExit(f"{self.name}: the judging page answered {status}")

    def work(self, tally: Tally, stop: threading.Event, think: float) -> None:
        try:
            while not stop.is_set():
                if think and stop.wait(self.random.expovariate(1 / think)):
                    break
                assignment = next(self.queue, None)
                if assignment is None:  # nothing left to judge: this judge is done
                    tally.used_up += 1
                    break
                # One request id for every copy of this grade: a resend is a no-op.
                body = urllib.parse.urlencode(
                    {"grade": assignment % 4, "seconds": GRADE_SECONDS, "request_id": uuid.uuid4()}
                )
                status, data, node, seconds, cut = self.client.send(
                    "POST",
                    f"/campaigns/{self.campaign}/judge/{assignment}/grade/",
                    body,
                    {
                        "Content-Type": "application/x-www-form-urlencoded",
                        "X-CSRFToken": self.client.cookies["csrftoken"],
                    },
                )
                if status == 200 and json.loads(data).get("status") == "done":
                    tally.add(node, seconds, cut)
                else:
                    tally.errors.append(f"grade answered {status}: {data[:200]!r}")
        except Exception as error:  # reported, not raised: the other judges go on
            tally.errors.append(f"{self.name}: {type(error).__name__}: {error}")


class Engineer:
    """Uploads a new run file with ``qrels`` (one job imports and scores it), waits until the
    job is done, pauses, and uploads the next, until told to stop."""

    def __init__(self, name, token, qrels, run_text: bytes, balancer, home):
        self.name, self.qrels, self.run_text = name, qrels, run_text
        self.client = Client(balancer, home, headers={"Authorization": f"Bearer {token}"})
        self.random = random.Random(name)
        self.accepted: list[str] = []  # checksums of the files the app took
        self.runs: dict[str, int] = {}  # checksum -> the run the app named for it
        self.retried = 0  # jobs started again after their worker died
        self.resent_409 = 0  # files settled by resending them (409 names the run)

    def work(self, tally: Tally, stop: threading.Event, think: float) -> None:
        n = 0
        try:
            while not stop.is_set():
                n += 1
                # A new run tag makes a new file (the same bytes twice are refused by checksum).
                data = self.run_text.replace(b" bench\n", f" {self.name}-{n}\n".encode())
                self.upload(tally, f"{self.name}-{n}.run", data)
                if think:
                    stop.wait(self.random.expovariate(1 / think))
        except Exception as error:
            tally.errors.append(f"{self.name}: {type(error).__name__}: {error}")

    def upload(self, tally: Tally, filename: str, data: bytes) -> None:
        checksum = hashlib.sha256(data).hexdigest()
        body, content_type = multipart(
            {"system": self.name, "qrels": self.qrels}, "file", filename, data
        )

        def post():
            return self.client.send("POST", "/api/v1/runs/", body, {"Content-Type": content_type})

        status, answer, node, seconds, cut = post()
        if status == 409 and cut:
            # The copy sent before the cut arrived and was imported: the answer names the run.
            self.settle(checksum, json.loads(answer)["run"], resent=True)
            tally.add(node, seconds, cut)
            return
        if status != 202:
            tally.errors.append(f"upload answered {status}: {answer[:200]!r}")
            return
        tally.add(node, seconds, cut)
        self.accepted.append(checksum)
        job = json.loads(answer)
        while True:
            while not job["finished"] and not job["can_retry"]:
                time.sleep(0.2)
                job = json.loads(self.client.send("GET", f"/api/v1/jobs/{job['id']}/")[1])
            if job["status"] == "succeeded":
                self.runs[checksum] = job["result"]["run"]
                return
            if job["can_retry"]:  # its worker died (stalled) or it crashed
                status, answer, *_ = self.client.send("POST", f"/api/v1/jobs/{job['id']}/retry/")
                if status != 202:
                    tally.errors.append(f"retry of job {job['id']} answered {status}: {answer!r}")
                    return
                self.retried += 1
                job = json.loads(answer)
                continue
            # Refused: when another copy of this file was imported first (a resend after a cut
            # answer), sending the same bytes again is answered 409 with that run.
            status, answer, *_ = post()
            if status == 409:
                self.settle(checksum, json.loads(answer)["run"], resent=True)
            else:
                tally.errors.append(f"job {job['id']} {job['status']}: {job['step']}")
            return

    def settle(self, checksum: str, run: int, *, resent: bool) -> None:
        if checksum not in self.accepted:
            self.accepted.append(checksum)
        self.runs[checksum] = run
        self.resent_409 += resent


# --- the run -------------------------------------------------------------------------------


@contextmanager
def shared_services(redis_url: str):
    """moto's S3 server with a fresh bucket, and a Redis key prefix of this run's own; yields
    the settings for the app, and deletes the prefix's keys on the way out."""
    import redis

    prefix = f"bench-cluster-{secrets.token_hex(4)}"
    store = redis.Redis.from_url(redis_url, socket_connect_timeout=2)
    try:
        store.ping()
    except redis.RedisError as error:
        raise SystemExit(f"Redis at {redis_url} does not answer: {error}") from None
    with s3_server.moto_server() as endpoint:
        bucket = f"bench-cluster-{secrets.token_hex(4)}"
        s3_server.create_bucket(endpoint, bucket)
        try:
            yield {
                "S3_BUCKET": bucket,
                "S3_ENDPOINT_URL": endpoint,
                "S3_ACCESS_KEY_ID": s3_server.ACCESS_KEY,
                "S3_SECRET_ACCESS_KEY": s3_server.SECRET_KEY,
                "S3_REGION": s3_server.REGION,
                "REDIS_URL": redis_url,
                "CACHE_KEY_PREFIX": prefix,
                # A killed worker's job is noticed (and may be started again) within seconds.
                "JOB_HEARTBEAT_SECONDS": "1",
                "JOB_STALE_AFTER_SECONDS": "5",
            }
        finally:
            for key in store.scan_iter(match=f"{prefix}:*", count=1000):
                store.delete(key)


def run_phase(users_with_tallies, seconds: float, think: float, events=None):
    """Let every (user, tally) work for ``seconds``, and as long as the thread that
    ``events(started)`` returns runs; the elapsed time until all stopped."""
    stop = threading.Event()
    threads = [
        threading.Thread(target=user.work, args=(tally, stop, think), daemon=True)
        for user, tally in users_with_tallies
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    chaos = events(started) if events is not None else None
    stop.wait(max(0.0, seconds - (time.perf_counter() - started)))
    if chaos is not None:
        chaos.join(180)  # the faults run to their end: a node still starting is waited for
    stop.set()
    for thread in threads:
        thread.join(180)
    return time.perf_counter() - started


def ms(values: list[float], q: float) -> str:
    return f"{1000 * percentile(sorted(values), q):.1f}" if values else "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=45.0, help="the fault phase")
    parser.add_argument("--scale-seconds", type=float, default=20.0, help="one node, and two")
    parser.add_argument("--judges-per-node", type=int, default=4, help="scaling phases")
    parser.add_argument(
        "--rounds", type=int, default=2, help="turns of one node and two, sharing --scale-seconds"
    )
    parser.add_argument("--judges", type=int, default=20, help="fault phase")
    parser.add_argument("--engineers", type=int, default=2, help="fault phase")
    parser.add_argument("--think", type=float, default=0.5, help="mean seconds between actions")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per node")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--node-stop", choices=["kill", "term"], default="kill")
    parser.add_argument("--down-seconds", type=float, default=5.0, help="node B stays down")
    parser.add_argument("--pairs-per-judge", type=int, default=2000)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args()
    for name in ("seconds", "scale_seconds"):
        if not 5 <= getattr(args, name) <= 600:
            parser.error(f"--{name.replace('_', '-')} must be in [5, 600]: bounded in time")
    if args.rounds < 1 or args.scale_seconds / args.rounds < 2:
        parser.error("--rounds must be at least 1, with at least 2 s of --scale-seconds each")
    if (os.cpu_count() or 1) < 2:
        parser.error("two CPUs are needed to pin the two nodes apart")

    dataset = ensure_dataset("small", 42, ROOT / "bench" / "data")
    load_before = os.getloadavg()
    judges_needed = max(2 * args.judges_per_node, args.judges)
    with ExitStack() as stack:
        settings = stack.enter_context(shared_services(args.redis_url))
        env = stack.enter_context(scratch_app("cluster"))
        env.update(settings)
        database = urllib.parse.urlsplit(env["DATABASE_URL"]).path.lstrip("/")
        print(
            f"setting up {judges_needed} judges × {args.pairs_per_judge} pairs, "
            f"{args.engineers} engineers…",
            flush=True,
        )
        setup = json.loads(
            django(
                env,
                f"JUDGING_SETUP = {JUDGING_SETUP!r}\n{MIXED_SETUP}",
                *(str(judges_needed), str(args.pairs_per_judge)),
                *(str(dataset.qrels_path), str(dataset.run_path), str(args.engineers), "0", "0"),
            )
        )
        logs = Path(env["DATA_DIR"])
        nodes = [
            Node(name, env, cpu, logs, workers=args.workers, threads=args.threads)
            for cpu, name in enumerate("AB")
        ]
        workers = [Worker(f"worker-{i + 1}", env, i, logs) for i in range(2)]
        marker = logs / "worker-1.paused"
        try:
            for node in nodes:
                node.start()
            workers[0].start(RELEVANCE_PAUSE_AT=PAUSE_AT, RELEVANCE_PAUSE_MARKER=str(marker))
            workers[1].start()
            for node in nodes:
                wait_ready(node.port)
            outcome = phases(args, setup, dataset, nodes, workers, marker, database)
        finally:
            for process in (*nodes, *workers):
                process.signal(signal.SIGTERM)
        # After the servers stopped: what was acknowledged must be stored, once.
        named = {c: run for engineer in outcome["engineers"] for c, run in engineer.runs.items()}
        for engineer in outcome["engineers"]:  # accepted, but never told which run: lost
            named.update({c: None for c in engineer.accepted if c not in engineer.runs})
        stored = json.loads(django(env, CHECK, json.dumps(named), GRADE_SECONDS))
    load_after = os.getloadavg()
    return report(args, outcome, stored, load_before, load_after)


def phases(args, setup, dataset, nodes, workers, marker, database) -> dict:
    balancer = Balancer(nodes)
    judges = [
        Judge(name, setup["sessions"][name], queue, setup["campaign"], balancer)
        for name, queue in setup["queues"].items()
    ]
    meter = CpuMeter(nodes, workers, database)
    outcome: dict = {"phases": {}, "events": []}

    def scaling(label: str, homes: list[str], seconds: float) -> None:
        crowd = []
        for judge, home in zip(judges[: len(homes)], homes, strict=True):
            judge.client.home = home
            judge.open_page()  # the judge's page on the node they will use (warms it too)
            crowd.append((judge, Tally()))
        meter.start()
        elapsed = run_phase(crowd, seconds, 0)
        cpu = meter.stop()
        phase = outcome["phases"].setdefault(
            label, {"elapsed": 0.0, "tally": Tally(), "cpu": Counter(), "judges": len(crowd)}
        )
        phase["elapsed"] += elapsed
        phase["tally"] = merge([phase["tally"], *(t for _, t in crowd)])
        phase["cpu"].update(cpu)

    # One node and two in turns, so that the machine's other work falls on both alike; the
    # one node is A (CPU 0) and B (CPU 1) in turns, as the other work need not load both CPUs
    # alike.
    n = args.judges_per_node
    for round_ in range(args.rounds):
        alone = "AB"[round_ % 2]
        print(
            f"round {round_ + 1} of {args.rounds}: {n} judges on node {alone}, then {n} on each "
            f"node, grading as fast as answered for {args.scale_seconds / args.rounds:g} s each…",
            flush=True,
        )
        scaling("one node", [alone] * n, args.scale_seconds / args.rounds)
        scaling("two nodes", ["A"] * n + ["B"] * n, args.scale_seconds / args.rounds)

    # Faults: judges and engineers on both nodes; worker 1 killed mid-import; node B down.
    crowd = []
    for i, judge in enumerate(judges[: args.judges]):
        judge.client.home = "AB"[i % 2]
        judge.open_page()
        crowd.append((judge, Tally()))
    run_text = Path(dataset.run_path).read_bytes()
    engineers = [
        Engineer(f"eng{i}", token, setup["qrels"], run_text, balancer, "AB"[i % 2])
        for i, token in enumerate(setup["tokens"])
    ]
    uploads = Tally()
    crowd += [(engineer, uploads) for engineer in engineers]
    events = outcome["events"]

    def chaos(started: float) -> threading.Thread:
        def note(text: str) -> None:
            events.append(f"{time.perf_counter() - started:5.1f} s  {text}")

        def faults() -> None:
            # 1. Worker 1 stops just before an import commits; kill it there, start it again.
            deadline = time.monotonic() + args.seconds / 4
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            held = marker.exists()
            workers[0].signal(signal.SIGKILL)
            note(
                "worker 1 killed (SIGKILL) "
                + ("in the middle of an import" if held else "while idle (no import reached it)")
            )
            workers[0].start()
            note("worker 1 started again")
            # 2. Node B down and up again; the balancer waits for its /readyz.
            time.sleep(max(0.0, started + args.seconds / 4 - time.perf_counter()))
            if args.node_stop == "kill":
                nodes[1].signal(signal.SIGKILL)
                note("node B killed (SIGKILL to its master and workers)")
            else:
                note("node B told to stop (SIGTERM: gunicorn finishes the requests it has)")
                nodes[1].signal(signal.SIGTERM)
                note("node B stopped")
            time.sleep(args.down_seconds)
            nodes[1].start()
            note("node B started again")
            try:
                ready = wait_ready(nodes[1].port)
            except SystemExit as error:
                note(str(error))
                return
            outcome["b_ready_at"] = time.monotonic()
            note(f"node B ready (/readyz 200 after {ready:.1f} s)")
            # However long it took to start, the phase goes on until B has served a while.
            time.sleep(AFTER_READY_SECONDS)

        thread = threading.Thread(target=faults, daemon=True)
        thread.start()
        return thread

    down = "killed" if args.node_stop == "kill" else "stopped"
    print(
        f"faults: {args.judges} judges and {args.engineers} engineers on both nodes for "
        f"{args.seconds:g} s (or until node B has been back {AFTER_READY_SECONDS:g} s), worker 1 "
        f"killed, node B {down} and started again…",
        flush=True,
    )
    meter.start()
    elapsed = run_phase(crowd, args.seconds, args.think, events=chaos)
    outcome["phases"]["faults"] = {
        "elapsed": elapsed,
        "tally": merge(t for u, t in crowd if isinstance(u, Judge)),
        "cpu": meter.stop(),
        "judges": args.judges,
    }
    outcome["uploads"] = uploads
    outcome["engineers"] = engineers
    outcome["acknowledged"] = sum(p["tally"].count for p in outcome["phases"].values())
    balancer.closed.set()
    for judge in judges:
        judge.client.close()
    return outcome


def merge(tallies) -> Tally:
    merged = Tally()
    for tally in tallies:
        for node, values in tally.latencies.items():
            merged.latencies.setdefault(node, []).extend(values)
            merged.times.setdefault(node, []).extend(tally.times[node])
        for node, n in tally.resent_to.items():
            merged.resent_to[node] = merged.resent_to.get(node, 0) + n
        merged.count += tally.count
        merged.resent += tally.resent
        merged.used_up += tally.used_up
        merged.errors += tally.errors
    return merged


def report(args, outcome, stored, load_before, load_after) -> int:
    phases = outcome["phases"]
    print(
        f"\nload average (1 min): {load_before[0]:.2f} before, {load_after[0]:.2f} after "
        f"({os.cpu_count()} CPUs, shared with other work); gunicorn {args.workers}×"
        f"{args.threads} gthread per node, node A and worker 1 on CPU 0, node B and worker 2 "
        "on CPU 1; PostgreSQL, Redis, moto and the load generator unpinned\n"
    )
    print(
        "| phase | judges | node | grades | grades/s | p50 ms | p95 ms | p99 ms "
        "| web CPU ms/grade | PostgreSQL ms/grade | load generator ms/grade "
        "| CPU-s ours / other work / machine |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    bounds = {}
    for label in ("one node", "two nodes"):
        phase = phases[label]
        tally, cpu, elapsed = phase["tally"], phase["cpu"], phase["elapsed"]
        count = tally.count or 1
        web, rest = sum(cpu[n] for n in "AB"), cpu["postgres"] + cpu["generator"]
        ours = cpu["machine"] - cpu["others"]
        print(
            f"| {label} | {phase['judges']} | all | {tally.count} | {tally.count / elapsed:.0f} "
            f"| {ms(tally.all(), 50)} | {ms(tally.all(), 95)} | {ms(tally.all(), 99)} "
            f"| {1000 * web / count:.2f} | {1000 * cpu['postgres'] / count:.2f} "
            f"| {1000 * cpu['generator'] / count:.2f} "
            f"| {ours:.1f} / {cpu['others']:.1f} / {cpu['capacity']:.1f} |"
        )
        for node, values in sorted(tally.latencies.items()):
            print(
                f"| | | {node} | {len(values)} | {len(values) / elapsed:.0f} | {ms(values, 50)} "
                f"| {ms(values, 95)} | {ms(values, 99)} "
                f"| {1000 * cpu[node] / max(1, len(values)):.2f} | | | |"
            )
        # What 2 CPUs would allow at this phase's cost per grade, with nothing else running:
        # a grade's web work runs on its node's CPU; the database's and the load generator's
        # (unpinned) on whichever CPU is free.
        web_ms, rest_ms = 1000 * web / count, 1000 * rest / count
        nodes = 1 if label == "one node" else 2
        bounds[label] = (min(nodes * 1000 / web_ms, 2000 / (web_ms + rest_ms)), web_ms, rest_ms)

    one, two = phases["one node"], phases["two nodes"]
    rate_one = one["tally"].count / one["elapsed"]
    rate_two = two["tally"].count / two["elapsed"]
    ratio = rate_two / rate_one if rate_one else 0.0
    p95s = [percentile(sorted(p["tally"].all()), 95) * 1000 for p in (one, two) if p["tally"].count]
    met = ratio >= TARGET_RATIO and len(p95s) == 2 and max(p95s) <= TARGET_P95_MS
    print(
        f"\nscaling: {rate_one:.0f} grades/s with one node, {rate_two:.0f} with two: ratio "
        f"{ratio:.2f} (target >= {TARGET_RATIO} at p95 <= {TARGET_P95_MS:.0f} ms: "
        f"{'met' if met else 'NOT met'})"
    )
    (bound_one, web_one, rest_one), (bound_two, web_two, rest_two) = bounds.values()
    for label, phase in phases.items():
        if phase["tally"].used_up:
            print(
                f"{phase['tally'].used_up} judges had graded their whole queue before the end of "
                f"the {label} phase: its figure is low; raise --pairs-per-judge"
            )
    print(
        f"what 2 idle CPUs allow at the CPU measured per grade: one node <= {bound_one:.0f}/s "
        f"(web {web_one:.2f} ms on its one CPU; PostgreSQL and load generator {rest_one:.2f} ms), "
        f"two nodes <= {bound_two:.0f}/s (web {web_two:.2f} + {rest_two:.2f} ms on both CPUs): "
        f"ratio <= {bound_two / bound_one:.2f}"
    )

    faults, uploads = phases["faults"]["tally"], outcome["uploads"]
    print(
        f"\n| faults ({phases['faults']['elapsed']:.0f} s) | grades | p50 ms | p95 ms | p99 ms "
        "| grades resent here | uploads answered | upload p50 ms | upload p95 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for node in sorted(set(faults.latencies) | set(uploads.latencies)):
        grades, answered = faults.latencies.get(node, []), uploads.latencies.get(node, [])
        print(
            f"| node {node} | {len(grades)} | {ms(grades, 50)} | {ms(grades, 95)} "
            f"| {ms(grades, 99)} | {faults.resent_to.get(node, 0)} | {len(answered)} "
            f"| {ms(answered, 50)} | {ms(answered, 95)} |"
        )
    back = outcome.get("b_ready_at")
    if back is not None:
        after = sorted(
            (t, x)
            for t, x in zip(faults.times.get("B", []), faults.latencies.get("B", []), strict=True)
            if t >= back
        )
        first = ", ".join(f"{1000 * x:.0f}" for _, x in after[:5])
        print(
            f"\nnode B answered {len(after)} grades (the first five in {first or '–'} ms) and "
            f"{sum(t >= back for t in uploads.times.get('B', []))} uploads after it was ready again"
        )

    print("\nwhat happened in the fault phase (seconds from its start):")
    for line in outcome["events"]:
        print("  ", line)
    engineers = outcome["engineers"]
    print(
        f"   grades resent to the other node after a cut: {faults.resent}; uploads resent: "
        f"{uploads.resent}; jobs started again after their worker died: "
        f"{sum(e.retried for e in engineers)}; uploads settled by resending the file (409): "
        f"{sum(e.resent_409 for e in engineers)}"
    )
    acknowledged = outcome["acknowledged"]
    accepted = sum(len(e.accepted) for e in engineers)
    print(
        f"\ngrades acknowledged {acknowledged}, stored judgments {stored['judgments']}, first "
        f"grades in history {stored['graded_changes']}, assignments graded twice "
        f"{stored['graded_twice']}, judgments with time counted twice {stored['time_counted_twice']}"
        f"\nuploads accepted {accepted} ({stored['accepted_files']} files), stored "
        f"{stored['accepted_files_stored']}, stored twice {stored['files_stored_twice']}, runs "
        f"nobody was told of {stored['runs_not_accepted']}, runs named wrongly or not at all "
        f"{stored['runs_named_wrongly']}; scored exactly once "
        f"{stored['scored_once']}, twice {stored['scored_twice']}; jobs {stored['jobs']}, "
        f"started again {stored['jobs_started_again']}"
    )
    errors = [e for p in phases.values() for e in p["tally"].errors] + uploads.errors
    ok = (
        stored["judgments"] == acknowledged == stored["graded_changes"]
        and stored["graded_twice"] == 0
        and stored["time_counted_twice"] == 0
        and stored["accepted_files"] == accepted == stored["accepted_files_stored"]
        and stored["scored_once"] == accepted
        and stored["files_stored_twice"] == stored["scored_twice"] == 0
        and stored["runs_not_accepted"] == stored["runs_named_wrongly"] == 0
        and set(stored["jobs"]) <= {"succeeded", "failed"}
        and not errors
    )
    print("check:", "0 lost, 0 doubled, no errors" if ok else "FAILED")
    for error in errors[:10]:
        print("  ", error)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
