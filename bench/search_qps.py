"""Queries per second against a real search engine with 8 in flight (issue 31): Xapian's
Omega (Debian's ``xapian-omega``) on loopback, asked through the product's own search client
(evaluation.search: the outbound policy's connection checks, size cap, concurrency slots,
mapping with JMESPath, evaluation.search.ask_topics' thread pool) and, as the reference,
through a plain httpx client with the same 8 threads and no policy. Reports each one's
queries per second, the ratio, and the CPU each query costs: in the client's process, and in
the engine's (the gateway and its Omega processes, read from /proc), since the machine's two
cores bound the rate.

    make bench-search-qps                 # 2,000 passages, 400 queries, 3 rounds
    .venv/bin/python bench/search_qps.py --queries 800 --rounds 5

Skipped, saying so, where Omega is not installed (apt-get install xapian-omega).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common.outbound import Policy, parse_allow  # noqa: E402
from evaluation import search  # noqa: E402
from tests.omega_engine import NOT_INSTALLED, build_index, omega_installed  # noqa: E402

IN_FLIGHT = 8
K = 10
WORDS = [
    "heat",
    "pump",
    "air",
    "source",
    "boiler",
    "solar",
    "panel",
    "roof",
    "insulation",
    "window",
    "draught",
    "floor",
    "radiator",
    "water",
    "tank",
    "pressure",
    "valve",
    "pipe",
    "leak",
    "damp",
    "mould",
    "ventilation",
    "fan",
    "filter",
    "cost",
    "grant",
    "energy",
    "bill",
    "tariff",
    "meter",
    "battery",
    "storage",
    "inverter",
    "charger",
    "car",
    "garden",
    "shed",
    "fence",
    "brick",
    "timber",
    "paint",
    "plaster",
    "tile",
    "kitchen",
    "bathroom",
    "shower",
    "bath",
    "toilet",
    "drain",
    "gutter",
    "storm",
    "rain",
    "flood",
]
TICKS = os.sysconf("SC_CLK_TCK")


def corpus(n: int, rng: random.Random) -> dict[str, tuple[str, str]]:
    return {
        f"d{i}": (
            " ".join(rng.choices(WORDS, k=3)).capitalize(),
            " ".join(rng.choices(WORDS, k=40)) + ".",
        )
        for i in range(n)
    }


def queries(n: int, rng: random.Random) -> list[str]:
    return [" ".join(rng.sample(WORDS, k=rng.randint(1, 3))) for _ in range(n)]


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its waited-for children (the gateway's Omega runs)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(fields[i]) for i in (11, 12, 13, 14))
    return (utime + stime + cutime + cstime) / TICKS


def product(url: str, asked: list[str]) -> int:
    """The product's path: SearchClient under the outbound policy, ask_topics 8 at a time."""
    endpoint = search.Endpoint(
        kind="http_json",
        url=url,
        method="GET",
        template='{"P": "{{query}}", "HITSPERPAGE": {{k}}}',
        mapping=search.Mapping(hits="results", id="id", title="title", text="text", score="score"),
    )
    policy = Policy(allow=parse_allow(["127.0.0.1"]), max_concurrency=IN_FLIGHT)
    client = search.SearchClient(endpoint, policy=policy, timeout=30, max_retries=0)
    topics = [search.Topic(f"q{n}", text) for n, text in enumerate(asked)]
    try:
        outcomes = search.ask_topics(client, topics, k=K, concurrency=IN_FLIGHT)
    finally:
        client.close()
    failed = [o for o in outcomes if o.failed]
    if failed:
        raise SystemExit(f"the product's client failed {len(failed)} queries: {failed[0].error}")
    return sum(len(o.hits) for o in outcomes)


def reference(url: str, asked: list[str]) -> int:
    """A plain httpx client, 8 threads, the same request and the same fields read."""
    import httpx

    limits = httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT)
    with httpx.Client(limits=limits, timeout=30) as client:

        def ask(text: str) -> int:
            answer = client.get(url, params={"P": text, "HITSPERPAGE": K})
            answer.raise_for_status()
            hits = answer.json()["results"]
            return len([(h["id"], h["title"], h["text"], float(h["score"])) for h in hits])

        with ThreadPoolExecutor(max_workers=IN_FLIGHT) as pool:
            return sum(pool.map(ask, asked))


def measure(name: str, ask, url: str, asked: list[str], engine_pid: int) -> dict:
    engine_before = tree_cpu(engine_pid)
    cpu_before = time.process_time()
    started = time.perf_counter()
    hits = ask(url, asked)
    wall = time.perf_counter() - started
    client_cpu = time.process_time() - cpu_before
    engine_cpu = tree_cpu(engine_pid) - engine_before
    return {
        "name": name,
        "qps": len(asked) / wall,
        "client_ms": 1000 * client_cpu / len(asked),
        "engine_ms": 1000 * engine_cpu / len(asked),
        "hits": hits,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not omega_installed():
        print(f"search-qps: skipped: {NOT_INSTALLED}")
        return 0
    rng = random.Random(31)
    asked = queries(args.queries, rng)
    with tempfile.TemporaryDirectory(prefix="qrelsmith-omega-") as scratch:
        build_index(Path(scratch), corpus(args.docs, rng))
        engine = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "omega_engine.py"), scratch],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            url = engine.stdout.readline().strip()
            product(url, asked[:40])  # warm both paths and the page cache
            reference(url, asked[:40])
            rows = {"product": [], "reference": []}
            for round_ in range(args.rounds):
                order = [("product", product), ("reference", reference)]
                for name, ask in order if round_ % 2 == 0 else order[::-1]:
                    rows[name].append(measure(name, ask, url, asked, engine.pid))
        finally:
            engine.terminate()
            engine.wait(timeout=10)
    load = os.getloadavg()
    print(
        f"Omega on loopback, {args.docs:,} passages, {args.queries:,} queries, {IN_FLIGHT} in "
        f"flight, k={K}, {args.rounds} rounds (median); load {load[0]:.2f} {load[1]:.2f}"
    )
    print(f"{'client':<12}{'q/s':>9}{'client CPU ms/q':>17}{'engine CPU ms/q':>17}{'hits':>8}")
    median = {}
    for name, found in rows.items():
        median[name] = {k: statistics.median(r[k] for r in found) for k in found[0] if k != "name"}
        m = median[name]
        print(
            f"{name:<12}{m['qps']:>9.1f}{m['client_ms']:>17.2f}{m['engine_ms']:>17.2f}"
            f"{int(m['hits']):>8}"
        )
    ratio = median["product"]["qps"] / median["reference"]["qps"]
    print(f"ratio product / reference: {ratio:.2f}")
    if median["product"]["hits"] != median["reference"]["hits"]:
        print("warning: the two clients read different numbers of hits")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
