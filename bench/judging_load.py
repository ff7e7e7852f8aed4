"""Judging under load: simulated judges grade concurrently against gunicorn + PostgreSQL.

    .venv/bin/python bench/judging_load.py [--judges 200] [--seconds 60] [--think 1.0]
        [--baseline REV]

Loopback only and bounded in time. It creates a scratch PostgreSQL database, migrates it,
sets up one campaign with a queue of pairs for every judge (and a logged-in session each),
starts gunicorn (production settings, plain http on 127.0.0.1), and lets each judge open the
judging page and grade their queue on one keep-alive connection, reading for ``--think``
seconds on average before each grade (exponentially distributed; 1 s by default, half the
time below which the app flags a judge as suspiciously fast; 0 grades as fast as the server
answers, which measures capacity rather than what judges see) until the time is up. Then it
reports submit latency (p50/p95/p99) and throughput and checks that the database holds
exactly one judgment per acknowledged submission, with no duplicates. The database is
dropped at the end. Exit status 1 if a check fails (a target missed is only reported).

Beside the latency it reports what a grade costs: the CPU of gunicorn's processes and of the
PostgreSQL backends serving the scratch database per acknowledged grade (utime + stime from
/proc, read every half second), and the statements a grade sends (``COUNT``: after the load,
grades through the whole middleware stack in one process, each statement counted by
``connection.execute_wrapper``, the transaction's BEGIN and COMMIT and the connection's
health check beside them). ``--baseline REV`` first runs the same load from a git worktree
of REV (with this checkout's .venv), so before and after stand side by side in one run.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    CpuSampler,
    checkout,
    checkout_of,
    descendants,
    describe,
    django,
    percentile,
    postgres_backends,
    scratch_app,
    servers,
)

TARGET_P95_MS = 50.0
TARGET_WEB_CPU_MS = 3.0  # issue 34: CPU per grade, in the web process and in PostgreSQL
TARGET_POSTGRES_CPU_MS = 1.0
SETUP = """
import json, sys
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from annotation import services
from annotation.models import Document, PairSource, Topic

judges_wanted, per_judge = int(sys.argv[1]), int(sys.argv[2])
User = get_user_model()
group = Group.objects.get(name="judge")
lead = User.objects.create_user("load-lead")
judges = []
for i in range(judges_wanted):
    user = User.objects.create_user(f"judge{i:02d}")
    user.groups.add(group)
    judges.append(user)
campaign = services.create_campaign(lead=lead, name="load", overlap=1, judges=judges)
Topic.objects.bulk_create(
    Topic(campaign=campaign, qid=f"q{t:02d}", query=f"query number {t}") for t in range(judges_wanted)
)
services.add_pairs(
    campaign=campaign,
    pairs=[(f"q{t:02d}", f"d{t:02d}-{d:05d}") for t in range(judges_wanted) for d in range(per_judge)],
    source=PairSource.IMPORTED,
)
# Judges grade documents with text (one without waits outside their queue): a passage each.
Document.objects.filter(campaign=campaign).update(
    title="A passage", text="A passage of a few sentences for the judge to read. " * 12
)
queues = {j.username: services.judge_queue(campaign=campaign, judge=j) for j in judges}
# Logged-in sessions made here, not through the login form: 50 password hashes would cost
# the server minutes of CPU before the first grade, and logging in is not what is measured.
sessions = {}
for judge in judges:
    client = Client()
    client.force_login(judge)
    sessions[judge.username] = client.cookies["sessionid"].value
print(json.dumps({"campaign": campaign.pk, "queues": queues, "sessions": sessions}))
"""
CHECK = """
import json
from django.db.models import Count
from annotation.models import Judgment, JudgmentChange
duplicates = (
    JudgmentChange.objects.filter(action="graded").values("assignment").annotate(n=Count("pk")).filter(n__gt=1).count()
)
print(json.dumps({
    "judgments": Judgment.objects.count(),
    "graded_changes": JudgmentChange.objects.filter(action="graded").count(),
    "assignments_with_two_first_grades": duplicates,
}))
"""


# Grades sent through the whole middleware stack in one process (Django's test client, CSRF
# enforced, the session cookie a login gives), after the load, each statement counted where
# Django sends it, by its kind and table. The test client leaves out the connection check a
# real request starts with (close_old_connections, a "SELECT 1" with CONN_HEALTH_CHECKS), so
# it is called here as the handler calls it; psycopg sends BEGIN itself when a transaction's
# first statement goes out (counted where Django leaves autocommit), and COMMIT where Django
# commits. Written against Django's public API only, so it runs in any commit's checkout.
COUNT = """
import collections, json, re, sys, time, urllib.parse, uuid
from django.contrib.auth import get_user_model
from django.db import close_old_connections, connections
from django.test import Client
from annotation import services
from annotation.models import AssignmentStatus, Campaign

campaign, wanted, warm = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
judge = get_user_model().objects.get(username="judge00")
client = Client(enforce_csrf_checks=True, SERVER_NAME="127.0.0.1")
client.force_login(judge)
client.get(f"/campaigns/{campaign}/judge/")
token = client.cookies["csrftoken"].value
todo = list(
    services.judge_assignments(campaign=Campaign.objects.get(pk=campaign), judge=judge)
    .filter(status=AssignmentStatus.OPEN)
    .order_by("-pk").values_list("pk", flat=True)[: wanted + warm]
)
kinds = collections.Counter()
waited = collections.Counter()  # wall seconds from sending each kind to its answer
TABLE = re.compile(r'(?:FROM|INTO|UPDATE)\\s+"?(\\w+)"?', re.I)

def kind(sql):
    words = sql.lstrip().split(None, 1)
    verb = words[0].upper() if words else "?"
    if verb in ("SAVEPOINT", "RELEASE", "ROLLBACK"):
        return "SAVEPOINT / RELEASE"
    # The statement's own table: the first one named outside parentheses (subqueries); for a
    # UNION of subqueries, the first one named.
    outside = [m for m in TABLE.finditer(sql) if sql.count("(", 0, m.start()) == sql.count(")", 0, m.start())]
    table = (outside or list(TABLE.finditer(sql)) or [None])[0]
    name = table.group(1) if table else ""
    if not outside and re.search(r"\\bUNION\\b", sql):
        name += " UNION …"
    locked = re.search(r"FOR UPDATE(?: OF (.+?))?\\s*$", sql)
    if locked:
        name += " FOR UPDATE" + (" OF " + locked.group(1).replace('"', "") if locked.group(1) else "")
    return f"{verb} {name}".strip()

def counted(execute, sql, params, many, context):
    if not counting:
        return execute(sql, params, many, context)
    # Keyed by the SQL itself, sorted into kinds after the grades (outside the CPU counted).
    started = time.perf_counter()
    kinds[sql] += 1
    try:
        return execute(sql, params, many, context)
    finally:
        waited[sql] += time.perf_counter() - started

db = connections["default"]
real_commit, real_autocommit, real_usable = db._commit, db._set_autocommit, db.is_usable
def _commit():
    if counting and db.connection is not None and db.connection.info.transaction_status:
        kinds["COMMIT"] += 1
        started = time.perf_counter()
        try:
            return real_commit()
        finally:
            waited["COMMIT"] += time.perf_counter() - started
    return real_commit()
def _set_autocommit(on):
    if counting and not on:
        kinds["BEGIN"] += 1
    return real_autocommit(on)
def is_usable():
    if counting:
        kinds["SELECT 1 (connection check)"] += 1
        started = time.perf_counter()
        try:
            return real_usable()
        finally:
            waited["SELECT 1 (connection check)"] += time.perf_counter() - started
    return real_usable()
db._commit, db._set_autocommit, db.is_usable = _commit, _set_autocommit, is_usable

counting = False
cpu = 0.0
with db.execute_wrapper(counted):
    for i, assignment in enumerate(todo):
        counting = i >= warm
        close_old_connections()
        started = time.process_time()
        # Form-encoded, as judge.js (URLSearchParams) and the load's judges send it; the test
        # client's default, multipart, costs the parse a browser's grade never asks for.
        response = client.post(
            f"/campaigns/{campaign}/judge/{assignment}/grade/",
            urllib.parse.urlencode(
                {"grade": assignment % 4, "seconds": "3.5", "request_id": str(uuid.uuid4())}
            ),
            content_type="application/x-www-form-urlencoded",
            HTTP_X_CSRFTOKEN=token,
        )
        if counting:
            cpu += time.process_time() - started
        if response.status_code != 200:
            raise SystemExit(f"grade answered {response.status_code}: {response.content[:200]!r}")
graded = max(0, len(todo) - warm)
by_kind, waited_by_kind = collections.Counter(), collections.Counter()
for sql, n in kinds.items():
    name = sql if sql in ("BEGIN", "COMMIT", "SELECT 1 (connection check)") else kind(sql)
    by_kind[name] += n
    waited_by_kind[name] += waited[sql]
kinds, waited = by_kind, waited_by_kind
print(json.dumps({
    "grades": graded, "statements": dict(kinds), "waited": dict(waited),
    "cpu_ms": 1000 * cpu / max(graded, 1),
}))
"""


class Judge(threading.Thread):
    """One simulated judge: opens the judging page, then grades their queue, pausing
    ``think`` seconds on average (exponentially distributed, seeded) before each grade, until
    told to stop."""

    def __init__(self, name, session, queue, campaign, port, think, ready, stop):
        super().__init__(daemon=True)
        self.name_, self.queue, self.campaign, self.port = name, queue, campaign, port
        self.think, self.ready, self.stop = think, ready, stop
        self.random = random.Random(name)
        self.latencies: list[float] = []
        self.acknowledged = 0
        self.errors: list[str] = []
        self.cookies: dict[str, str] = {"sessionid": session}

    def request(self, conn, method, path, body=None, headers=None):
        headers = dict(headers or {})
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        for value in response.headers.get_all("Set-Cookie") or []:
            key, _, rest = value.partition("=")
            self.cookies[key] = rest.split(";", 1)[0]
        return response.status, data

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            status, _ = self.request(conn, "GET", f"/campaigns/{self.campaign}/judge/")
            if status != 200 or "csrftoken" not in self.cookies:
                raise RuntimeError(f"the judging page answered {status}")
        except Exception as error:  # reported; the run stops at the start line
            self.errors.append(f"{type(error).__name__}: {error}")
            self.ready.abort()
            conn.close()
            return
        try:
            # Everyone starts at once, after every judge has the page open.
            self.ready.wait()
            for assignment in self.queue:
                if self.think and self.stop.wait(self.random.expovariate(1 / self.think)):
                    break
                if self.stop.is_set():
                    break
                body = urllib.parse.urlencode(
                    {"grade": assignment % 4, "seconds": "3.5", "request_id": str(uuid.uuid4())}
                )
                started = time.perf_counter()
                status, data = self.request(
                    conn,
                    "POST",
                    f"/campaigns/{self.campaign}/judge/{assignment}/grade/",
                    body,
                    {
                        "Content-Type": "application/x-www-form-urlencoded",
                        "X-CSRFToken": self.cookies["csrftoken"],
                        "Referer": f"http://127.0.0.1:{self.port}/",
                    },
                )
                elapsed = time.perf_counter() - started
                if status == 200 and json.loads(data).get("status") == "done":
                    self.latencies.append(elapsed)
                    self.acknowledged += 1
                else:
                    self.errors.append(f"grade answered {status}: {data[:200]!r}")
        except Exception as error:  # reported, not raised: the other judges go on
            self.errors.append(f"{type(error).__name__}: {error}")
        finally:
            conn.close()


def start_judges(setup: dict, port: int, think: float, stop: threading.Event):
    """The set-up's judges, each with the judging page open, started together; None (the
    reasons printed) when some could not open it."""
    ready = threading.Barrier(len(setup["queues"]) + 1, timeout=120)
    judges = [
        Judge(name, setup["sessions"][name], queue, setup["campaign"], port, think, ready, stop)
        for name, queue in setup["queues"].items()
    ]
    for judge in judges:
        judge.start()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        errors = [e for judge in judges for e in judge.errors]
        print("judges could not all open the page:", *sorted(set(errors))[:10], sep="\n  ")
        return None
    return judges


def run_checkout(label: str, root: Path, args) -> dict:
    """The load against the checkout at ``root``: set-up, gunicorn, the judges, the CPU of
    gunicorn and of the database's backends, the check, then the statements counted."""
    with scratch_app("load", root) as env:
        database = urllib.parse.urlsplit(env["DATABASE_URL"]).path.lstrip("/")
        if not database:  # the unix-socket form: postgres:///<db>?host=…
            database = urllib.parse.urlsplit(env["DATABASE_URL"]).path.strip("/")
        print(
            f"[{label}] {describe(checkout_of(env))}: setting up {args.judges} judges × "
            f"{args.pairs_per_judge} pairs…",
            flush=True,
        )
        setup = json.loads(django(env, SETUP, str(args.judges), str(args.pairs_per_judge)))
        started: list = []
        with servers(env, workers=args.workers, threads=args.threads, started=started) as port:
            master = started[0].pid
            sampler = CpuSampler(
                {
                    "web": lambda: [master, *descendants(master)],
                    "postgres": lambda: postgres_backends(database),
                },
                interval=0.5,
            )
            stop = threading.Event()
            load_before = os.getloadavg()[0]
            judges = start_judges(setup, port, args.think, stop)
            if judges is None:
                return {"label": label, "failed": True}
            sampler.start()
            began = time.perf_counter()
            stop.wait(args.seconds)
            stop.set()
            for judge in judges:
                judge.join(60)
            elapsed = time.perf_counter() - began
            cpu = sampler.stop()
            load_after = os.getloadavg()[0]
        # After the servers stopped: every acknowledged grade must be stored.
        stored = json.loads(django(env, CHECK))
        counted = json.loads(
            django(env, COUNT, str(setup["campaign"]), str(args.count_grades), "5")
        )
    return {
        "label": label,
        "commit": describe(root),
        "judges": judges,
        "elapsed": elapsed,
        "cpu": cpu,
        "stored": stored,
        "counted": counted,
        "load": (load_before, load_after),
    }


def report(runs: list[dict], args) -> int:
    print(
        f"\n{args.judges} judges, think {args.think:g} s, {args.seconds:g} s each, gunicorn "
        f"{args.workers}×{args.threads} gthread; {os.cpu_count()} CPUs shared with other work "
        "(load average: 1 min, at the start and end of each run)\n"
    )
    print(
        "| checkout | commit | acknowledged | per second | p50 ms | p95 ms | p99 ms | errors "
        "| web CPU ms/grade | PostgreSQL CPU ms/grade | statements/grade | round trips/grade "
        "| load |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    ok = True
    for run in runs:
        if run.get("failed"):
            print(f"| {run['label']} | the judges could not all open the page |")
            ok = False
            continue
        judges = run["judges"]
        latencies = sorted(x for judge in judges for x in judge.latencies)
        acknowledged = sum(judge.acknowledged for judge in judges)
        errors = [e for judge in judges for e in judge.errors]
        run.update(latencies=latencies, acknowledged=acknowledged, errors=errors)
        p50, p95, p99 = (
            (1000 * percentile(latencies, q) for q in (50, 95, 99)) if latencies else (0, 0, 0)
        )
        per = max(acknowledged, 1)
        statements, trips = statement_counts(run["counted"])
        run.update(p95=p95, web=1000 * run["cpu"]["web"] / per)
        run["postgres"] = 1000 * run["cpu"]["postgres"] / per
        print(
            f"| {run['label']} | {run['commit']} | {acknowledged} | {acknowledged / run['elapsed']:.0f} "
            f"| {p50:.1f} | {p95:.1f} | {p99:.1f} | {len(errors)} | {run['web']:.2f} "
            f"| {run['postgres']:.2f} | {statements:.1f} | {trips:.1f} "
            f"| {run['load'][0]:.1f}-{run['load'][1]:.1f} |"
        )
    done = [run for run in runs if not run.get("failed")]
    if len(done) == 2:
        before, after = done
        ratios = {
            "web CPU": (before["web"], after["web"]),
            "PostgreSQL CPU": (before["postgres"], after["postgres"]),
            "statements": (
                statement_counts(before["counted"])[0],
                statement_counts(after["counted"])[0],
            ),
            "round trips": (
                statement_counts(before["counted"])[1],
                statement_counts(after["counted"])[1],
            ),
            "in-process CPU": (before["counted"]["cpu_ms"], after["counted"]["cpu_ms"]),
        }
        print(
            f"\n{after['label']} / {before['label']}, per grade: "
            + ", ".join(f"{name} x{b / a:.2f}" for name, (a, b) in ratios.items() if a)
        )
    print(
        "\nCPU per grade: utime + stime of gunicorn's master and workers, and of the "
        "PostgreSQL backends serving the bench's database, over the load, divided by the "
        "grades acknowledged (the judges' page opens are before it). The server's own "
        "processes (WAL writer, checkpointer), shared with every database, are not in it."
    )
    kinds = sorted(
        {k for run in runs if not run.get("failed") for k in run["counted"]["statements"]},
        key=lambda k: (k in TRANSACTION, k),
    )
    counted = [run for run in runs if not run.get("failed")]
    print(
        f"\nStatements per grade (COUNT: {args.count_grades} more grades of one judge through "
        "the whole middleware stack in one process, after the load), by kind and table, each "
        "with its share of the time the grade waited for the database (from sending the "
        "statement to its answer: the round trip, PostgreSQL's work, and psycopg's):\n"
    )
    print("| statement | " + " | ".join(run["label"] for run in counted) + " |")
    print("|---|" + "---:|" * len(counted))
    for kind in kinds:
        cells = []
        for run in counted:
            n = run["counted"]["statements"].get(kind, 0) / max(run["counted"]["grades"], 1)
            waited = run["counted"].get("waited", {})
            share = waited.get(kind, 0) / max(sum(waited.values()), 1e-9)
            cells.append(f"{n:.2f} ({100 * share:.0f}%)" if n else "")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    print(
        "| database wait ms/grade (all of the above) | "
        + " | ".join(
            f"{1000 * sum(run['counted'].get('waited', {}).values()) / max(run['counted']['grades'], 1):.2f}"
            for run in counted
        )
        + " |"
    )
    print(
        "| in-process CPU ms/grade (test client, no HTTP server) | "
        + " | ".join(f"{run['counted']['cpu_ms']:.2f}" for run in counted)
        + " |"
    )
    for run in counted:
        stored = run["stored"]
        good = (
            stored["judgments"] == run["acknowledged"]
            and stored["graded_changes"] == run["acknowledged"]
            and stored["assignments_with_two_first_grades"] == 0
            and not run["errors"]
        )
        ok = ok and good
        print(
            f"\n[{run['label']}] stored judgments {stored['judgments']}, first grades in history "
            f"{stored['graded_changes']}, assignments graded twice "
            f"{stored['assignments_with_two_first_grades']}, errors {len(run['errors'])}: "
            + ("stored == acknowledged, no duplicates, no errors" if good else "FAILED")
        )
        for error in run["errors"][:10]:
            print("  ", error)
        print(
            f"[{run['label']}] targets: p95 <= {TARGET_P95_MS:.0f} ms "
            f"{'met' if run['p95'] <= TARGET_P95_MS else 'NOT met'}; web CPU <= "
            f"{TARGET_WEB_CPU_MS:g} ms/grade {'met' if run['web'] <= TARGET_WEB_CPU_MS else 'NOT met'}; "
            f"PostgreSQL CPU <= {TARGET_POSTGRES_CPU_MS:g} ms/grade "
            f"{'met' if run['postgres'] <= TARGET_POSTGRES_CPU_MS else 'NOT met'}"
        )
    print("check:", "0 lost, 0 doubled, 0 errors" if ok else "FAILED")
    return 0 if ok else 1


TRANSACTION = ("BEGIN", "COMMIT", "SELECT 1 (connection check)")


def statement_counts(counted: dict) -> tuple[float, float]:
    """Statements per grade (what Django sends: SQL and savepoints) and round trips per grade
    (those, BEGIN, COMMIT and the connection check)."""
    grades = max(counted["grades"], 1)
    every = sum(counted["statements"].values()) / grades
    control = sum(counted["statements"].get(k, 0) for k in TRANSACTION) / grades
    return every - control, every


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--pairs-per-judge", type=int, default=300)
    parser.add_argument(
        "--think",
        type=float,
        default=1.0,
        help="mean seconds a judge reads before each grade (0: grade as fast as answered)",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also run the same load from a git worktree of REV first (e.g. main, a hash)",
    )
    parser.add_argument(
        "--count-grades", type=int, default=50, help="grades whose statements are counted"
    )
    args = parser.parse_args()
    if not 0 < args.seconds <= 600:
        parser.error("--seconds must be in (0, 600]: the load is bounded in time")
    if args.pairs_per_judge < args.count_grades + 5:
        parser.error("--pairs-per-judge must leave --count-grades + 5 pairs to count")

    runs = []
    with contextlib.ExitStack() as stack:
        if args.baseline:
            root = stack.enter_context(checkout(args.baseline))
            runs.append(run_checkout(f"before ({args.baseline})", root, args))
        runs.append(run_checkout("this checkout", Path(__file__).resolve().parent.parent, args))
    return report(runs, args)


if __name__ == "__main__":
    sys.exit(main())
