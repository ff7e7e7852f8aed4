import json
import math

from django.core.management.base import BaseCommand, CommandError

from evaluation import services
from evaluation.analysis.significance import RESAMPLES
from evaluation.dashboards import rankings
from evaluation.dashboards.rankings import comparison_body
from evaluation.dashboards.scoring import ScoringError
from evaluation.models import QrelsVersion, Run

# Per-topic columns: heading -> the JSON's key.
TOPIC_HEADS = {
    "tau-b": "kendall",
    "Spearman": "spearman",
    "Pearson": "pearson",
    "tauap_b": "tauap_b",
}


def _fmt(value) -> str:
    return (
        "   n/a"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:7.4f}"
    )


class Command(BaseCommand):
    help = (
        "Would NEW change the leaderboard? Score the runs with two stored qrels versions (OLD "
        "is the reference) and print how far the two system rankings by one measure agree: "
        "Kendall's tau-b, Spearman, Pearson, tau-AP (tauap_b), tau_GAP and RBO, with 95% "
        "bootstrap intervals over topics, @k too, the pairs of runs that swap, and per topic "
        "tau-b, Spearman, Pearson and tauap_b of the runs' values on that topic."
    )

    def add_arguments(self, parser):
        parser.add_argument("old", help="NAME (latest version) or NAME@VERSION: the reference")
        parser.add_argument("new", help="NAME (latest version) or NAME@VERSION")
        parser.add_argument(
            "--runs", nargs="+", default=None, help="SYSTEM/RUN ... (default: every stored run)"
        )
        parser.add_argument(
            "--measure", default="ndcg_cut_10", help="e.g. ndcg_cut_10, ndcg_cut.10, nDCG@10, map"
        )
        parser.add_argument(
            "-m",
            dest="specs",
            action="append",
            default=None,
            help="measures to score with (trec_eval's -m; default the dashboard set)",
        )
        parser.add_argument(
            "-k", type=int, default=None, help="also over the OLD ranking's top k runs"
        )
        parser.add_argument("--samples", type=int, default=RESAMPLES)
        parser.add_argument(
            "--topics",
            dest="per_topic_rows",
            type=int,
            default=20,
            help="per-topic rows printed, lowest tau-b first (0: all; --json has all)",
        )
        parser.add_argument("--json", action="store_true", help="the API's JSON instead of text")

    def handle(self, *args, old, new, runs, measure, specs, k, samples, per_topic_rows, **options):
        versions = []
        for label in (old, new):
            try:
                versions.append(services.find_qrels(label))
            except QrelsVersion.DoesNotExist as error:
                raise CommandError(str(error) or f"no qrels {label!r}") from None
        chosen = None
        if runs:
            chosen = []
            for label in runs:
                try:
                    chosen.append(services.find_run(label))
                except Run.DoesNotExist as error:
                    raise CommandError(str(error) or f"no run {label!r}") from None
        if samples < 1:
            raise CommandError("--samples is a whole number >= 1")
        if per_topic_rows < 0:
            raise CommandError("--topics is a whole number >= 0")
        try:
            result = rankings.compare_qrels(
                *versions,
                runs=chosen,
                measure=measure,
                measure_specs=specs,
                k=k,
                samples=samples,
                score_missing=True,
            )
        except (rankings.RankingError, ScoringError) as error:
            raise CommandError(str(error)) from None
        data = comparison_body(result, *versions)
        if options["json"]:
            self.stdout.write(json.dumps(data, indent=2))
            return
        write = self.stdout.write
        write(
            f"{versions[0].label} -> {versions[1].label}: {data['runs']} runs ranked by "
            f"{result.measure}, intervals from {data['samples']} resamples of the topics"
        )
        header = f"{'coefficient':<24}{'value':>8}  {'95% interval':<17}"
        if result.k:
            header += f"{'@' + str(result.k):>8}  {'95% interval':<17}"
        write(header)
        for row in data["coefficients"]:
            line = (
                f"{row['label']:<24}{_fmt(row['value']):>8}  {_fmt(row['low'])}–{_fmt(row['high'])}"
            )
            if result.k:
                line += f" {_fmt(row['at_k']):>8}  {_fmt(row['low_k'])}–{_fmt(row['high_k'])}"
            write(line)
        write(f"{len(data['swaps'])} pairs swap")
        for swap in data["swaps"]:
            write(
                f"  {swap['above']} > {swap['below']} by {swap['old_gap']:.4f} under OLD, "
                f"< by {-swap['new_gap']:.4f} under NEW"
            )
        for row in data["rows"]:
            write(
                f"{row['old_rank']:>4} -> {row['new_rank']:<4} {row['run']}  {row['old']:.4f} -> {row['new']:.4f}"
            )
        topics = data["per_topic"]
        if topics:
            shown = topics if per_topic_rows == 0 else topics[:per_topic_rows]
            write(
                f"per topic ({len(topics)} topics, lowest tau-b first"
                + (
                    f", the first {len(shown)}; --topics 0 for all"
                    if len(shown) < len(topics)
                    else ""
                )
                + "):"
            )
            write(f"  {'topic':<12}" + "".join(f"{label:>10}" for label in TOPIC_HEADS))
            for row in shown:
                write(
                    f"  {row['qid']:<12}"
                    + "".join(f"{_fmt(row[name]):>10}" for name in TOPIC_HEADS.values())
                )
        if data["left_out"]:
            write("left out (not scored with both): " + ", ".join(data["left_out"]))
