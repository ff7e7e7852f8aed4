"""Mixed load: judges grading, engineers uploading runs and readers on the dashboards, at once.

    .venv/bin/python bench/mixed_load.py [--judges 30] [--engineers 2] [--readers 4] [--seconds 60]

Loopback only and bounded in time. It creates a scratch PostgreSQL database and data folder,
migrates, and sets up one campaign whose judges each have a queue of pairs (and a logged-in
session), the benchmark's small qrels (50 topics, bench/synthetic.py) with a few scored runs,
engineers with personal API tokens and readers (leads) with sessions. Then it starts
gunicorn (production settings, plain http on 127.0.0.1) and one ``manage.py db_worker``,
and for ``--seconds`` seconds, all at once:

- judges grade their queues as in bench/judging_load.py, reading ``--think`` seconds on
  average before each grade;
- engineers upload a new 5,000-line run file through the API (POST /api/v1/runs/ with
  ``qrels``), wait until its job has imported and scored it, and upload the next;
- readers open the leaderboard page and a run's page in turn, pausing ``--think`` seconds.

It reports each kind of request's count, p50/p95/p99 latency and errors, and checks that
nothing was lost or doubled: stored judgments equal acknowledged grades with no assignment
graded twice, and every accepted upload became exactly one run with exactly one evaluation.
The database and folder are dropped at the end. Exit status 1 if a check fails.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT, django, multipart, percentile, request, scratch_app, servers
from judging_load import SETUP as JUDGING_SETUP
from judging_load import start_judges
from synthetic import ensure_dataset

SEEDED_RUNS = 4

# The judging set-up (bench/judging_load.py, whose JSON line is captured), then qrels, scored
# runs, engineers with tokens and readers with sessions.
SETUP = """
import contextlib, io, json, sys
captured = io.StringIO()
with contextlib.redirect_stdout(captured):
    exec(JUDGING_SETUP)
judging = json.loads(captured.getvalue().splitlines()[-1])
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from accounts.services.tokens import create_token
from evaluation import services

qrels_path, run_path, engineers, readers, seeded = sys.argv[3:8]
User = get_user_model()
qrels = services.import_qrels(source=open(qrels_path, "rb").read(), filename="qrels.txt", name="mixed")
source = open(run_path, "rb").read()
runs = []
for i in range(int(seeded)):
    text = source.replace(b" bench\\n", f" seeded{i}\\n".encode())
    run = services.import_run(source=text, filename=f"seeded{i}.run", system=f"seeded-{i}")
    services.score_run(run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES))
    runs.append(run.pk)
tokens = []
for i in range(int(engineers)):
    user = User.objects.create_user(f"engineer{i}")
    user.groups.add(Group.objects.get(name="engineer"))
    tokens.append(create_token(user=user, name="mixed load")[1])
cookies = []
for i in range(int(readers)):
    user = User.objects.create_user(f"reader{i}")
    user.groups.add(Group.objects.get(name="lead"))
    client = Client()
    client.force_login(user)
    cookies.append(client.cookies["sessionid"].value)
print(json.dumps({**judging, "qrels": qrels.pk, "runs": runs, "tokens": tokens, "readers": cookies}))
"""

CHECK = """
import json, sys
from django.db.models import Count
from annotation.models import Judgment, JudgmentChange
from evaluation.models import Evaluation, Run

uploaded = json.loads(sys.argv[1])
twice = (
    JudgmentChange.objects.filter(action="graded").values("assignment")
    .annotate(n=Count("pk")).filter(n__gt=1).count()
)
runs = Run.objects.filter(pk__in=uploaded)
print(json.dumps({
    "judgments": Judgment.objects.count(),
    "graded_changes": JudgmentChange.objects.filter(action="graded").count(),
    "assignments_graded_twice": twice,
    "uploaded_runs": runs.count(),
    "evaluations_per_uploaded_run": sorted({
        n for n in Evaluation.objects.filter(run__in=runs).values("run").annotate(n=Count("pk"))
        .values_list("n", flat=True)
    }),
}))
"""


class Timed(threading.Thread):
    """A user of one kind: records (latency, ok) per request until told to stop."""

    kind = ""

    def __init__(self, port: int, stop: threading.Event, seed: str):
        super().__init__(daemon=True)
        self.port, self.stop, self.random = port, stop, random.Random(seed)
        self.latencies: list[float] = []
        self.errors: list[str] = []

    def timed(self, conn, method, path, **kwargs) -> tuple[int, bytes]:
        begin = time.perf_counter()
        status, body = request(conn, method, path, **kwargs)
        self.latencies.append(time.perf_counter() - begin)
        return status, body


class Engineer(Timed):
    kind = "upload (202)"

    def __init__(self, port, stop, token, qrels, run_text: bytes, name: str):
        super().__init__(port, stop, name)
        self.token, self.qrels, self.run_text, self.name = token, qrels, run_text, name
        self.accepted: list[int] = []  # jobs answered 202
        self.runs: list[int] = []  # runs those jobs stored
        self.to_ready: list[float] = []  # upload start until the run is scored

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = {"Authorization": f"Bearer {self.token}"}
        n = 0
        try:
            while not self.stop.is_set():
                n += 1
                # A new run tag makes a new file (the same file twice is refused by checksum).
                data = self.run_text.replace(b" bench\n", f" {self.name}-{n}\n".encode())
                body, content_type = multipart(
                    {"system": self.name, "qrels": self.qrels}, "file", f"{n}.run", data
                )
                begin = time.perf_counter()
                status, answer = self.timed(
                    conn,
                    "POST",
                    "/api/v1/runs/",
                    headers={**headers, "Content-Type": content_type},
                    body=body,
                )
                if status != 202:
                    self.errors.append(f"upload answered {status}: {answer[:200]!r}")
                    continue
                job = json.loads(answer)
                self.accepted.append(job["id"])
                # The last upload is waited for even after the stop: it was accepted.
                while not job["finished"]:
                    time.sleep(0.2)
                    job = json.loads(
                        request(conn, "GET", f"/api/v1/jobs/{job['id']}/", headers=headers)[1]
                    )
                if job["status"] != "succeeded":
                    self.errors.append(f"job {job['id']} {job['status']}: {job['errors'][:3]}")
                    continue
                self.runs.append(job["result"]["run"])
                self.to_ready.append(time.perf_counter() - begin)
        except Exception as error:  # reported, not raised: the others go on
            self.errors.append(f"{type(error).__name__}: {error}")
        finally:
            conn.close()


class Reader(Timed):
    kind = "dashboard page"

    def __init__(self, port, stop, session, qrels, runs, think, name):
        super().__init__(port, stop, name)
        self.cookie = {"Cookie": f"sessionid={session}"}
        self.pages = [f"/evaluation/leaderboard/?qrels={qrels}"] + [
            f"/evaluation/runs/{run}/?qrels={qrels}" for run in runs
        ]
        self.think = think

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            while not self.stop.wait(self.random.expovariate(1 / self.think) if self.think else 0):
                page = self.random.choice(self.pages)
                status, body = self.timed(conn, "GET", page, headers=self.cookie)
                if status != 200:
                    self.errors.append(f"{page} answered {status}: {body[:200]!r}")
        except Exception as error:
            self.errors.append(f"{type(error).__name__}: {error}")
        finally:
            conn.close()


def row(kind: str, latencies: list[float], errors: int) -> str:
    if not latencies:
        return f"| {kind} | 0 | – | – | – | {errors} |"
    p50, p95, p99 = (1000 * percentile(sorted(latencies), q) for q in (50, 95, 99))
    return f"| {kind} | {len(latencies)} | {p50:.1f} | {p95:.1f} | {p99:.1f} | {errors} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=30)
    parser.add_argument("--engineers", type=int, default=2)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between actions")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--pairs-per-judge", type=int, default=500)
    args = parser.parse_args()
    if not 0 < args.seconds <= 600:
        parser.error("--seconds must be in (0, 600]: the load is bounded in time")

    dataset = ensure_dataset("small", 42, ROOT / "bench" / "data")
    load_before = os.getloadavg()
    with scratch_app("mixed") as env:
        print(
            f"setting up {args.judges} judges, {args.engineers} engineers, {args.readers} readers…",
            flush=True,
        )
        setup = json.loads(
            django(
                env,
                f"JUDGING_SETUP = {JUDGING_SETUP!r}\n{SETUP}",
                str(args.judges),
                str(args.pairs_per_judge),
                str(dataset.qrels_path),
                str(dataset.run_path),
                str(args.engineers),
                str(args.readers),
                str(SEEDED_RUNS),
            )
        )
        with servers(env, workers=args.workers, threads=args.threads, worker_interval=0.1) as port:
            stop = threading.Event()
            run_text = Path(dataset.run_path).read_bytes()
            engineers = [
                Engineer(port, stop, token, setup["qrels"], run_text, f"eng{i}")
                for i, token in enumerate(setup["tokens"])
            ]
            readers = [
                Reader(port, stop, session, setup["qrels"], setup["runs"], args.think, f"reader{i}")
                for i, session in enumerate(setup["readers"])
            ]
            judges = start_judges(setup, port, args.think, stop)
            if judges is None:
                return 1
            started = time.perf_counter()
            for user in engineers + readers:
                user.start()
            stop.wait(args.seconds)
            stop.set()
            for user in judges + readers + engineers:
                user.join(180)
            elapsed = time.perf_counter() - started
        # After the servers stopped: what was acknowledged must be stored, once.
        uploaded = [run for engineer in engineers for run in engineer.runs]
        stored = json.loads(django(env, CHECK, json.dumps(uploaded)))
    load_after = os.getloadavg()

    acknowledged = sum(judge.acknowledged for judge in judges)
    accepted = sum(len(engineer.accepted) for engineer in engineers)
    judge_errors = [e for judge in judges for e in judge.errors]
    upload_errors = [e for engineer in engineers for e in engineer.errors]
    reader_errors = [e for reader in readers for e in reader.errors]
    print(
        f"\nload average (1 min): {load_before[0]:.2f} before, {load_after[0]:.2f} after "
        f"({os.cpu_count()} CPUs); {elapsed:.1f} s; gunicorn {args.workers}×{args.threads} gthread, "
        f"one db_worker; think {args.think:g} s\n"
        "\n| requests | count | p50 ms | p95 ms | p99 ms | errors |\n|---|---:|---:|---:|---:|---:|"
    )
    print(
        row(
            f"grade ({args.judges} judges)",
            [x for j in judges for x in j.latencies],
            len(judge_errors),
        )
    )
    print(
        row(
            f"upload, answered 202 ({args.engineers} engineers)",
            [x for e in engineers for x in e.latencies],
            len(upload_errors),
        )
    )
    print(row("upload until scored", [x for e in engineers for x in e.to_ready], 0))
    print(
        row(
            f"dashboard page ({args.readers} readers)",
            [x for r in readers for x in r.latencies],
            len(reader_errors),
        )
    )
    print(
        f"\nacknowledged grades {acknowledged}, stored judgments {stored['judgments']}, first grades "
        f"in history {stored['graded_changes']}, assignments graded twice "
        f"{stored['assignments_graded_twice']}\naccepted uploads {accepted}, runs stored from them "
        f"{stored['uploaded_runs']}, evaluations per uploaded run {stored['evaluations_per_uploaded_run']}"
    )
    ok = (
        stored["judgments"] == acknowledged == stored["graded_changes"]
        and stored["assignments_graded_twice"] == 0
        and stored["uploaded_runs"] == len(uploaded) == accepted
        and stored["evaluations_per_uploaded_run"] in ([1], [])
        and not (judge_errors or upload_errors or reader_errors)
    )
    print("check:", "nothing lost, nothing doubled, no errors" if ok else "FAILED")
    for error in (judge_errors + upload_errors + reader_errors)[:10]:
        print("  ", error)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
