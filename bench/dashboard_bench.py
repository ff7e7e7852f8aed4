"""Dashboards under a production set-up: gunicorn + PostgreSQL + a django-tasks-db worker.

    make bench-dashboards
    .venv/bin/python bench/dashboard_bench.py [--systems 50] [--requests 20] [--uploads 3]
        [--worker-interval 0.1] [--workers 2]

Loopback only. It creates a scratch PostgreSQL database and data folder, migrates, imports
the benchmark's 1m-scale qrels (1,000 topics; bench/synthetic.py) and stores ``--systems``
systems of one run each (1,000 topics × 100 documents, the 1M-line run's scores plus seeded
noise), scored with the dashboard measures. Then it starts gunicorn (production settings,
plain http on 127.0.0.1) and one ``manage.py db_worker``, and measures

1. the leaderboard page (``--systems`` systems × 1,000 topics): ``--requests`` requests
   after two warm-up ones, one at a time, p50/p95 (target p95 <= 200 ms);
2. ``--uploads`` 1M-line runs uploaded through the HTTP API one after the other (POST
   /api/v1/runs/ with ``qrels``, so one job imports and scores), each timed from the start
   of the upload until its row is on the leaderboard (GET /api/v1/leaderboard/), polling
   the job every 50 ms (target <= 5 s for the slowest). Each upload has its own run tag, as
   the same bytes twice are refused as a duplicate. The idle worker polls its queue every
   ``--worker-interval`` seconds: 0.1 here; django-tasks-db's default of 1 s would add up
   to a second of waiting to every upload.

It prints the figures with the machine's load average (1-minute, before and after), then
drops the database and the folder. Exit status 1 if a check fails (a target missed is only
reported).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import ROOT, django, multipart, percentile, request, scratch_app, servers
from synthetic import ensure_dataset

TARGET_PAGE_P95_MS = 200.0
TARGET_UPLOAD_S = 5.0
DEPTH = 100  # documents per topic of each leaderboard run

SETUP = """
import json, sys
import numpy as np
import polars as pl
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from accounts.services.tokens import create_token
from evaluation import services, trec

qrels_path, run_path, systems, depth = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
engineer = get_user_model().objects.create_user("bench-engineer")
engineer.groups.add(Group.objects.get(name="engineer"))
qrels = services.import_qrels(source=open(qrels_path, "rb").read(), filename="qrels.txt", name="bench")
base = trec.read_run(run_path, name=run_path).select("qid", "docno", "score")
for i in range(systems):
    rng = np.random.default_rng(i)
    noisy = base.with_columns(
        (pl.col("score") + pl.Series(rng.normal(0, 0.5 + i / systems, base.height))).round(6)
    )
    top = noisy.sort(["qid", "score"], descending=[False, True]).group_by("qid", maintain_order=True).head(depth)
    text = top.select(
        pl.format("{} Q0 {} {} {} sys{}", "qid", "docno", pl.int_range(pl.len()).over("qid") + 1, "score", pl.lit(i))
    ).to_series().str.join("\\n").item() + "\\n"
    run = services.import_run(source=text.encode(), filename=f"sys{i}.run", system=f"system-{i:02d}", user=engineer)
    services.score_run(run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES))
client = Client()
client.force_login(engineer)
print(json.dumps({
    "qrels": qrels.pk,
    "token": create_token(user=engineer, name="dashboard bench")[1],
    "session": client.cookies["sessionid"].value,
}))
"""


def upload(conn, setup: dict, data: bytes, system: str) -> dict:
    """POST one run with ``qrels`` (import and score as one job), poll the job every 50 ms,
    then read the API leaderboard; the seconds until the 202 and until the row is there."""
    token = {"Authorization": f"Bearer {setup['token']}"}
    body, content_type = multipart(
        {"system": system, "qrels": setup["qrels"]}, "file", f"{system}.txt", data
    )
    begin = time.perf_counter()
    status, answer = request(
        conn, "POST", "/api/v1/runs/", headers={**token, "Content-Type": content_type}, body=body
    )
    accepted = time.perf_counter() - begin
    if status != 202:
        raise SystemExit(f"the upload answered {status}: {answer[:300]!r}")
    job = json.loads(answer)
    while not job["finished"]:
        time.sleep(0.05)
        job = json.loads(request(conn, "GET", f"/api/v1/jobs/{job['id']}/", headers=token)[1])
        if time.perf_counter() - begin > 300:
            raise SystemExit("the job did not finish in 5 minutes")
    if job["status"] != "succeeded":
        raise SystemExit(f"the job failed: {job['step']} {job['errors'][:5]}")
    status, board = request(
        conn, "GET", f"/api/v1/leaderboard/?qrels={setup['qrels']}", headers=token
    )
    ready = time.perf_counter() - begin
    row = next((r for r in json.loads(board)["rows"] if r["run"] == job["result"]["run"]), None)
    if row is None:
        raise SystemExit("the uploaded run is not on the leaderboard")
    return {"accepted": accepted, "ready": ready, "row": row}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument(
        "--worker-interval",
        type=float,
        default=0.1,
        help="seconds the idle worker waits before polling its queue again (its default is 1)",
    )
    parser.add_argument(
        "--uploads", type=int, default=3, help="1M-line uploads, one after the other"
    )
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    if args.uploads < 1 or args.requests < 1 or args.systems < 1:
        parser.error("--systems, --requests and --uploads must be at least 1")

    dataset = ensure_dataset("1m", args.seed, ROOT / "bench" / "data")
    load_before = os.getloadavg()
    with scratch_app("dash") as env:
        print(f"storing {args.systems} systems × 1,000 topics × {DEPTH} documents…", flush=True)
        started = time.perf_counter()
        setup = json.loads(
            django(
                env,
                SETUP,
                str(dataset.qrels_path),
                str(dataset.run_path),
                str(args.systems),
                str(DEPTH),
            )
        )
        print(f"  stored and scored in {time.perf_counter() - started:.1f} s", flush=True)
        with servers(env, workers=args.workers, worker_interval=args.worker_interval) as port:
            time.sleep(2)  # let the worker and gunicorn finish starting before anything is timed
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            page = f"/evaluation/leaderboard/?qrels={setup['qrels']}"
            cookie = {"Cookie": f"sessionid={setup['session']}"}

            # 1. The leaderboard page.
            times = []
            for i in range(args.requests + 2):
                begin = time.perf_counter()
                status, body = request(conn, "GET", page, headers=cookie)
                if status != 200:
                    raise SystemExit(f"the leaderboard answered {status}")
                if i >= 2:
                    times.append(1000 * (time.perf_counter() - begin))
            rows = body.count(b'name="runs"')
            if rows != args.systems:
                raise SystemExit(f"the leaderboard lists {rows} runs, not {args.systems}")
            page_p50, page_p95 = statistics.median(times), percentile(times, 95)

            # 2. 1M-line runs through the API until their leaderboard row is ready. Each upload
            # gets its own run tag: the same bytes twice would be refused as a duplicate (409).
            data = Path(dataset.run_path).read_bytes()
            tag = data[: data.index(b"\n")].split()[5]
            uploads = []
            for i in range(args.uploads):
                variant = data.replace(b" " + tag + b"\n", f" {tag.decode()}-{i}\n".encode())
                uploads.append(upload(conn, setup, variant, f"uploaded-{i}"))
            conn.close()
    load_after = os.getloadavg()

    accepted = statistics.median(u["accepted"] for u in uploads)
    ready = [u["ready"] for u in uploads]
    row = uploads[-1]["row"]
    print(
        f"\nload average (1 min): {load_before[0]:.2f} before, {load_after[0]:.2f} after "
        f"({os.cpu_count()} CPUs)\n"
        f"\n| figure | value | target |\n|---|---:|---:|\n"
        f"| leaderboard page, {args.systems} systems × 1,000 topics, p50 | {page_p50:.1f} ms | |\n"
        f"| leaderboard page, p95 of {args.requests} | {page_p95:.1f} ms | ≤ {TARGET_PAGE_P95_MS:.0f} ms |\n"
        f"| 1M-line upload: request answered (202), median | {accepted:.2f} s | |\n"
        f"| 1M-line upload until its leaderboard row is ready, median of {len(ready)} | {statistics.median(ready):.2f} s | |\n"
        f"| 1M-line upload until its leaderboard row is ready, slowest | {max(ready):.2f} s | ≤ {TARGET_UPLOAD_S:.0f} s |\n"
        f"\nuploads, seconds until ready: {', '.join(f'{r:.2f}' for r in ready)}\n"
        f"the uploaded run: nDCG@10 {row['means']['ndcg_cut_10']:.4f} over {row['topic_count']} topics; "
        f"worker interval {args.worker_interval:g} s; gunicorn {args.workers} sync workers"
    )
    print(
        f"target page p95 <= {TARGET_PAGE_P95_MS:.0f} ms:",
        "met" if page_p95 <= TARGET_PAGE_P95_MS else "NOT met",
    )
    print(
        f"target upload <= {TARGET_UPLOAD_S:.0f} s (slowest upload):",
        "met" if max(ready) <= TARGET_UPLOAD_S else "NOT met",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
