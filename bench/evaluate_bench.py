"""Time `manage.py evaluate` against pytrec_eval, ranx, ir_measures and trec_eval, files to numbers.

Every tool runs as its own process on the same seeded synthetic qrels and run (see synthetic.py)
for nDCG@10, nDCG, P@10 and MAP; and ours and trec_eval (10.0, from the TREC_EVAL environment
variable or PATH) once more for `-m all_trec`, every measure trec_eval prints by default. For each process we record wall time and peak resident memory
(from os.wait4's rusage), take the median of --repeat runs, and check the tool's means against
ours. A Markdown table per scale goes to stdout and everything measured to bench/results/.

This process imports only the standard library: Linux counts the image a child was forked from
in the child's peak memory, so a small parent keeps that floor low.

Missed speed or memory targets are reported, never fatal. The exit status is 1 when a tool
fails to run or its means differ from ours beyond what is explained (bench/README.md).
"""

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA_DIR = BENCH / "data"
RESULTS_DIR = BENCH / "results"
SCALES = ("small", "1m", "7m", "70m")  # defined in synthetic.py
# Scales where only some tools run, each once: at 70M lines the peers would need tens of
# gigabytes, and the row is about our peak memory (reading and scoring in chunks).
SCALE_TOOLS = {"70m": ("ours", "ours_all_trec", "ours_upload")}
SCALE_REPEAT = {"70m": 1}

MEASURE_FLAGS = ("ndcg_cut.10", "ndcg", "P.10", "map")
KEYS = ("ndcg_cut_10", "ndcg", "P_10", "map")  # how trec_eval names their means
SAME = 1e-9
TARGETS = (  # (scale, largest ratio of our median time to pytrec_eval's)
    ("1m", 0.5),
    ("7m", 0.15),  # issue 11
)
ALL_TREC_TARGET = ("7m", 0.25)  # (scale, largest ratio of ours to trec_eval's, -m all_trec)
MEMORY_TARGETS = (  # (scale, MB of peak RSS, tools; 1 MB = 10^6 bytes)
    ("7m", 1000.0, ("ours", "ours_all_trec")),
    ("70m", 2000.0, ("ours", "ours_all_trec", "ours_upload")),
)


@dataclass(frozen=True)
class Tool:
    name: str
    command: Callable[[Path, Path], list[str]]
    parse: Callable[[str], dict[str, float]]
    # Largest |mean - ours| still reported as "same": trec_eval prints four decimals.
    tolerance: float = SAME
    # ranx orders tied scores its own way; its differences are checked on an untied run.
    breaks_ties_differently: bool = False
    # The row of ours that this tool's numbers and time are compared with.
    ours: str = "ours"


def _parse_ours(stdout):
    return json.loads(stdout)["all"]


def _parse_peer(stdout):
    return json.loads(stdout)


def _parse_trec_eval(stdout):
    means = {}
    for line in stdout.splitlines():
        measure, topic, value = line.split()
        if topic == "all" and measure != "runid":
            means[measure] = float(value)
    return means


def _peer(script):
    return lambda qrels, run: [sys.executable, str(BENCH / "peers" / script), str(qrels), str(run)]


def _measure_flags():
    return [flag for measure in MEASURE_FLAGS for flag in ("-m", measure)]


def _ours(qrels, run):
    flags = [*_measure_flags(), "--format", "json"]
    return [sys.executable, "manage.py", "evaluate", str(qrels), str(run), *flags]


def _ours_all_trec(qrels, run):
    flags = ["-m", "all_trec", "--trec-eval-version", "10", "--format", "json"]
    return [sys.executable, "manage.py", "evaluate", str(qrels), str(run), *flags]


def trec_eval_binary(version=10):
    """trec_eval 10.0 from the TREC_EVAL environment variable; for version 9, 9.0.8 from
    TREC_EVAL_9 if set (ours follows 9.0.8 by default: float32 scores change some ties);
    else trec_eval on PATH."""
    chosen = os.environ.get("TREC_EVAL_9") if version == 9 else None
    return chosen or os.environ.get("TREC_EVAL") or shutil.which("trec_eval")


def _trec_eval(*flags, version=10):
    def command(qrels, run):
        return [trec_eval_binary(version) or "trec_eval", *flags, str(qrels), str(run)]

    return command


TOOLS = {
    "ours": Tool("ours", _ours, _parse_ours),
    # The same command with runscan.c turned off: every run piece read by polars.
    "ours_polars": Tool(
        "ours_polars",
        lambda qrels, run: ["env", "QRELSMITH_NATIVE=0", *_ours(qrels, run)],
        _parse_ours,
    ),
    "pytrec_eval": Tool("pytrec_eval", _peer("pytrec_eval_peer.py"), _parse_peer),
    "ranx": Tool("ranx", _peer("ranx_peer.py"), _parse_peer, breaks_ties_differently=True),
    "ir_measures": Tool("ir_measures", _peer("ir_measures_peer.py"), _parse_peer),
    "trec_eval": Tool(
        "trec_eval",
        _trec_eval(*_measure_flags(), version=9),
        _parse_trec_eval,
        tolerance=5e-5 + SAME,
    ),
    "ours_all_trec": Tool("ours_all_trec", _ours_all_trec, _parse_ours, ours="ours_all_trec"),
    # An upload's path on a scratch instance: staged, imported, scored (upload_child.py).
    "ours_upload": Tool(
        "ours_upload",
        lambda qrels, run: [sys.executable, str(BENCH / "upload_child.py"), str(qrels), str(run)],
        _parse_ours,
    ),
    "trec_eval_all_trec": Tool(
        "trec_eval_all_trec",
        _trec_eval("-m", "all_trec"),
        _parse_trec_eval,
        tolerance=5e-5 + SAME,
        ours="ours_all_trec",
    ),
}


@dataclass(frozen=True)
class Dataset:
    qrels: Path
    run: Path
    summary: dict
    untied_run: Path | None = None


def ensure_dataset(scale, seed, untied=False):
    """Generate (or reuse the cached) dataset in a child process; see synthetic.py."""
    command = [sys.executable, str(BENCH / "synthetic.py"), scale, "--seed", str(seed)]
    command += ["--data-dir", str(DATA_DIR)] + (["--untied"] if untied else [])
    paths = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
    summary = paths.pop("summary")
    return Dataset(**{key: Path(value) for key, value in paths.items()}, summary=summary)


@dataclass
class Outcome:
    """What one tool did at one scale."""

    tool: str
    seconds: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)  # 1-minute load average before each run
    means: dict[str, float] | None = None
    error: str | None = None
    skipped: str | None = None
    differences: dict[str, float] = field(default_factory=dict)  # theirs - ours, beyond tolerance


def time_process(command, env):
    """Run command to completion; return (seconds, peak RSS in MB, exit code, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=err)
        # wait4 instead of wait: its rusage is this child's alone (ru_maxrss in KiB on Linux).
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            seconds,
            usage.ru_maxrss * 1024 / 1e6,
            process.returncode,
            out.read().decode(),
            err.read().decode(),
        )


def run_tool(tool, qrels, run, env, outcome):
    """Time one run of tool into outcome; on failure, record why and return False."""
    load = os.getloadavg()[0]
    seconds, peak_mb, code, stdout, stderr = time_process(tool.command(qrels, run), env)
    if code != 0:
        last = stderr.strip().splitlines()[-1:] or [f"exit status {code}"]
        outcome.error = f"exit status {code}: {last[0]}"
        return False
    try:
        means = tool.parse(stdout)
        outcome.means = {key: float(means[key]) for key in KEYS}
    except (ValueError, KeyError, TypeError) as error:
        outcome.error = f"could not read its output ({error!r}): {stdout[:200]!r}"
        return False
    outcome.seconds.append(seconds)
    outcome.peak_mb.append(peak_mb)
    outcome.loads.append(load)
    return True


def compare(outcome, ours, tool):
    """Fill outcome.differences with the means that are not the same as ours."""
    outcome.differences = {
        key: outcome.means[key] - ours.means[key]
        for key in KEYS
        if abs(outcome.means[key] - ours.means[key]) > tool.tolerance
    }


def compile_project():
    """Byte-compile our modules once, as installing or running the project anywhere does:
    with PYTHONDONTWRITEBYTECODE set (some sandboxes set it) Python never writes its
    __pycache__, and every timed run of ours would compile evaluation/ again (about 40 ms),
    while the peers' packages come compiled from their wheels."""
    compileall.compile_dir(ROOT / "evaluation", quiet=1)


def bench_scale(dataset, tools, repeat, env):
    """Time every tool on one dataset, interleaved so that machine noise hits them alike."""
    for path in (dataset.qrels, dataset.run):
        with open(path, "rb") as file:  # into the page cache, so no tool pays the first read
            while file.read(1 << 24):
                pass
    outcomes = {tool.name: Outcome(tool.name) for tool in tools}
    for tool in tools:
        if tool.name.startswith("trec_eval") and trec_eval_binary() is None:
            outcomes[tool.name].skipped = "no trec_eval binary (TREC_EVAL, or PATH)"
    for _ in range(repeat):
        for tool in tools:
            outcome = outcomes[tool.name]
            if outcome.error is None and outcome.skipped is None:
                run_tool(tool, dataset.qrels, dataset.run, env, outcome)
    for tool in tools:
        ours = outcomes.get(tool.ours)
        theirs = outcomes[tool.name].means
        if tool.name != tool.ours and ours and ours.means is not None and theirs is not None:
            compare(outcomes[tool.name], ours, tool)
    return outcomes


def check_tie_explanation(seed, env):
    """Do ranx and ours agree once ties are gone? Returns (agrees, detail)."""
    dataset = ensure_dataset("small", seed, untied=True)
    results = {}
    for name in ("ours", "ranx"):
        outcome = Outcome(name)
        if not run_tool(TOOLS[name], dataset.qrels, dataset.untied_run, env, outcome):
            return False, f"{name} failed on the untied run: {outcome.error}"
        results[name] = outcome
    compare(results["ranx"], results["ours"], TOOLS["ranx"])
    if results["ranx"].differences:
        return False, f"ranx differs even without ties: {_describe(results['ranx'].differences)}"
    return True, "ranx equals ours on the untied small run, so its differences come from ties"


def _describe(differences):
    return ", ".join(f"{key} {value:+.1e}" for key, value in differences.items())


def format_table(outcomes, tools):
    lines = [
        "| tool | median s | min s | peak MB | ours/theirs | load | means vs ours |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for tool in tools:
        outcome = outcomes[tool.name]
        if outcome.skipped or outcome.error:
            reason = f"skipped: {outcome.skipped}" if outcome.skipped else "failed"
            reason += "" if outcome.skipped else f": {outcome.error}"
            lines.append(f"| {tool.name} | - | - | - | - | - | {reason} |")
            continue
        ours = outcomes.get(tool.ours)
        our_median = statistics.median(ours.seconds) if ours and ours.seconds else None
        median = statistics.median(outcome.seconds)
        ratio = f"{our_median / median:.2f}" if our_median is not None else "-"
        if tool.name == tool.ours:
            agreement = "-"
        elif ours is None or ours.means is None:
            agreement = "not checked (no numbers from ours)"
        elif not outcome.differences:
            agreement = "same" if tool.tolerance == SAME else "same to 4 decimals"
        else:
            agreement = _describe(outcome.differences)
            if tool.breaks_ties_differently:
                agreement += " (ties; see the check below)"
        lines.append(
            f"| {tool.name} | {median:.2f} | {min(outcome.seconds):.2f} "
            f"| {max(outcome.peak_mb):.0f} | {ratio} | {statistics.median(outcome.loads):.1f} "
            f"| {agreement} |"
        )
    return "\n".join(lines)


def check_targets(all_outcomes):
    """Lines saying whether each target is met; never raises."""
    lines = []
    for scale, limit in TARGETS:
        if scale not in all_outcomes:
            continue
        outcomes = all_outcomes.get(scale, {})
        ours, peer = outcomes.get("ours"), outcomes.get("pytrec_eval")
        if not (ours and ours.seconds and peer and peer.seconds):
            lines.append(f"- {scale}: ours <= {limit}x pytrec_eval's time: not measured")
            continue
        ratio = statistics.median(ours.seconds) / statistics.median(peer.seconds)
        verdict = "met" if ratio <= limit else "NOT met"
        lines.append(f"- {scale}: ours <= {limit}x pytrec_eval's time: {ratio:.2f}x, {verdict}")
    scale, limit = ALL_TREC_TARGET
    outcomes = all_outcomes.get(scale, {})
    ours, peer = outcomes.get("ours_all_trec"), outcomes.get("trec_eval_all_trec")
    what = f"ours -m all_trec <= {limit}x trec_eval 10.0's time"
    if ours and ours.seconds and peer and peer.seconds:
        ratio = statistics.median(ours.seconds) / statistics.median(peer.seconds)
        lines.append(f"- {scale}: {what}: {ratio:.2f}x, {'met' if ratio <= limit else 'NOT met'}")
    elif scale in all_outcomes:
        lines.append(f"- {scale}: {what}: not measured")
    for scale, limit_mb, names in MEMORY_TARGETS:
        for name in names:
            ours = all_outcomes.get(scale, {}).get(name)
            what = f"{name}: peak memory <= {limit_mb:.0f} MB"
            if ours and ours.peak_mb:
                peak = max(ours.peak_mb)
                verdict = "met" if peak <= limit_mb else "NOT met"
                lines.append(f"- {scale}: {what}: {peak:.0f} MB, {verdict}")
            elif scale in all_outcomes:
                lines.append(f"- {scale}: {what}: not measured")
    return lines


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scales",
        default="small,1m,7m,70m",
        help="comma-separated: small,1m,7m,70m (70m: 2.7 GB of data; ours only, once each)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per tool (median)")
    parser.add_argument(
        "--tools", default=",".join(TOOLS), help=f"comma-separated: {','.join(TOOLS)}"
    )
    parser.add_argument("--seed", type=int, default=42, help="data generator seed")
    args = parser.parse_args(argv)
    args.scales = [scale for scale in args.scales.split(",") if scale]
    args.tools = [tool for tool in args.tools.split(",") if tool]
    unknown = [s for s in args.scales if s not in SCALES]
    unknown += [t for t in args.tools if t not in TOOLS]
    if unknown:
        parser.error(f"unknown scale or tool: {', '.join(unknown)}")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    tools = [TOOLS[name] for name in TOOLS if name in args.tools]
    env = {**os.environ, "DEBUG": "1"}
    started, load = datetime.now().astimezone(), os.getloadavg()[0]
    print(
        f"# Benchmark {started:%Y-%m-%d %H:%M}: {os.cpu_count()} cores, "
        f"load {load:.2f}, Python {platform.python_version()}, "
        f"median of {args.repeat}"
        + "".join(
            f" ({scale}: {n} run)" for scale, n in SCALE_REPEAT.items() if scale in args.scales
        )
    )

    compile_project()
    all_outcomes, datasets = {}, {}
    for scale in args.scales:
        start = time.perf_counter()
        datasets[scale] = ensure_dataset(scale, args.seed)
        summary = datasets[scale].summary
        print(
            f"\n## {scale}: {summary['topics']:,} topics, {summary['run_lines']:,} run lines, "
            f"{summary['qrels_lines']:,} qrels lines, {summary['tied_lines']:.1%} tied lines "
            f"(data ready in {time.perf_counter() - start:.1f} s)",
            flush=True,
        )
        chosen = [tool for tool in tools if tool.name in SCALE_TOOLS.get(scale, TOOLS)]
        chosen = [tool for tool in chosen if tool.name != "ours_upload" or scale in SCALE_TOOLS]
        repeat = SCALE_REPEAT.get(scale, args.repeat)
        all_outcomes[scale] = bench_scale(datasets[scale], chosen, repeat, env)
        print("\n" + format_table(all_outcomes[scale], chosen), flush=True)

    failures = []
    for scale, outcomes in all_outcomes.items():
        for name, outcome in outcomes.items():
            if outcome.error:
                failures.append(f"{scale}: {name} failed: {outcome.error}")
            elif outcome.differences and not TOOLS[name].breaks_ties_differently:
                failures.append(f"{scale}: {name} differs: {_describe(outcome.differences)}")
    tie_check = None
    if any(
        outcomes.get("ranx") and outcomes["ranx"].differences for outcomes in all_outcomes.values()
    ):
        agrees, detail = check_tie_explanation(args.seed, env)
        tie_check = {"explained": agrees, "detail": detail}
        print(f"\nranx and ties: {detail}")
        if not agrees:
            failures.append(detail)

    print("\n## Targets")
    target_lines = check_targets(all_outcomes)
    print("\n".join(target_lines))
    if failures:
        print("\n## Disagreements and failures")
        print("\n".join(f"- {failure}" for failure in failures))

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    result_path = RESULTS_DIR / f"bench-{started:%Y%m%d-%H%M%S}.json"
    result = {
        "started": started.isoformat(),
        "machine": {
            "cores": os.cpu_count(),
            "load_at_start": load,
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "args": {"scales": args.scales, "repeat": args.repeat, "tools": args.tools},
        "seed": args.seed,
        "measures": list(MEASURE_FLAGS),
        "scales": {
            scale: {
                "data": {
                    "qrels": str(datasets[scale].qrels.relative_to(ROOT)),
                    "run": str(datasets[scale].run.relative_to(ROOT)),
                    **datasets[scale].summary,
                },
                "tools": {name: vars(outcome) for name, outcome in outcomes.items()},
            }
            for scale, outcomes in all_outcomes.items()
        },
        "ranx_tie_check": tie_check,
        "targets": target_lines,
        "failures": failures,
    }
    result_path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nResults: {result_path.relative_to(ROOT)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
