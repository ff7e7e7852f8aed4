"""The machine judge runner over the demo campaigns' pools, against the loopback
chat-completions server (tests/llm_server.py): throughput and the failures recorded.

    .venv/bin/python bench/machine_judge_bench.py [--database URL] [--concurrency 8]
        [--latency 0.2] [--faults] [--answers hash|lexical]

Loopback only. A scratch database (a temporary SQLite file unless ``--database`` names a
PostgreSQL database, which must exist and be empty), migrated and filled by ``manage.py
demo``; then a machine judge per demo campaign runs over its whole pool as the lead's job
does (``start_runner``, the job run in this process as a worker runs it), ``--concurrency`` requests at a
time. ``--latency`` adds that many seconds to every answer (a model's think time);
``--faults`` makes the server misbehave on a fixed share of the pairs: 429 with Retry-After
(then a grade), 500 (then a grade), a dropped connection (then a grade), an answer beyond
the timeout (then a grade), and a persistently malformed answer (recorded as a failure).
``--answers`` chooses how the server grades: ``hash`` (a grade drawn from a hash of the
prompt: throughput only, its agreement with anyone means nothing) or ``lexical``
(tests/llm_server.py's stated rule: the share of the query's words found in the passage,
0 -> 0, < 1/2 -> 1, < 1 -> 2, all -> 3; it never sees a human's grade). Prints one Markdown
row per campaign, then each machine judge's Cohen's kappa against the humans' consensus
(the agreement report's numbers, 1000 bootstrap resamples) where humans graded its pairs.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def fault_of(text: str) -> str:
    """A fixed share of the passages get a fault: 6% 429, 4% 500, 3% drop, 2% stall, 5%
    malformed; the rest are answered at once."""
    bucket = int(hashlib.sha256(text.encode()).hexdigest(), 16) % 100
    for fault, upto in (("429", 6), ("500", 10), ("drop", 13), ("stall", 15), ("malformed", 20)):
        if bucket < upto:
            return fault
    return ""


def serve(latency: float, faults: bool, timeout: float, answers: str) -> None:
    """The loopback server, in its own process (so its threads do not share the runner's
    interpreter lock): prints its base URL, then serves until killed."""
    from tests.llm_server import ANSWERS, KEY, ChatServer, Drop, Reply, Stall, Status

    grade = ANSWERS[answers]

    seen: dict[str, int] = {}

    def answer(request):
        user = next(m["content"] for m in request["messages"] if m["role"] == "user")
        fault = fault_of(user) if faults else ""
        asked = seen.get(user, 0)
        seen[user] = asked + 1
        if fault == "malformed":
            return Reply("The passage is relevant.")
        if fault and asked == 0:
            return {
                "429": Status(429, retry_after="0.1"),
                "500": Status(500),
                "drop": Drop(),
                "stall": Stall(timeout + 5),
            }[fault]
        return grade(request)

    with ChatServer(key=KEY, default=answer, latency=latency) as server:
        print(server.base_url, flush=True)
        while True:
            time.sleep(3600)


def stats(base_url: str) -> dict:
    host = base_url.removeprefix("http://").split("/")[0]
    connection = http.client.HTTPConnection(host, timeout=10)
    connection.request("GET", "/stats")
    return json.loads(connection.getresponse().read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", default="", help="a PostgreSQL URL (default: SQLite)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument(
        "--answers", choices=["hash", "lexical"], default="hash", help="how the server grades"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.latency, args.faults, args.timeout, args.answers)

    scratch = Path(tempfile.mkdtemp(prefix="relevance-machine-bench-"))
    os.environ["DATA_DIR"] = str(scratch)
    os.environ["DATABASE_URL"] = args.database or f"sqlite:///{scratch / 'db.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Jobs queue in the database, as in production; this process is their worker (below), so
    # the agreement refreshes each grade queues wait for a worker instead of running inline.
    os.environ["TASKS_BACKEND"] = "django_tasks_db.DatabaseBackend"
    # The loopback chat server is reached as an operator allows a local model (README
    # "Outbound requests"); nothing else on loopback is opened.
    os.environ["OUTBOUND_ALLOW"] = "127.0.0.1"
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.MACHINE_JUDGE_BACKOFF_SECONDS = 0.05
    call_command("migrate", verbosity=0)
    call_command("demo", stdout=open(os.devnull, "w"))  # noqa: SIM115

    from annotation import tasks
    from annotation.models import Campaign, MachineAnswer, MachineRun
    from annotation.services import machine_agreement, machine_judges, machine_runs
    from jobs.models import Job
    from tests.llm_server import KEY

    command = [sys.executable, __file__, "--serve", "--latency", str(args.latency)]
    command += ["--timeout", str(args.timeout), *(["--faults"] if args.faults else [])]
    command += ["--answers", args.answers]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        base_url = server.stdout.readline().strip()
        print(
            "| campaign | pairs | concurrency | latency | seconds | pairs/s | graded | failed "
            "| failures by kind | most in flight | requests |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        agreements = []
        for campaign in Campaign.objects.order_by("pk"):
            machine = machine_judges.create_machine_judge(
                campaign=campaign,
                model_name="loopback-7b",
                base_url=base_url,
                api_key=KEY,
                concurrency=args.concurrency,
                timeout=args.timeout,
                max_retries=2,
            )
            before = stats(base_url)
            started = time.perf_counter()
            job = machine_runs.start_runner(machine=machine, scope="pool", user=campaign.lead)
            run = MachineRun.objects.get(job=job)
            tasks.machine_judge_job.call(job_id=job.pk, run_id=run.pk)  # as a worker would
            seconds = time.perf_counter() - started
            after = stats(base_url)
            job = Job.objects.get(pk=job.pk)
            run.refresh_from_db()
            kinds: dict[str, int] = {}
            for failure in MachineAnswer.objects.filter(
                machine=machine, outcome="failed"
            ).values_list("failure", flat=True):
                kinds[failure] = kinds.get(failure, 0) + 1
            shown = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"
            print(
                f"| {campaign.name} | {run.pairs} | {args.concurrency} | {args.latency:g} s "
                f"| {seconds:.2f} | {run.pairs / seconds:.1f} | {run.graded} | {run.failed} "
                f"| {shown} | {after['most_in_flight']} "
                f"| {after['requests'] - before['requests']} |"
            )
            if job.status != "succeeded":
                print(f"job {job.pk} ended {job.status}: {job.step}", file=sys.stderr)
            for section in machine_agreement.machine_agreement(campaign=campaign):
                if section.judge == machine.judge.label:
                    agreements.append((campaign.name, section.consensus))
        print(f"\nCohen's kappa against the humans' consensus ({args.answers} answers):\n")
        print("| campaign | pairs | unweighted | linear | quadratic | lean |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, comparison in agreements:
            cells = []
            for stat in comparison.kappa.values():
                if stat.value is None:
                    cells.append(f"undefined ({stat.reason})")
                else:
                    cells.append(f"{stat.value:.4f} [{stat.low:.4f}, {stat.high:.4f}]")
            print(f"| {name} | {comparison.n} | {' | '.join(cells)} | {comparison.lean.words} |")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
