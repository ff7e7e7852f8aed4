"""Judging under load: simulated judges grade concurrently against gunicorn + PostgreSQL.

    .venv/bin/python bench/judging_load.py [--judges 50] [--seconds 60] [--think 1.0]

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
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import django, percentile, scratch_app, servers

TARGET_P95_MS = 50.0
SETUP = """
import json, sys
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from annotation import services
from annotation.models import PairSource, Topic

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--pairs-per-judge", type=int, default=1500)
    parser.add_argument(
        "--think",
        type=float,
        default=1.0,
        help="mean seconds a judge reads before each grade (0: grade as fast as answered)",
    )
    args = parser.parse_args()
    if not 0 < args.seconds <= 600:
        parser.error("--seconds must be in (0, 600]: the load is bounded in time")

    with scratch_app("load") as env:
        print(f"setting up {args.judges} judges × {args.pairs_per_judge} pairs…", flush=True)
        setup = json.loads(django(env, SETUP, str(args.judges), str(args.pairs_per_judge)))
        with servers(env, workers=args.workers, threads=args.threads) as port:
            stop = threading.Event()
            judges = start_judges(setup, port, args.think, stop)
            if judges is None:
                return 1
            started = time.perf_counter()
            stop.wait(args.seconds)
            stop.set()
            for judge in judges:
                judge.join(60)
            elapsed = time.perf_counter() - started
        # After the servers stopped: every acknowledged grade must be stored.
        stored = json.loads(django(env, CHECK))

    latencies = sorted(x for judge in judges for x in judge.latencies)
    acknowledged = sum(judge.acknowledged for judge in judges)
    errors = [e for judge in judges for e in judge.errors]
    if not latencies:
        print("no submission was acknowledged", *errors[:10], sep="\n")
        return 1
    p50, p95, p99 = (1000 * percentile(latencies, q) for q in (50, 95, 99))
    print(
        f"\n| judges | think s | seconds | gunicorn | acknowledged | per second | p50 ms | p95 ms | p99 ms | errors |\n"
        f"|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n"
        f"| {args.judges} | {args.think:g} | {elapsed:.1f} | {args.workers}×{args.threads} gthread | {acknowledged} "
        f"| {acknowledged / elapsed:.0f} | {p50:.1f} | {p95:.1f} | {p99:.1f} | {len(errors)} |"
    )
    print(
        f"\nstored judgments {stored['judgments']}, first grades in history {stored['graded_changes']}, "
        f"assignments graded twice {stored['assignments_with_two_first_grades']}"
    )
    ok = (
        stored["judgments"] == acknowledged
        and stored["graded_changes"] == acknowledged
        and stored["assignments_with_two_first_grades"] == 0
        and not errors
    )
    print("check:", "stored == acknowledged, no duplicates, no errors" if ok else "FAILED")
    for error in errors[:10]:
        print("  ", error)
    print(f"target p95 <= {TARGET_P95_MS:.0f} ms:", "met" if p95 <= TARGET_P95_MS else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
