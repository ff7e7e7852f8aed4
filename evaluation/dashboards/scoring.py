"""What a dashboard is about: a qrels version, measures in their canonical form, and
trec_eval options (a Scoring, whose key finds the stored evaluations); the constants and
messages the dashboards share; how p-values are printed."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from evaluation import measures, services
from evaluation.models import Evaluation, QrelsVersion, Run

MEASURE_MENU = (
    "ndcg_cut.1",
    "ndcg_cut.3",
    "ndcg_cut.5",
    "ndcg_cut.10",
    "ndcg_cut.20",
    "ndcg_cut.100",
    "ndcg",
    "P.5",
    "P.10",
    "P.20",
    "recall.100",
    "recall.1000",
    "map",
    "recip_rank",
    "Rprec",
    "bpref",
    "judged.10",
)
# Measures whose "all" value is the mean over topics (not a count or a geometric mean).
MEAN_MEASURES = frozenset(
    {"ndcg", "ndcg_cut", "P", "recall", "map", "map_cut", "Rprec", "bpref", "recip_rank"}
    | {"success", "judged"}
)
# Canonical order of the groups, so that the default choice is DASHBOARD_MEASURES itself.
_GROUP_ORDER = ("ndcg_cut", "P", "map", "recip_rank", "judged", "ndcg", "recall", "map_cut")
_GROUP_ORDER += ("Rprec", "bpref", "success")
_RANK_CUTOFF = ("ndcg_cut", "P", "recall", "map_cut", "success", "judged")

JUDGED_WARNING = 0.8  # judged@k below this: the other measures undercount the run
MAX_TOPIC_LISTS = 12  # top-k lists shown on a topic page (each reads a run's artifact)
PERMUTATIONS = 10_000
ALPHA = 0.05
VERDICTS = {
    "worse": "significantly worse",
    "better": "significantly better",
    "same": "no significant difference",
    "untestable": "no difference to test",
}
COMPARISON_SEED = 0
HISTOGRAM_BINS = 10
DEFAULT_K = 10

MESSAGES = {
    "no_qrels": "No qrels version is stored yet: import qrels first.",
    "unknown_qrels": "No qrels version with id {pk}.",
    "no_measures": "Choose at least one measure.",
    "not_a_mean": (
        "'{spec}': dashboards show means over topics, and {name} is not one; choose from "
        "ndcg, ndcg_cut, P, recall, map, map_cut, Rprec, bpref, recip_rank, success, judged."
    ),
    "judged_warning": (
        "Only {share:.0%} of the top {k} documents are judged (below {limit:.0%}): this run's "
        "other numbers count unjudged documents as not relevant and are likely too low."
    ),
    "not_scored": "Not scored with these options: {runs}.",
    "same_run": "Choose runs other than the baseline to compare with it.",
    "no_common_topics": "The runs have no scored topic in common.",
}


class ScoringError(ValueError):
    """A scoring option that cannot be used; ``field`` names it (qrels, measures, ...)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class NotScored(LookupError):
    """Some runs have no evaluation with the page's scoring."""

    def __init__(self, runs: list[Run]):
        super().__init__(MESSAGES["not_scored"].format(runs=", ".join(map(str, runs))))
        self.runs = runs


# --- what is scored ------------------------------------------------------------------------


def canonical_specs(specs) -> tuple[str, ...]:
    """trec_eval ``-m`` arguments as one canonical list: one argument per measure, cutoffs
    merged and sorted, groups in a fixed order (``DASHBOARD_MEASURES`` is canonical), so the
    same choice always finds the same stored evaluation."""
    cutoffs: dict[str, set] = {}
    for spec in specs:
        try:
            parsed = measures.parse_measures([spec])
        except ValueError as error:
            raise ScoringError("measures", str(error)) from None
        for measure in parsed:
            if measure.name not in MEAN_MEASURES:
                message = MESSAGES["not_a_mean"].format(spec=spec, name=measure.name)
                raise ScoringError("measures", message)
            cutoffs.setdefault(measure.name, set()).update(measure.cutoffs)
    if not cutoffs:
        raise ScoringError("measures", MESSAGES["no_measures"])
    ordered = sorted(cutoffs, key=_GROUP_ORDER.index)
    return tuple(
        name + ("." + ",".join(str(c) for c in sorted(cutoffs[name])) if cutoffs[name] else "")
        for name in ordered
    )


def output_names(specs) -> list[str]:
    """trec_eval output names of canonical specs, in their order: ndcg_cut_1, …, map."""
    return [name for spec in specs for name in measures.parse_measures([spec])[0].output_names]


def single_specs(specs) -> list[str]:
    """Canonical specs split into one argument per output name (the form's checkboxes)."""
    return [
        "{}.{}".format(*name.rsplit("_", 1)) if _cutoff(name) else name
        for name in output_names(specs)
    ]


def _cutoff(name: str) -> int | None:
    base, _, number = name.rpartition("_")
    return int(number) if base in _RANK_CUTOFF and number.isdigit() else None


def cutoff_of(name: str) -> int | None:
    """The rank cutoff k of an output name: ndcg_cut_10 → 10, map → None."""
    return _cutoff(name)


@dataclass(frozen=True)
class Scoring:
    """What a dashboard page is about: a qrels version, measures and trec_eval options.
    Its ``key`` is the stored evaluations' options_key for this choice."""

    qrels: QrelsVersion
    specs: tuple[str, ...]
    options: measures.Options

    @property
    def key(self) -> str:
        return services.options_key(list(self.specs), self.options)

    @property
    def names(self) -> list[str]:
        return output_names(self.specs)

    @property
    def is_default_measures(self) -> bool:
        return self.specs == tuple(services.DASHBOARD_MEASURES)

    def params(self) -> list[tuple[str, str]]:
        """The query parameters that select this scoring (defaults left out)."""
        params = [("qrels", str(self.qrels.pk))]
        if not self.is_default_measures:
            params += [("measures", spec) for spec in self.specs]
        if self.options.gain != "linear":
            params.append(("gain", self.options.gain))
        if self.options.relevance_level != 1:
            params.append(("relevance_level", str(self.options.relevance_level)))
        if self.options.complete:
            params.append(("complete", "1"))
        return params

    def query(self, **extra) -> str:
        """``?qrels=…&…`` plus ``extra`` (lists repeat the key; None is left out)."""
        params = list(self.params())
        for key, value in extra.items():
            values = value if isinstance(value, list | tuple) else [value]
            params += [(key, str(v)) for v in values if v is not None]
        return "?" + urlencode(params)

    def describe(self) -> dict:
        """The options as people read them (every page names what it shows)."""
        options = self.options
        return {
            "qrels": self.qrels.label,
            "measures": [measures.display_name(name) for name in self.names],
            "gain": "exponential (2^g − 1)" if options.gain == "exp" else "linear (the grade)",
            "relevance_level": options.relevance_level,
            "complete": options.complete,
            "trec_eval": "9.0.8" if options.trec_eval_version == 9 else "10.0",
        }


def default_qrels() -> QrelsVersion | None:
    """The qrels version a page shows when none is chosen: the newest one published."""
    return QrelsVersion.objects.order_by("-created_at", "-pk").first()


def make_scoring(
    *,
    qrels: QrelsVersion | int | None = None,
    measure_specs=None,
    gain: str = "linear",
    relevance_level: int = 1,
    complete: bool = False,
) -> Scoring:
    """A Scoring from a page's or the API's parameters; ScoringError names a bad one."""
    if qrels is None:
        qrels = default_qrels()
        if qrels is None:
            raise ScoringError("qrels", MESSAGES["no_qrels"])
    elif not isinstance(qrels, QrelsVersion):
        found = QrelsVersion.objects.filter(pk=qrels).first()
        if found is None:
            raise ScoringError("qrels", MESSAGES["unknown_qrels"].format(pk=qrels))
        qrels = found
    specs = canonical_specs(measure_specs or services.DASHBOARD_MEASURES)
    try:
        options = measures.Options(relevance_level=relevance_level, gain=gain, complete=complete)
    except ValueError as error:
        raise ScoringError("options", str(error)) from None
    return Scoring(qrels=qrels, specs=specs, options=options)


def scored(scoring: Scoring):
    """The stored evaluations with this scoring."""
    return Evaluation.objects.filter(qrels=scoring.qrels, options_key=scoring.key)


def unjudged_pairs(
    scoring: Scoring, *, k: int, run: Run | None = None, qid: str = ""
) -> list[tuple[str, str]]:
    """What "send to judging" sends: the (qid, docno) pairs the scoring's qrels do not judge
    in ``run``'s top k of every topic, or, without a run, in the top k of topic ``qid`` of
    every run scored with ``scoring``."""
    if run is not None:
        runs, qids = [run], None
    else:
        runs, qids = list(Run.objects.filter(pk__in=scored(scoring).values("run_id"))), [qid]
    return services.unjudged_top_k(
        runs=runs, qrels=scoring.qrels, k=k, options=scoring.options, qids=qids
    )


def unscored_runs(scoring: Scoring, runs=None) -> list[Run]:
    """The runs (all, or those given) without an evaluation with this scoring."""
    runs = Run.objects.all() if runs is None else Run.objects.filter(pk__in=[r.pk for r in runs])
    done = scored(scoring).values("run_id")
    return list(runs.exclude(pk__in=done).select_related("system"))


def choose_measure(names: list[str], wanted: str | None) -> str:
    """The measure a page charts: the one asked for if scored, else nDCG@10, else the first."""
    if wanted in names:
        return wanted
    return "ndcg_cut_10" if "ndcg_cut_10" in names else names[0]


def choose_k(measure: str, wanted: int | None) -> int:
    if wanted is not None and wanted >= 1:
        return wanted
    return cutoff_of(measure) or DEFAULT_K


def format_p(p: float | None) -> str:
    """A p-value as pages and `evaluate --baseline` print it: 4 decimals, or 2 significant
    digits in scientific notation below 0.0001 (a randomisation p is never 0)."""
    if p is None:
        return "—"
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"
