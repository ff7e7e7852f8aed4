"""Two runs side by side (issue 17, "run diff"): for runs scored with the same Scoring, every
topic's change (the measure's delta, tau-AP, RBO, documents in one run only, the biggest
rank move, unjudged documents entering the top k), the topics ordered by how differently the
runs rank them, and one topic's two lists rank by rank with grades and residuals.

Pages, the API and ``manage.py diff_runs`` call build_run_diff; the arithmetic is
evaluation.analysis.rundiff's and evaluation.analysis.residuals' (pure)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from evaluation import services
from evaluation.analysis import residuals, rundiff, topk
from evaluation.dashboards.scoring import (
    NotScored,
    Scoring,
    choose_k,
    choose_measure,
    scored,
)
from evaluation.models import Run

DEFAULT_DEPTH = 20  # ranks shown side by side (and compared by tau-AP and RBO), at least k
MAX_DEPTH = 1000
MOVES_SHOWN = 10  # the biggest rank moves listed over all topics

MESSAGES = {
    "same_run": "Choose two different runs to diff.",
    "depth": "The depth is a whole number from {low} to {high} (at least k).",
    "order": "Order topics by measure, tau_ap or rbo.",
    "p": "The persistence p is a number strictly between 0 and 1.",
    "no_topic": "Neither run has topic {qid}.",
}

ORDER_LABELS = {
    "measure": "largest change of the measure",
    "tau_ap": "lowest tau-AP",
    "rbo": "lowest rank-biased overlap",
}


class DiffError(ValueError):
    """A diff parameter that cannot be used; ``field`` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class TopicChange:
    """One topic's row of the diff: rundiff.diff_topics' columns plus the measure."""

    qid: str
    value_a: float | None
    value_b: float | None
    delta: float | None  # b - a, None when a run has no value for the topic
    flips: bool  # the delta's sign is the opposite of the mean delta's
    rbo: float
    tau_ap: float | None  # None: fewer than two documents in common
    common: int
    only_a: int
    only_b: int
    move: int
    move_docno: str | None
    move_from: int | None
    move_to: int | None
    entering: int
    unjudged_a: int
    unjudged_b: int


@dataclass
class RunDiff:
    scoring: Scoring
    a: Run
    b: Run
    measure: str
    k: int
    depth: int
    order: str
    p: float
    topics: list[TopicChange]  # most different first
    qid: str | None  # the topic shown side by side
    rows: list[rundiff.SideBySide] = field(default_factory=list)
    bounds: dict[str, tuple[float, float] | None] = field(default_factory=dict)  # a, b

    @property
    def position(self) -> int:
        """The shown topic's place in the order (0-based)."""
        qids = [t.qid for t in self.topics]
        return qids.index(self.qid) if self.qid in qids else 0

    @property
    def previous_qid(self) -> str | None:
        return self.topics[self.position - 1].qid if self.qid and self.position > 0 else None

    @property
    def next_qid(self) -> str | None:
        at = self.position + 1
        return self.topics[at].qid if self.qid and at < len(self.topics) else None

    @property
    def shown(self) -> TopicChange | None:
        return next((t for t in self.topics if t.qid == self.qid), None)

    @property
    def compared(self) -> list[TopicChange]:
        return [t for t in self.topics if t.delta is not None]

    @property
    def mean_delta(self) -> float | None:
        deltas = [t.delta for t in self.compared]
        return float(np.mean(deltas)) if deltas else None

    @property
    def flipped(self) -> list[TopicChange]:
        return [t for t in self.topics if t.flips]

    @property
    def biggest_moves(self) -> list[TopicChange]:
        moved = [t for t in self.topics if t.move > 0]
        return sorted(moved, key=lambda t: (-t.move, t.qid.encode()))[:MOVES_SHOWN]

    def summary(self) -> dict:
        """What every answer about the diff says, the API's and the command line's: the
        choices it was made with, its totals and each topic's change."""
        return {
            "measure": self.measure,
            "k": self.k,
            "depth": self.depth,
            "order": self.order,
            "p": self.p,
            "totals": self.totals(),
            "topics": [vars(t) for t in self.topics],
        }

    def totals(self) -> dict:
        tau = [t.tau_ap for t in self.topics if t.tau_ap is not None]
        # Two lists of the same length lose as many documents as they gain, so only_a ==
        # only_b says nothing: the page shows how much of the longer list both share.
        common = sum(t.common for t in self.topics)
        longer = sum(t.common + max(t.only_a, t.only_b) for t in self.topics)
        return {
            "topics": len(self.topics),
            "compared": len(self.compared),
            "mean_delta": self.mean_delta,
            "better": sum(1 for t in self.compared if t.delta > 0),
            "worse": sum(1 for t in self.compared if t.delta < 0),
            "flipped": len(self.flipped),
            "only_a": sum(t.only_a for t in self.topics),
            "only_b": sum(t.only_b for t in self.topics),
            "common": common,
            "longer": longer,
            "entering": sum(t.entering for t in self.topics),
            "mean_rbo": float(np.mean([t.rbo for t in self.topics])) if self.topics else None,
            "mean_tau_ap": float(np.mean(tau)) if tau else None,
            "shared": common / longer if longer else None,
        }


def choose_depth(k: int, wanted: int | None) -> int:
    if wanted is None:
        return max(k, DEFAULT_DEPTH)
    if not k <= wanted <= MAX_DEPTH:
        raise DiffError("depth", MESSAGES["depth"].format(low=k, high=MAX_DEPTH))
    return wanted


def build_run_diff(
    scoring: Scoring,
    a: Run,
    b: Run,
    *,
    measure: str | None = None,
    k: int | None = None,
    depth: int | None = None,
    order: str = "measure",
    p: float = rundiff.DEFAULT_P,
    qid: str | None = None,
    side_by_side: bool = True,
) -> RunDiff:
    """Run ``b`` against the reference ``a``: every topic of either, ordered by ``order``
    (rundiff.ORDERS), the lists cut at ``depth`` (default max(k, 20)); with
    ``side_by_side`` the topic ``qid`` (default the most different) rank by rank, with
    each run's best and worst value of the measure over its unjudged top k. NotScored
    names a run without an evaluation with the scoring; DiffError a bad parameter."""
    if a.pk == b.pk:
        raise DiffError("b", MESSAGES["same_run"])
    if order not in rundiff.ORDERS:
        raise DiffError("order", MESSAGES["order"])
    if not isinstance(p, float | int) or isinstance(p, bool) or not 0 < p < 1:
        raise DiffError("p", MESSAGES["p"])
    measure = choose_measure(scoring.names, measure)
    k = choose_k(scoring.outputs[measure], k)
    depth = choose_depth(k, depth)
    stored = dict(
        scored(scoring, trials=True).filter(run__in=[a, b]).values_list("run_id", "per_topic")
    )
    missing = [run for run in (a, b) if run.pk not in stored]
    if missing:
        raise NotScored(missing)
    qrels = services.cached_qrels_frame(scoring.qrels)
    for run in (a, b):
        services.store_top_lists(run)  # a run stored before runs kept them, once
    # Both runs at once: polars releases the GIL while it reads and ranks.
    with ThreadPoolExecutor(max_workers=2) as pool:
        tops = list(pool.map(lambda run: graded_top(scoring, run, depth, qrels), (a, b)))
    key = ("table", _run_key(a), _run_key(b), _qrels_key(scoring), depth, k, float(p))
    table = _CACHE.get(key)
    if table is None:
        table = _CACHE.put(key, rundiff.diff_topics(tops[0], tops[1], k=k, p=p))
    values_a = {q: v[measure] for q, v in stored[a.pk].items()}
    values_b = {q: v[measure] for q, v in stored[b.pk].items()}
    deltas = {q: values_b[q] - values_a[q] for q in values_a.keys() & values_b.keys()}
    mean = float(np.mean(list(deltas.values()))) if deltas else 0.0
    changes = {}
    for row in table.iter_rows(named=True):
        q = row["qid"]
        delta = deltas.get(q)
        tau = row["tau_ap"]
        changes[q] = TopicChange(
            qid=q,
            value_a=values_a.get(q),
            value_b=values_b.get(q),
            delta=delta,
            flips=bool(delta is not None and delta * mean < 0),
            rbo=row["rbo"],
            tau_ap=None if tau is None or np.isnan(tau) else tau,
            common=row["common"],
            only_a=row["only_a"],
            only_b=row["only_b"],
            move=row["move"],
            move_docno=row["move_docno"],
            move_from=row["move_from"] if row["move"] else None,
            move_to=row["move_to"] if row["move"] else None,
            entering=row["entering"],
            unjudged_a=row["unjudged_a"],
            unjudged_b=row["unjudged_b"],
        )
    ordered = rundiff.order_topics(table, order, deltas)
    view = RunDiff(
        scoring=scoring,
        a=a,
        b=b,
        measure=measure,
        k=k,
        depth=depth,
        order=order,
        p=float(p),
        topics=[changes[q] for q in ordered],
        qid=None,
    )
    if qid is not None and qid not in changes:
        raise DiffError("qid", MESSAGES["no_topic"].format(qid=qid))
    view.qid = qid if qid is not None else (ordered[0] if ordered else None)
    if side_by_side and view.qid is not None:
        view.rows = rundiff.side_by_side(tops[0], tops[1], view.qid)
        view.bounds = topic_bounds(scoring, [a, b], view.qid, measure, qrels, tops=tops)
    return view


class _FrameCache:
    """The last few frames the diff computed, by what they were computed from. Runs and
    qrels versions never change once stored, so a key (ids and checksums, depth, options)
    always means the same frame: moving to the next topic reuses the lists and the table
    instead of reading and ranking both runs again. Frames above MAX_CACHED_ROWS (deep
    lists of big runs) are not kept."""

    def __init__(self, size: int):
        self.size = size
        self.frames: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key):
        with self.lock:
            frame = self.frames.get(key)
            if frame is not None:
                self.frames.move_to_end(key)
            return frame

    def put(self, key, frame):
        if getattr(frame, "height", 0) <= MAX_CACHED_ROWS:
            with self.lock:
                self.frames[key] = frame
                self.frames.move_to_end(key)
                while len(self.frames) > self.size:
                    self.frames.popitem(last=False)
        return frame


MAX_CACHED_ROWS = 250_000
_CACHE = _FrameCache(size=12)


def _run_key(run: Run) -> tuple:
    return (run.pk, run.checksum)


def _qrels_key(scoring: Scoring) -> tuple:
    options = scoring.options
    return (scoring.qrels.pk, scoring.qrels.checksum, options.trec_eval_version, options.depth)


def graded_top(scoring: Scoring, run: Run, depth: int, qrels: pl.DataFrame) -> pl.DataFrame:
    """The run's first ``depth`` documents of every topic in trec_eval's order, each with
    its grade in ``qrels``, the scoring's qrels frame (null: unjudged). Read from the run's
    stored top lists when deep enough. No database query, so threads may call it."""
    key = ("top", _run_key(run), _qrels_key(scoring), depth)
    frame = _CACHE.get(key)
    if frame is None:
        options = scoring.options
        top = services.load_run_top(
            run, depth, trec_eval_version=options.trec_eval_version, depth=options.depth
        )
        frame = _CACHE.put(key, topk.with_grades(top, qrels))
    return frame


def topic_bounds(
    scoring: Scoring,
    runs: list[Run],
    qid: str,
    measure: str,
    qrels: pl.DataFrame,
    *,
    tops: list[pl.DataFrame] | None = None,
) -> dict[str, tuple[float, float] | None]:
    """Per run ("a", "b"), the measure's worst and best value on topic ``qid`` over its
    unjudged top k (evaluation.analysis.residuals); None when the measure has no residual or the
    qrels do not judge the topic. A measure cut at k scores the first k documents only, so
    the runs' top lists (``tops``, at least k deep) serve instead of their files."""
    judged = qrels.filter(pl.col("qid") == qid)
    top_grade = _top_grade(qrels, scoring)
    k = scoring.outputs[measure].k
    # Both runs in one evaluation: each run's lines as a topic of its own ("a", "b"), with
    # the topic's judgments copied to both, so the engine runs twice (worst, best), not four
    # times.
    frames, copies = [], []
    for index, (key, run) in enumerate(zip(("a", "b"), runs, strict=True)):
        deep_enough = tops is not None and k is not None and _depth_of(tops[index]) >= k
        if deep_enough:
            frame = tops[index].filter(pl.col("qid") == qid).select("qid", "docno", "score")
        else:
            frame = services.load_run_topics(run, [qid])
        frames.append(frame.with_columns(pl.lit(key).alias("qid")))
        copies.append(judged.with_columns(pl.lit(key).alias("qid")))
    try:
        result = residuals.residual_bounds(
            pl.concat(copies),
            pl.concat(frames),
            [scoring.outputs[measure].spec],
            scoring.options,
            top_grade=top_grade,
        )
    except ValueError:  # neither run has the topic, or the qrels lack it
        return {"a": None, "b": None}
    return {key: result.per_topic.get(key, {}).get(measure) for key in ("a", "b")}


def _depth_of(top: pl.DataFrame) -> int:
    """The depth a graded top list was cut at (its longest topic)."""
    return int(top.get_column("rank").max() or 0)


def _top_grade(qrels: pl.DataFrame, scoring: Scoring) -> int:
    highest = qrels.get_column("grade").max() if qrels.height else None
    return max(int(highest) if highest is not None else 1, scoring.options.relevance_level, 1)


def run_bounds(scoring: Scoring, run: Run, measure: str) -> residuals.Residuals | None:
    """The run's worst and best value of the measure on every topic and overall, with the
    unjudged documents of its top k filled both ways (evaluation.analysis.residuals); None when the
    measure has none (judged@k). Kept per process like the diff's frames."""
    qrels = services.cached_qrels_frame(scoring.qrels)
    key = ("bounds", _run_key(run), _qrels_key(scoring), scoring.key, measure)
    found = _CACHE.get(key)
    if found is None:
        found = residuals.residual_bounds(
            qrels,
            services.load_run_frame(run),
            [scoring.outputs[measure].spec],
            scoring.options,
            top_grade=_top_grade(qrels, scoring),
        )
        _CACHE.put(key, found)
    return found if measure in found.means else None


def residuals_or_none(scoring: Scoring, run: Run, measure: str) -> residuals.Residuals | None:
    """run_bounds for pages and the API: None also when the run and the qrels share no
    topic (the engine's ValueError)."""
    try:
        return run_bounds(scoring, run, measure)
    except ValueError:
        return None


def unjudged_of_both(scoring: Scoring, a: Run, b: Run, *, k: int, qid: str = "") -> list:
    """What the diff's "send to judging" sends: the (qid, docno) pairs of both runs' top k
    (topic ``qid``, or every topic) that the scoring's qrels do not judge."""
    return services.unjudged_top_k(
        runs=[a, b], qrels=scoring.qrels, k=k, options=scoring.options, qids=[qid] if qid else None
    )
