"""`evaluate --baseline`: a run against a baseline on every mean measure, and with
``--fail-if-worse`` a gate a CI pipeline can use (exit status 1 when the run is
significantly worse). Its flags, its checks of them, its statistics and its output; the
Django command (evaluation/management/commands/evaluate.py) scores the two runs and hands
them here. Pure: no Django.

The gate asks one question of several measures at once, so it corrects for them: the
randomisation p-values of the gated measures are Holm-adjusted together (``GATE_HELP``).
judged@k is reported but never gated: a run that retrieves documents nobody has judged yet
has a lower judged@k without being any worse.
"""

import argparse
import csv
import dataclasses
import io
import json

import numpy as np

from evaluation import measures
from evaluation.analysis import significance
from evaluation.analysis.verdicts import (
    ALPHA,
    COMPARISON_SEED,
    PERMUTATIONS,
    VERDICTS,
    format_p,
    verdict_of,
)
from evaluation.cli.main import UsageError

GATE_TEST = "randomisation"
GATE_HELP = (
    "with --baseline: exit with status 1 when RUN is significantly worse than the baseline "
    "on at least one gated measure: its mean is lower and its randomisation-test p, "
    "Holm-adjusted over all the gated measures, is below --alpha. Every mean measure is "
    "gated except judged.k (a run that retrieves unjudged documents has a lower judged@k "
    "without being worse); judged.k is still compared and shown"
)


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of the comparison with a baseline and of the gate."""
    parser.add_argument(
        "--baseline",
        metavar="RUN",
        help="compare RUN with this run (a file or stored SYSTEM/RUN) on every measure "
        "that is a mean over topics: mean Δ with a 95%% bootstrap interval, paired "
        "t-test, Wilcoxon signed-rank and randomisation test, over the topics both have",
    )
    parser.add_argument("--fail-if-worse", action="store_true", help=GATE_HELP)
    parser.add_argument("--alpha", type=float, default=ALPHA, help="default 0.05")
    parser.add_argument(
        "--permutations",
        type=int,
        default=PERMUTATIONS,
        help="sign flips of the randomisation test (default 10000)",
    )
    parser.add_argument("--seed", type=int, default=COMPARISON_SEED)


def check_gate_options(opts: dict) -> None:
    """UsageError when the gate's flags do not go together."""
    if opts["fail_if_worse"] and not opts["baseline"]:
        raise UsageError("--fail-if-worse needs --baseline RUN")
    if not 0 < opts["alpha"] < 1:
        raise UsageError(f"--alpha {opts['alpha']}: give a number between 0 and 1")
    if opts["permutations"] < 1:
        raise UsageError("--permutations must be at least 1")


def gate_failure(gate: "Gate", opts: dict) -> str | None:
    """Why the gate fails the run (``--fail-if-worse``), or None when it passes."""
    worse = gate.worse(opts["alpha"])
    if not opts["fail_if_worse"] or not worse:
        return None
    return (
        f"{opts['run']} is significantly worse than the baseline {opts['baseline']} "
        f"on {', '.join(worse)} ({GATE_TEST} test, p Holm-adjusted over "
        f"{len(gate.gated)} gated measure{'s' if len(gate.gated) != 1 else ''} "
        f"< {opts['alpha']})"
    )


def is_gated(name: str) -> bool:
    """Whether --fail-if-worse looks at this output measure: every mean but judged@k, which
    drops when a run retrieves documents nobody has judged yet, whatever its quality."""
    return name.partition("_")[0] != "judged"


class Gate:
    """A run against its baseline, measure by measure, on the topics both have.

    ``comparisons`` maps output names to significance.Comparison; the gated measures'
    randomisation tests carry ``p_adjusted``, Holm over the gated measures whose test is
    defined, so ``verdict_of`` gives the gate's verdict for them."""

    def __init__(self, topics: int, left_out: int, comparisons: dict, permutations: int, seed: int):
        self.topics = topics
        self.left_out = left_out
        self.gated = [name for name in comparisons if is_gated(name)]
        self.comparisons = adjust_across_measures(comparisons, self.gated)
        self.permutations = permutations
        self.seed = seed

    def worse(self, alpha: float) -> list[str]:
        """The gated measures on which the run is significantly worse (Holm-adjusted)."""
        return [name for name in self.gated if verdict_of(self.comparisons[name], alpha) == "worse"]


def adjust_across_measures(comparisons: dict, names: list[str]) -> dict:
    """``comparisons`` with the randomisation p of each of ``names`` Holm-adjusted over those
    of them whose test is defined (significance.adjust_holm)."""
    defined = [n for n in names if comparisons[n].randomisation.p_value is not None]
    if not defined:
        return dict(comparisons)
    adjusted = significance.adjust_holm([comparisons[n].randomisation.p_value for n in defined])
    result = dict(comparisons)
    for name, p in zip(defined, adjusted, strict=True):
        test = dataclasses.replace(comparisons[name].randomisation, p_adjusted=p)
        result[name] = dataclasses.replace(comparisons[name], randomisation=test)
    return result


def compare_evaluations(
    baseline: measures.Evaluation, run: measures.Evaluation, *, permutations: int, seed: int
) -> Gate:
    """significance.compare on each mean measure's per-topic values of the topics both
    evaluations have, in byte order of qid (the pages' order, so the numbers are theirs);
    the gated measures' randomisation p-values are then Holm-adjusted together (Gate)."""
    names = [
        name
        for name in run.measures
        if measures.is_mean(name) and name in baseline.per_topic.columns
    ]
    ours = run.per_topic.select("qid", *names)
    theirs = baseline.per_topic.select("qid", *names)
    paired = theirs.join(ours, on="qid", how="inner", suffix="__run")
    qids = paired.get_column("qid").to_list()
    order = sorted(range(len(qids)), key=lambda i: qids[i].encode())
    every = set(qids) | set(ours.get_column("qid")) | set(theirs.get_column("qid"))
    if not qids:
        raise UsageError("the run and the baseline have no evaluated topic in common")
    comparisons = {
        name: significance.compare(
            np.asarray(paired.get_column(name).to_numpy())[order],
            np.asarray(paired.get_column(f"{name}__run").to_numpy())[order],
            permutations=permutations,
            seed=seed,
        )
        for name in names
    }
    return Gate(len(qids), len(every) - len(qids), comparisons, permutations, seed)


def with_comparison(output: str, gate: Gate, opts: dict) -> str:
    """The evaluation's output followed by the comparison: a table (trec), a second CSV
    block (csv), or a "comparison" member (json)."""
    alpha = opts["alpha"]
    rows = []
    for name, c in gate.comparisons.items():
        rows.append(
            {
                "measure": name,
                "mean_baseline": c.mean_a,
                "mean_run": c.mean_b,
                "mean_delta": c.mean_delta,
                "delta_interval": [c.delta_interval.low, c.delta_interval.high],
                "wins": c.wins,
                "ties": c.ties,
                "losses": c.losses,
                "t_test_p": c.t_test.p_value,
                "wilcoxon_p": c.wilcoxon.p_value,
                "randomisation_p": c.randomisation.p_value,
                "randomisation_p_holm": c.randomisation.p_adjusted if name in gate.gated else None,
                "cohens_d": c.cohens_d,
                "gated": name in gate.gated,
                "verdict": verdict_of(c, alpha),
            }
        )
    if opts["format"] == "json":
        document = json.loads(output)
        document["comparison"] = {
            "baseline": opts["baseline"],
            "topics": gate.topics,
            "left_out": gate.left_out,
            "permutations": gate.permutations,
            "seed": gate.seed,
            "alpha": alpha,
            "gated": gate.gated,
            "measures": rows,
        }
        return json.dumps(document, indent=2) + "\n"
    if opts["format"] == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        header = ["measure", "mean_baseline", "mean_run", "mean_delta", "delta_low", "delta_high"]
        header += ["wins", "ties", "losses", "t_test_p", "wilcoxon_p", "randomisation_p"]
        writer.writerow([*header, "randomisation_p_holm", "cohens_d", "gated", "verdict"])
        for row in rows:
            low, high = row["delta_interval"]
            values = [row[k] for k in ("mean_baseline", "mean_run", "mean_delta")]
            tests = [row[k] for k in ("t_test_p", "wilcoxon_p", "randomisation_p")]
            tests.append(row["randomisation_p_holm"])
            writer.writerow(
                [
                    row["measure"],
                    *map(_repr, [*values, low, high]),
                    row["wins"],
                    row["ties"],
                    row["losses"],
                    *map(_repr, [*tests, row["cohens_d"]]),
                    "yes" if row["gated"] else "no",
                    row["verdict"],
                ]
            )
        return output + "\n" + buffer.getvalue()
    return output + "\n" + comparison_table(gate, opts)


def _repr(value) -> str:
    return "" if value is None else repr(value)


def comparison_table(gate: Gate, opts: dict) -> str:
    """The comparison as people read it: 4 decimals, p-values as the pages print them."""
    left_out = f"; {gate.left_out} only one of them has are left out" if gate.left_out else ""
    lines = [
        f"Compared with the baseline {opts['baseline']} on {gate.topics} topics{left_out}.",
        f"Δ = run − baseline; 95% bootstrap interval of Δ; two-sided paired tests; "
        f"randomisation with {gate.permutations:,} sign flips (seed {gate.seed}); "
        f"alpha {opts['alpha']}.",
        f"Verdicts of the {len(gate.gated)} gated measure{'s' if len(gate.gated) != 1 else ''} "
        f"use the randomisation p Holm-adjusted over them (Holm p); judged@k is shown, "
        f"not gated.",
    ]
    header = (
        f"{'measure':<16}{'baseline':>10}{'run':>10}{'Δ':>10}  {'95% interval of Δ':<22}"
        f"{'W/T/L':>12}{'t-test p':>10}{'Wilcoxon p':>12}{'rand. p':>10}{'Holm p':>10}"
        f"{'d':>9}  verdict"
    )
    lines.append(header)
    for name, c in gate.comparisons.items():
        interval = (
            "undefined"
            if c.delta_interval.low is None
            else f"{c.delta_interval.low:+.4f} to {c.delta_interval.high:+.4f}"
        )
        d = "—" if c.cohens_d is None else f"{c.cohens_d:+.4f}"
        gated = name in gate.gated
        holm = format_p(c.randomisation.p_adjusted) if gated else "—"
        verdict = VERDICTS[verdict_of(c, opts["alpha"])]
        lines.append(
            f"{name:<16}{c.mean_a:>10.4f}{c.mean_b:>10.4f}{c.mean_delta:>+10.4f}  {interval:<22}"
            f"{f'{c.wins}/{c.ties}/{c.losses}':>12}"
            f"{format_p(c.t_test.p_value):>10}"
            f"{format_p(c.wilcoxon.p_value):>12}"
            f"{format_p(c.randomisation.p_value):>10}{holm:>10}{d:>9}  "
            f"{verdict if gated else verdict + ' (not gated)'}"
        )
    return "\n".join(lines) + "\n"
