"""Leads at scale (issue 18): every lead page and endpoint of a large campaign, over HTTP.

    .venv/bin/python bench/leads_bench.py [--scales 60k] [--databases sqlite,postgres]

Loopback only. For each database and scale: a scratch instance (SQLite file or PostgreSQL
database, production settings, tasks through the database queue), the synthetic campaign of
bench/leads_data.py imported from its backup with ``manage.py import_campaign`` (timed), then
gunicorn (2 workers) and one ``db_worker`` polling every 0.1 s. Each page and endpoint is
fetched as the campaign's lead:

- cold: right after a judge's new grade (a regrade through the judging page, so the
  agreement numbers are stale and a recomputation is queued), median of ``--repeat``;
- warm: fetched again with no grade in between, median of ``--repeat``.

Then the grade request's latency while a lead reloads the agreement report in a loop
(``--grades`` grades, p50/p95). Prints a Markdown table per instance and the targets; a
page that does not answer 200 exits 1, a missed target is only reported.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import PYTHON, ROOT, django, percentile, production_env, scratch_app, servers
from leads_data import write_backup

SCALES = {"60k": 20_000, "600k": 200_000}  # judgments -> pairs (3 judges per pair)
TARGET_MS = {"60k": 300.0, "600k": 1000.0}
TARGET_GRADE_P95_MS = 50.0
TARGET_IMPORT_600K_S = 60.0
DATA = ROOT / "bench" / "data"
SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from annotation.models import Assignment, Campaign
campaign = Campaign.objects.get()
User = get_user_model()
User.objects.filter(username__in=["bench-lead", "judge00"]).update(is_active=True)
sessions = {}
for name in ("bench-lead", "judge00"):
    client = Client()
    client.force_login(User.objects.get(username=name))
    sessions[name] = client.cookies["sessionid"].value
mine = list(
    Assignment.objects.filter(pair__campaign=campaign, judge__username="judge00")
    .order_by("pk").values_list("pk", flat=True)[:400]
)
pair = Assignment.objects.filter(pk=mine[0]).values_list("pair_id", flat=True).get()
print(json.dumps({"campaign": campaign.pk, "sessions": sessions, "assignments": mine, "pair": pair}))
"""


def pages(c: int, pair: int) -> list[tuple[str, str]]:
    return [
        ("adjudication queue (undecided)", f"/campaigns/{c}/adjudicate/"),
        ("adjudication queue (all disputed)", f"/campaigns/{c}/adjudicate/?show=all"),
        ("one disputed pair", f"/campaigns/{c}/adjudicate/{pair}/?show=all"),
        ("agreement report", f"/campaigns/{c}/agreement/"),
        ("agreement, linear weights", f"/campaigns/{c}/agreement/?weights=linear"),
        ("agreement JSON download", f"/campaigns/{c}/agreement/download/json/"),
        ("agreement CSV download (topics)", f"/campaigns/{c}/agreement/download/csv/?table=topics"),
        ("progress", f"/campaigns/{c}/progress/"),
        ("campaign", f"/campaigns/{c}/"),
        ("pool", f"/campaigns/{c}/pool/"),
        ("publish", f"/campaigns/{c}/publish/"),
        ("API disagreements (undecided)", f"/api/v1/campaigns/{c}/disagreements/"),
        ("API agreement", f"/api/v1/campaigns/{c}/agreement/"),
        ("API progress", f"/api/v1/campaigns/{c}/progress/"),
    ]


class Browser:
    """One logged-in user on one keep-alive connection, keeping the cookies it is given."""

    def __init__(self, port: int, session: str):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.cookies = {"sessionid": session}

    def request(self, method, path, body=None, headers=None) -> tuple[int, bytes, float]:
        headers = dict(headers or {})
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        started = time.perf_counter()
        self.conn.request(method, path, body=body, headers=headers)
        response = self.conn.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - started
        for value in response.headers.get_all("Set-Cookie") or []:
            key, _, rest = value.partition("=")
            self.cookies[key] = rest.split(";", 1)[0]
        return response.status, data, elapsed

    def get(self, path) -> tuple[int, bytes, float]:
        return self.request("GET", path)


class Judge(Browser):
    def __init__(self, port, session, campaign, assignments):
        super().__init__(port, session)
        self.campaign, self.assignments, self.turn = campaign, assignments, 0
        status, _, _ = self.get(f"/campaigns/{campaign}/judge/")
        if status != 200 or "csrftoken" not in self.cookies:
            raise SystemExit(f"the judging page answered {status}")

    def grade(self) -> float:
        """A new grade of one of the judge's pairs (always a change); its latency."""
        assignment = self.assignments[self.turn % len(self.assignments)]
        grade = (self.turn // len(self.assignments) + assignment) % 4
        self.turn += 1
        body = urllib.parse.urlencode(
            {"grade": grade, "seconds": "4.0", "request_id": str(uuid.uuid4())}
        )
        status, data, elapsed = self.request(
            "POST",
            f"/campaigns/{self.campaign}/judge/{assignment}/grade/",
            body,
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "X-CSRFToken": self.cookies["csrftoken"],
                "Referer": f"http://127.0.0.1:{self.port}/",
            },
        )
        if status != 200:
            raise SystemExit(f"a grade answered {status}: {data[:200]!r}")
        return elapsed


@contextmanager
def scratch_sqlite(name: str):
    """The environment of a migrated scratch instance on the embedded default (SQLite in a
    temporary data folder), otherwise as harness.scratch_app."""
    data_dir = Path(tempfile.mkdtemp(prefix=f"relevance-{name}-"))
    (data_dir / "staticfiles").mkdir()
    env = production_env(f"sqlite:///{data_dir / 'db.sqlite3'}", data_dir)
    try:
        subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        yield env
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def measure(env: dict, scale: str, args) -> dict:
    pairs = SCALES[scale]
    backup = write_backup(DATA / f"leads-{pairs}-seed18.json.gz", pairs=pairs)
    started = time.perf_counter()
    subprocess.run(
        [PYTHON, "manage.py", "import_campaign", str(backup)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    imported = time.perf_counter() - started
    print(f"  imported {pairs * 3:,} judgments in {imported:.1f} s", flush=True)
    setup = json.loads(django(env, SETUP))
    c = setup["campaign"]
    rows, failures = [], []
    with servers(env, workers=2, worker_interval=0.1) as port:
        lead = Browser(port, setup["sessions"]["bench-lead"])
        judge = Judge(port, setup["sessions"]["judge00"], c, setup["assignments"])
        for _, path in pages(c, setup["pair"]):  # first visits: snapshots, imports, caches
            status, _, _ = lead.get(path)
            if status != 200:
                failures.append(f"{path} answered {status}")
        for label, path in pages(c, setup["pair"]):
            cold, warm = [], []
            for _ in range(args.repeat):
                judge.grade()
                status, _, elapsed = lead.get(path)
                cold.append(elapsed)
                if status != 200:
                    failures.append(f"{path} answered {status} after a grade")
            for _ in range(args.repeat):
                status, _, elapsed = lead.get(path)
                warm.append(elapsed)
            rows.append(
                {
                    "page": label,
                    "path": path,
                    "cold_ms": ms(statistics.median(cold)),
                    "warm_ms": ms(statistics.median(warm)),
                }
            )
            print(f"  {label}: {rows[-1]['cold_ms']} / {rows[-1]['warm_ms']} ms", flush=True)
        grades = grade_while_reading(port, setup, args.grades)
    return {"import_s": round(imported, 1), "pages": rows, "grades": grades, "failures": failures}


def grade_while_reading(port: int, setup: dict, n: int) -> dict:
    """The judge grades ``n`` times, one after another, while the lead reloads the agreement
    report without pause; the grade requests' latencies."""
    c = setup["campaign"]
    stop = threading.Event()
    reads: list[float] = []

    def read():
        lead = Browser(port, setup["sessions"]["bench-lead"])
        while not stop.is_set():
            reads.append(lead.get(f"/campaigns/{c}/agreement/")[2])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    judge = Judge(port, setup["sessions"]["judge00"], c, setup["assignments"])
    latencies = []
    try:
        for _ in range(n):
            latencies.append(judge.grade())
            time.sleep(0.05)
    finally:
        stop.set()
        reader.join(60)
    return {
        "n": n,
        "p50_ms": ms(percentile(latencies, 50)),
        "p95_ms": ms(percentile(latencies, 95)),
        "report_reads": len(reads),
        "report_p50_ms": ms(percentile(reads, 50)) if reads else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="60k", help="comma-separated: 60k, 600k")
    parser.add_argument("--databases", default="sqlite,postgres", help="sqlite, postgres")
    parser.add_argument("--repeat", type=int, default=5, help="fetches per page, cold and warm")
    parser.add_argument("--grades", type=int, default=200, help="grades timed under reading")
    args = parser.parse_args()
    scales = args.scales.split(",")
    databases = args.databases.split(",")
    if not set(scales) <= set(SCALES) or not set(databases) <= {"sqlite", "postgres"}:
        parser.error("scales: 60k, 600k; databases: sqlite, postgres")
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    results, failed = {}, False
    for scale in scales:
        for database in databases:
            print(f"{database}, {scale} judgments:", flush=True)
            scratch = scratch_app if database == "postgres" else scratch_sqlite
            with scratch(f"leads{scale}") as env:
                result = measure(env, scale, args)
            results[f"{database}-{scale}"] = result
            print(
                json.dumps({f"{database}-{scale}": result}), flush=True
            )  # kept if later ones fail
            failed |= bool(result["failures"])
            for failure in result["failures"]:
                print("FAILED:", failure)
    print(f"\nload average {os.getloadavg()[0]:.2f}\n")
    print(report(results))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / f"leads-{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(json.dumps(results, indent=2))
    return 1 if failed else 0


def report(results: dict) -> str:
    keys = list(results)
    head = "| page or endpoint | " + " | ".join(f"{k} cold / warm (ms)" for k in keys) + " |"
    lines = [head, "|---|" + "---:|" * len(keys)]
    for i, row in enumerate(next(iter(results.values()))["pages"]):
        cells = []
        for k in keys:
            r = results[k]["pages"][i]
            flag = "" if r["cold_ms"] <= TARGET_MS[k.split("-")[1]] else " (over)"
            cells.append(f"{r['cold_ms']:,.0f} / {r['warm_ms']:,.0f}{flag}")
        lines.append(f"| {row['page']} | " + " | ".join(cells) + " |")
    grade = [
        f"{results[k]['grades']['p50_ms']:.0f} / {results[k]['grades']['p95_ms']:.0f}" for k in keys
    ]
    lines.append(
        "| grade request while a lead reloads the report, p50 / p95 | " + " | ".join(grade) + " |"
    )
    lines.append(
        "| import of the backup (s) | "
        + " | ".join(f"{results[k]['import_s']:.1f}" for k in keys)
        + " |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
