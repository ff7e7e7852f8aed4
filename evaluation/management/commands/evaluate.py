"""`trec_eval` with the same flags and byte-identical `trec` output, on files or stored data;
with ``--baseline`` also a paired comparison per measure, and with ``--fail-if-worse`` a gate
a CI pipeline can use (exit status 1 when the run is significantly worse).

The gate asks one question of several measures at once, so it corrects for them: the
randomisation p-values of the gated measures are Holm-adjusted together (``GATE_HELP``).
judged@k is reported but never gated: a run that retrieves documents nobody has judged yet
has a lower judged@k without being any worse.

Two plain files never reach this class when started from `manage.py` (it runs
evaluation.cli.main directly, without setting Django up); `call_command`, stored names and
``--baseline`` do.
"""

import argparse
import csv
import dataclasses
import io
import json
import sys
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from evaluation import dashboards, measures, services
from evaluation.analysis import significance
from evaluation.cli import inputs as cli_inputs
from evaluation.cli import main as cli
from evaluation.cli import start as cli_start
from evaluation.measures import reference
from evaluation.models import QrelsVersion, Run

GATE_TEST = "randomisation"
GATE_HELP = (
    "with --baseline: exit with status 1 when RUN is significantly worse than the baseline "
    "on at least one gated measure: its mean is lower and its randomisation-test p, "
    "Holm-adjusted over all the gated measures, is below --alpha. Every mean measure is "
    "gated except judged.k (a run that retrieves unjudged documents has a lower judged@k "
    "without being worse); judged.k is still compared and shown"
)


class Command(BaseCommand):
    help = cli_start.DESCRIPTION
    # Scoring plain files needs no database, so skip the checks that would open it.
    requires_system_checks = []

    def add_arguments(self, parser):
        cli_start.add_arguments(parser)
        parser.add_argument(
            "--baseline",
            metavar="RUN",
            help="compare RUN with this run (a file or stored SYSTEM/RUN) on every measure "
            "that is a mean over topics: mean Δ with a 95%% bootstrap interval, paired "
            "t-test, Wilcoxon signed-rank and randomisation test, over the topics both have",
        )
        parser.add_argument("--fail-if-worse", action="store_true", help=GATE_HELP)
        parser.add_argument("--alpha", type=float, default=dashboards.ALPHA, help="default 0.05")
        parser.add_argument(
            "--permutations",
            type=int,
            default=dashboards.PERMUTATIONS,
            help="sign flips of the randomisation test (default 10000)",
        )
        parser.add_argument("--seed", type=int, default=dashboards.COMPARISON_SEED)

    def handle(self, *args, **opts):
        if opts["list_measures"]:
            sys.stdout.write(reference.format_text())
            return
        if not opts["qrels"] or not opts["run"]:
            raise CommandError(cli_start.MISSING_FILES)
        if opts["fail_if_worse"] and not opts["baseline"]:
            raise CommandError("--fail-if-worse needs --baseline RUN")
        if not 0 < opts["alpha"] < 1:
            raise CommandError(f"--alpha {opts['alpha']}: give a number between 0 and 1")
        if opts["permutations"] < 1:
            raise CommandError("--permutations must be at least 1")
        try:
            specs, options = cli.options_from(argparse.Namespace(**opts))
            rel_format = opts["rel_format"]
            qrels_frame, stored_qrels = self._load_qrels(opts["qrels"], rel_format)
            stored_run = self._stored_run(opts["run"])
            zscores = cli_inputs.read_zscores(opts["zscores"], cli.read_file)
            scored = {"rel_format": rel_format, "zscores": zscores}
            if opts["save"]:
                if stored_qrels is None or stored_run is None:
                    raise CommandError("--save needs a stored qrels version and a stored run")
                if zscores is not None:
                    raise CommandError("--save stores raw values: leave out -Z")
                services.score_run(
                    run=stored_run, qrels=stored_qrels, measure_specs=specs, options=options
                )
            result, runid = self._score(
                opts["run"], stored_run, qrels_frame, specs, options, scored
            )
            gate = None
            if opts["baseline"]:
                stored_baseline = self._stored_run(opts["baseline"])
                baseline, _ = self._score(
                    opts["baseline"], stored_baseline, qrels_frame, specs, options, scored
                )
                gate = compare_evaluations(
                    baseline, result, permutations=opts["permutations"], seed=opts["seed"]
                )
        except cli.UsageError as error:
            raise CommandError(str(error)) from None
        output = cli.render(
            result,
            fmt=opts["format"],
            per_topic=opts["per_topic"],
            runid=runid,
            summary=opts["summary"],
            places=opts["places"],
        )
        if gate is not None:
            output = with_comparison(output, gate, opts)
        # Byte for byte: no styling and no extra newline from self.stdout.write.
        sys.stdout.write(output)
        sys.stdout.flush()
        if gate is not None and opts["fail_if_worse"]:
            worse = gate.worse(opts["alpha"])
            if worse:
                raise CommandError(
                    f"{opts['run']} is significantly worse than the baseline {opts['baseline']} "
                    f"on {', '.join(worse)} ({GATE_TEST} test, p Holm-adjusted over "
                    f"{len(gate.gated)} gated measure{'s' if len(gate.gated) != 1 else ''} "
                    f"< {opts['alpha']})"
                )

    def _load_qrels(self, label, rel_format="qrels"):
        path = Path(label)
        if path.is_file():
            return cli_inputs.read_relevance(rel_format, path, cli.read_file), None
        if rel_format != "qrels":
            raise CommandError(f"{label}: not a file (-R {rel_format} reads a file)")
        try:
            stored = services.find_qrels(label)
        except QrelsVersion.DoesNotExist as error:
            raise CommandError(f"{label}: not a file, and {error}") from None
        return services.load_qrels_frame(stored), stored

    def _stored_run(self, label):
        """The stored run ``label`` names, or None when it is a file."""
        if Path(label).is_file():
            return None
        try:
            return services.find_run(label)
        except Run.DoesNotExist as error:
            raise CommandError(f"{label}: not a file, and {error or 'no such run'}") from None

    def _score(self, label, stored, qrels_frame, specs, options, scored):
        """The run ``label`` (a file, or ``stored``) scored, and its runid; a large file is
        read and scored in chunks as the plain-file path does (cli.score_run_file)."""
        if stored is None:
            return cli.score_run_file(qrels_frame, Path(label), specs, options, **scored)
        frame = services.load_run_frame(stored)
        return cli.score(qrels_frame, frame, specs, options, **scored), stored.tag


def is_gated(name: str) -> bool:
    """Whether --fail-if-worse looks at this output measure: every mean but judged@k, which
    drops when a run retrieves documents nobody has judged yet, whatever its quality."""
    return name.partition("_")[0] != "judged"


class Gate:
    """A run against its baseline, measure by measure, on the topics both have.

    ``comparisons`` maps output names to significance.Comparison; the gated measures'
    randomisation tests carry ``p_adjusted``, Holm over the gated measures whose test is
    defined, so ``dashboards.verdict_of`` gives the gate's verdict for them."""

    def __init__(self, topics: int, left_out: int, comparisons: dict, permutations: int, seed: int):
        self.topics = topics
        self.left_out = left_out
        self.gated = [name for name in comparisons if is_gated(name)]
        self.comparisons = adjust_across_measures(comparisons, self.gated)
        self.permutations = permutations
        self.seed = seed

    def worse(self, alpha: float) -> list[str]:
        """The gated measures on which the run is significantly worse (Holm-adjusted)."""
        return [
            name
            for name in self.gated
            if dashboards.verdict_of(self.comparisons[name], alpha) == "worse"
        ]


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
        raise cli.UsageError("the run and the baseline have no evaluated topic in common")
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
                "verdict": dashboards.verdict_of(c, alpha),
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
        holm = dashboards.format_p(c.randomisation.p_adjusted) if gated else "—"
        verdict = dashboards.VERDICTS[dashboards.verdict_of(c, opts["alpha"])]
        lines.append(
            f"{name:<16}{c.mean_a:>10.4f}{c.mean_b:>10.4f}{c.mean_delta:>+10.4f}  {interval:<22}"
            f"{f'{c.wins}/{c.ties}/{c.losses}':>12}"
            f"{dashboards.format_p(c.t_test.p_value):>10}"
            f"{dashboards.format_p(c.wilcoxon.p_value):>12}"
            f"{dashboards.format_p(c.randomisation.p_value):>10}{holm:>10}{d:>9}  "
            f"{verdict if gated else verdict + ' (not gated)'}"
        )
    return "\n".join(lines) + "\n"
