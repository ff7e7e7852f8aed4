"""What a dashboard is about: a qrels version, measures in their canonical form, and
trec_eval options (a Scoring, whose key finds the stored evaluations); the constants and
messages the dashboards share; how p-values are printed."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urlencode

from django.db import models
from django.db.models import Count

from evaluation import measures, services
from evaluation.access import readable_qrels, visible_evaluations, visible_runs
from evaluation.measures import families, specs
from evaluation.models import Evaluation, QrelsVersion, Run

# The measure menu, and what is offered beside it (when this installation computes it): a
# name of each other measure that is a mean over topics; any other name can be typed in.
# Both are declared with their measures' families (evaluation.measures.families).
MEASURE_MENU = families.menu_specs()
MORE_MEASURES = families.more_specs()
JUDGED_WARNING = 0.8  # judged@k below this: the other measures undercount the run
MAX_TOPIC_LISTS = 12  # top-k lists shown on a topic page (each reads a run's artifact)
HISTOGRAM_BINS = 10
DEFAULT_K = 10

MESSAGES = {
    "no_qrels": "No qrels version is stored yet: import qrels first.",
    "unknown_qrels": "No qrels version with id {pk}.",
    "no_measures": specs.MESSAGES["no_measures"],
    "not_a_mean": specs.MESSAGES["not_a_mean"],
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


def canonical_specs(measure_specs, options: measures.Options | None = None) -> tuple[str, ...]:
    """Measure names (either dialect) as one canonical list (specs.canonical_measures), so
    the same choice always finds the same stored evaluation; ``DASHBOARD_MEASURES`` is
    canonical as it is."""
    try:
        return specs.canonical_measures(measure_specs, options or measures.Options())
    except specs.OptionsError as error:
        raise ScoringError(error.field, str(error)) from None


def output_names(measure_specs, options: measures.Options | None = None) -> list[str]:
    """The output names of canonical specs, in the evaluation's order: ndcg_cut_1, …, map,
    then the measures named the ir_measures way (P(rel=2)@5, ERR@20)."""
    return measures.output_names(list(measure_specs), options or measures.Options())


def single_specs(measure_specs, options: measures.Options | None = None) -> list[str]:
    """Canonical specs split into one name per output name (the form's checkboxes)."""
    outputs = measures.outputs(list(measure_specs), options or measures.Options())
    return [output.spec for output in outputs]


@dataclass(frozen=True)
class Scoring:
    """What a dashboard page is about: a qrels version, measures and trec_eval options.
    Its ``key`` is the stored evaluations' options_key for this choice. ``viewer``: the user
    a page or the API answers (None for tasks and commands): the dashboards then show the
    runs of their teams alone (evaluation/access.py), whoever else scored against the
    version (a qrels version shared with several teams)."""

    qrels: QrelsVersion
    specs: tuple[str, ...]
    options: measures.Options
    viewer: object = field(default=None, compare=False, repr=False)

    def runs(self, *, trials: bool = False):
        """The runs this scoring may show: the viewer's teams', or all; sandbox trials'
        runs only when ``trials`` (Run.objects.listed())."""
        runs = Run.objects.all() if trials else Run.objects.listed()
        return runs if self.viewer is None else visible_runs(self.viewer, runs)

    @property
    def key(self) -> str:
        return services.options_key(list(self.specs), self.options)

    @cached_property
    def outputs(self) -> dict[str, measures.Output]:
        """Each output name's measure as parsed: its single spec, its cutoff k."""
        return {output.name: output for output in measures.outputs(self.specs, self.options)}

    @property
    def names(self) -> list[str]:
        return list(self.outputs)

    @property
    def is_default_measures(self) -> bool:
        return self.specs == tuple(services.DASHBOARD_MEASURES)

    def task_params(self) -> dict:
        """This scoring as a background task's arguments (plain JSON): see ``from_params``."""
        chosen = specs.ScoringOptions(self.specs, self.options)
        return {"qrels": self.qrels.pk, **chosen.params()}

    @classmethod
    def from_params(cls, params: dict) -> Scoring:
        """The scoring of ``task_params`` (also those of tasks queued before ir_measures
        names, whose measures were under "measure_specs"). QrelsVersion.DoesNotExist when
        the qrels version is gone; ScoringError if the options no longer read."""
        qrels = QrelsVersion.objects.get(pk=params["qrels"])
        values = {k: v for k, v in params.items() if k not in ("qrels", "measure_specs")}
        values.setdefault("measures", params.get("measure_specs"))
        try:
            chosen = specs.read_scoring_options(**values)
        except specs.OptionsError as error:
            raise ScoringError(error.field, str(error)) from None
        return cls(qrels=qrels, specs=tuple(chosen.measures), options=chosen.options)

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


class QrelsReason(models.TextChoices):
    """Why a page shows the qrels version it shows (``choose_qrels``)."""

    ASKED = "asked", "chosen"
    REMEMBERED = "remembered", "your last choice"
    MOST_SCORED = "most_scored", "the version most runs are scored against"
    NEWEST = "newest", "the newest version: no run is scored yet"


def choose_qrels(
    remembered: int | None = None, *, user=None
) -> tuple[QrelsVersion | None, QrelsReason]:
    """The qrels version a page shows when its address names none, and why: the one the
    user chose last (``remembered``, a pk) while it exists; else the one most runs are scored
    against (any options; ties to the newest), so a leaderboard keeps the qrels its runs were
    scored on when a campaign publishes a new version; else the newest. None when there is
    no qrels version at all. Two queries at most. With ``user``, among the versions they
    may read and the runs they may see."""
    versions = QrelsVersion.objects.all()
    evaluations = Evaluation.objects.all()
    if user is not None:
        versions = readable_qrels(user, versions)
        evaluations = visible_evaluations(user, evaluations).filter(qrels__in=versions)
    if remembered is not None:
        found = versions.filter(pk=remembered).first()
        if found is not None:
            return found, QrelsReason.REMEMBERED
    most = (
        evaluations.values("qrels")
        .annotate(runs=Count("run", distinct=True))
        .order_by("-runs", "-qrels__created_at", "-qrels")
        .first()
    )
    if most is not None:
        return QrelsVersion.objects.get(pk=most["qrels"]), QrelsReason.MOST_SCORED
    return versions.order_by("-created_at", "-pk").first(), QrelsReason.NEWEST


def default_qrels(user=None) -> QrelsVersion | None:
    """The qrels version a page or the API shows when none is named (choose_qrels)."""
    return choose_qrels(user=user)[0]


def newer_versions(qrels: QrelsVersion, user=None) -> list[QrelsVersion]:
    """The versions of ``qrels``'s name published after it, newest first (those ``user``
    may read, when given)."""
    versions = QrelsVersion.objects.filter(name=qrels.name, version__gt=qrels.version)
    if user is not None:
        versions = readable_qrels(user, versions)
    return list(versions.order_by("-version"))


def make_scoring(
    *,
    qrels: QrelsVersion | int | None = None,
    measure_specs=None,
    gain=None,
    relevance_level=None,
    complete=None,
    user=None,
) -> Scoring:
    """A Scoring from a page's, the API's or a task's parameters, raw or typed (read by
    evaluation.measures.specs); ScoringError names a bad one. ``user``: whom a page or the
    API answers, who must be able to read the qrels version (one they may not is unknown),
    and whose teams' runs alone the dashboards then show (Scoring.viewer)."""
    if qrels is None:
        qrels = default_qrels(user)
        if qrels is None:
            raise ScoringError("qrels", MESSAGES["no_qrels"])
    elif not isinstance(qrels, QrelsVersion) or user is not None:
        pk = qrels.pk if isinstance(qrels, QrelsVersion) else qrels
        versions = QrelsVersion.objects.all()
        if user is not None:
            versions = readable_qrels(user, versions)
        found = versions.filter(pk=pk).first()
        if found is None:
            raise ScoringError("qrels", MESSAGES["unknown_qrels"].format(pk=qrels))
        qrels = found
    try:
        chosen = specs.read_scoring_options(
            measures=measure_specs,
            gain=gain,
            relevance_level=relevance_level,
            complete=complete,
            default_measures=services.DASHBOARD_MEASURES,
        )
    except specs.OptionsError as error:
        raise ScoringError(error.field, str(error)) from None
    canonical = canonical_specs(chosen.measures, chosen.options)
    return Scoring(qrels=qrels, specs=canonical, options=chosen.options, viewer=user)


def scored(scoring: Scoring, *, trials: bool = False):
    """The stored evaluations with this scoring (of the viewer's teams' runs); those of
    sandbox trials' runs only when ``trials`` (pages that show runs picked by id: the diff,
    a comparison, a run's page)."""
    found = Evaluation.objects.filter(qrels=scoring.qrels, options_key=scoring.key)
    if not trials:
        found = found.exclude(run__search__trial=True)
    return found if scoring.viewer is None else visible_evaluations(scoring.viewer, found)


def unjudged_pairs(
    scoring: Scoring, *, k: int, run: Run | None = None, qid: str = ""
) -> list[tuple[str, str]]:
    """What "send to judging" sends: the (qid, docno) pairs the scoring's qrels do not judge
    in ``run``'s top k of every topic, or, without a run, in the top k of topic ``qid`` of
    every run scored with ``scoring``."""
    if run is not None:
        runs, qids = [run], None
    else:
        runs, qids = scored_runs(scoring), [qid]
    return services.unjudged_top_k(
        runs=runs, qrels=scoring.qrels, k=k, options=scoring.options, qids=qids
    )


def scored_runs(scoring: Scoring) -> list[Run]:
    """The runs with an evaluation with this scoring."""
    return list(scoring.runs().filter(pk__in=scored(scoring).values("run_id")))


def unscored_runs(scoring: Scoring, runs=None) -> list[Run]:
    """The runs (all, or those given) without an evaluation with this scoring."""
    if runs is None:
        runs = scoring.runs()
    else:
        runs = scoring.runs(trials=True).filter(pk__in=[r.pk for r in runs])
    done = scored(scoring, trials=True).values("run_id")
    return list(runs.exclude(pk__in=done).select_related("system"))


def choose_measure(names: list[str], wanted: str | None) -> str:
    """The measure a page charts: the one asked for if scored, else nDCG@10, else the first."""
    if wanted in names:
        return wanted
    return "ndcg_cut_10" if "ndcg_cut_10" in names else names[0]


def choose_k(output: measures.Output, wanted: int | None) -> int:
    """The depth a page lists: the one asked for, else the measure's own cutoff k, else 10."""
    if wanted is not None and wanted >= 1:
        return wanted
    return output.k or DEFAULT_K
