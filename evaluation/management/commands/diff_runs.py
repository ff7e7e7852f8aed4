"""`manage.py diff_runs A B`: the run diff page in a terminal. Runs not yet scored with the
chosen qrels and measures are scored first (stored, as the leaderboard's "score" does)."""

import json

from django.core.management.base import BaseCommand, CommandError

from evaluation import dashboards, services
from evaluation.analysis import rundiff
from evaluation.dashboards import diff
from evaluation.models import QrelsVersion, Run


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.4f}"


def _signed(value) -> str:
    return "—" if value is None else f"{value:+.4f}"


class Command(BaseCommand):
    help = (
        "Diff two stored runs on one qrels version: topics most different first (by the "
        "measure's change, tau-AP or rank-biased overlap), what moved, and one topic's two "
        "rankings side by side."
    )

    def add_arguments(self, parser):
        parser.add_argument("a", help="the reference run: SYSTEM/RUN (or a unique run name)")
        parser.add_argument("b", help="the other run")
        parser.add_argument("--qrels", help="NAME or NAME@VERSION (default: the newest)")
        parser.add_argument(
            "-m",
            dest="measures",
            action="append",
            help="trec_eval -m arguments, repeated (default: the dashboard set)",
        )
        parser.add_argument("--measure", help="output name ordering topics (default ndcg_cut_10)")
        parser.add_argument("--order", choices=rundiff.ORDERS, default="measure")
        parser.add_argument("-k", type=int, help="top k (default: the measure's cutoff)")
        parser.add_argument("--depth", type=int, help="ranks compared (default max(k, 20))")
        parser.add_argument("-p", type=float, default=rundiff.DEFAULT_P, help="RBO persistence")
        parser.add_argument("--topic", help="list this topic side by side (default: the first)")
        parser.add_argument("--limit", type=int, default=20, help="topics listed (default 20)")
        parser.add_argument("--json", action="store_true", help="the API's numbers as JSON")

    def handle(self, *args, a, b, **options):
        runs = []
        for label in (a, b):
            try:
                runs.append(services.find_run(label))
            except Run.DoesNotExist as error:
                raise CommandError(str(error) or f"no run {label!r}") from None
        qrels = None
        if options["qrels"]:
            try:
                qrels = services.find_qrels(options["qrels"])
            except QrelsVersion.DoesNotExist as error:
                raise CommandError(str(error)) from None
        try:
            scoring = dashboards.make_scoring(qrels=qrels, measure_specs=options["measures"])
        except dashboards.ScoringError as error:
            raise CommandError(str(error)) from None
        for run in dashboards.unscored_runs(scoring, runs):
            services.score_run(
                run=run,
                qrels=scoring.qrels,
                measure_specs=list(scoring.specs),
                options=scoring.options,
            )
        try:
            view = diff.build_run_diff(
                scoring,
                *runs,
                measure=options["measure"],
                k=options["k"],
                depth=options["depth"],
                order=options["order"],
                p=options["p"],
                qid=options["topic"],
            )
        except (diff.DiffError, ValueError) as error:
            raise CommandError(str(error)) from None
        if options["json"]:
            self.stdout.write(json.dumps(self.as_json(view), indent=2))
            return
        self.write_text(view, options["limit"])

    def as_json(self, view: diff.RunDiff) -> dict:
        return {
            "a": str(view.a),
            "b": str(view.b),
            "qrels": view.scoring.qrels.label,
            **view.summary(),
            "topic": view.qid,
            "rows": [vars(row) for row in view.rows],
            "bounds": {key: list(value) if value else None for key, value in view.bounds.items()},
        }

    def write_text(self, view: diff.RunDiff, limit: int) -> None:
        out = self.stdout.write
        t = view.totals()
        out(
            f"{view.a} → {view.b} on {view.scoring.qrels.label}: {view.measure} mean Δ "
            f"{_signed(t['mean_delta'])} over {t['compared']} topics ({t['better']} better, "
            f"{t['worse']} worse, {t['flipped']} against the overall sign)"
        )
        out(
            f"top {view.depth}: mean RBO {_fmt(t['mean_rbo'])} (p={view.p}), mean tau-AP "
            f"{_fmt(t['mean_tau_ap'])}; {t['only_a']} documents only in A, {t['only_b']} only "
            f"in B; {t['entering']} unjudged documents entering B's top {view.k}"
        )
        out("")
        out(
            f"{'topic':<12} {'delta':>8} {'tau_ap':>7} {'rbo':>7} {'onlyA':>5} {'onlyB':>5} {'new?':>4}  biggest move"
        )
        for topic in view.topics[:limit]:
            move = f"{topic.move_docno} {topic.move_from}→{topic.move_to}" if topic.move else ""
            flip = " ⇅" if topic.flips else ""
            out(
                f"{topic.qid:<12} {_signed(topic.delta):>8} {_fmt(topic.tau_ap):>7} "
                f"{_fmt(topic.rbo):>7} {topic.only_a:>5} {topic.only_b:>5} {topic.entering:>4}  "
                f"{move}{flip}"
            )
        if len(view.topics) > limit:
            out(f"… {len(view.topics) - limit} more topics (--limit)")
        if view.qid is None:
            return
        out("")
        bounds = {key: f"{_fmt(v[0])}–{_fmt(v[1])}" if v else "—" for key, v in view.bounds.items()}
        out(
            f"topic {view.qid}: A {view.measure} {_fmt(view.shown.value_a)} (unjudged filled: "
            f"{bounds.get('a', '—')}), B {_fmt(view.shown.value_b)} ({bounds.get('b', '—')})"
        )
        out(f"{'rank':>4}  {'A':<32} {'B':<32}")
        for row in view.rows:
            out(
                f"{row.rank:>4}  {self.cell(row.docno_a, row.grade_a, row.other_a):<32} "
                f"{self.cell(row.docno_b, row.grade_b, row.other_b):<32}"
            )

    @staticmethod
    def cell(docno, grade, other) -> str:
        if docno is None:
            return ""
        grade_text = "?" if grade is None else str(grade)
        where = "only" if other is None else f"@{other}"
        return f"[{grade_text}] {docno} {where}"
