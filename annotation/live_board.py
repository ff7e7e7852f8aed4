"""How settled a running campaign's ranking of its pooled runs is (pure: polars and numpy,
no Django). The live leaderboard (annotation/services/live.py) feeds it the grades so far.

Inputs: ``known`` (qid, docno, grade), the pool pairs that have their final grade;
``unknown`` (qid, docno), the pool pairs that do not yet; the pooled runs (name → frame
with qid, docno, score); one measure. Documents outside the pool are never judged, so they
count as not relevant now and in the final qrels alike.

Per run, over the topics of the pool (a topic the evaluation leaves out counts 0, so every
number is a mean over the same topics):

- ``mean``: scored against the known grades only (trec_eval: an undecided pair is not
  relevant), with a 95% percentile bootstrap interval over topics (evaluation.analysis.significance,
  seeded);
- ``low``: the undecided pairs of the run's top k (the measure's cutoff; all it retrieved
  without one) not relevant and the topic's other undecided pairs of the top grade (they
  can only raise the ideal ranking, i.e. lower nDCG, AP and recall);
- ``high``: the undecided pairs of its top k of the top grade, the others not relevant.

For measures that depend only on the run's own top k (P@k, success@k, RR@k) these are the
exact extremes; for nDCG, AP and recall they are the two fills the usual argument uses (a
document's grade can move nDCG the other way, as it raises the ideal ranking too), widened
per topic to hold the value with the grades so far, so "settled" is a statement about these
three outcomes.

A pair of runs (A ranked above B by mean) is *settled* when A's low > B's high: A beats B
whatever the undecided pairs turn out to be (per those fills); otherwise it is *open*. The
board is settled when every pair is. ``to_settle``: the undecided pairs that can still move
an open pair, i.e. the undecided pairs of the topics where a run of an open pair has
low < high, restricted to the two runs' top k for measures of the run's own top k. Judging
all of them collapses both runs' bounds to their means and so decides the pair: it is an
upper bound on the pairs still to judge, not a prediction (a good order settles it sooner).

For nDCG@k, an open pair also gets ``probability``: the probability that the better run
still beats the worse once the pool is judged, under the model of the discriminative
strategy (MTC, annotation.strategies.settling.comparison_probability): each undecided pair's
grade independent, with the mean and variance of its topic's grades so far mixed with one
pseudo-grade spread evenly over the scale (so a topic with no grade yet is uniform), and each
topic's ideal DCG that of the grades so far (at least 1). Settled pairs need no model (None),
nor do the measures it does not cover.

``stop_waiting_for`` is the stop rule a lead chooses (annotation.strategies.settling
.open_comparisons): the comparisons that are neither decided by the bounds nor at the chosen
confidence under the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np
import polars as pl

from annotation.strategies.discriminative import ideal_dcg
from annotation.strategies.settling import comparison_probability, open_comparisons
from evaluation import measures
from evaluation.analysis import significance, topk

__all__ = ["LiveBoard", "LivePair", "LiveRun", "settle", "stop_waiting_for", "win_probability"]

LEVEL = 0.95


@dataclass(frozen=True)
class LiveRun:
    name: str
    mean: float
    low: float
    high: float
    ci_low: float
    ci_high: float

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class LivePair:
    """``better`` is ranked above ``worse`` by mean; ``settled``: better's low > worse's high."""

    better: str
    worse: str
    settled: bool
    margin: float  # better's low − worse's high (> 0 when settled)
    # P(better beats worse once judged) under the model; None when settled or no model.
    probability: float | None = None


@dataclass(frozen=True)
class LiveBoard:
    measure: str
    top_grade: int
    topics: int
    known: int
    unknown: int
    runs: list[LiveRun]
    pairs: list[LivePair]
    to_settle: int
    extra: dict = field(default_factory=dict)

    @property
    def settled(self) -> bool:
        return bool(self.pairs) and all(p.settled for p in self.pairs)

    @property
    def open_pairs(self) -> int:
        return sum(1 for p in self.pairs if not p.settled)

    @property
    def settled_pairs(self) -> int:
        return len(self.pairs) - self.open_pairs

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> LiveBoard:
        values = dict(data)
        values["runs"] = [LiveRun(**r) for r in data["runs"]]
        values["pairs"] = [LivePair(**p) for p in data["pairs"]]
        return cls(**values)


def _per_topic(qrels, run, spec, options, name, topics) -> np.ndarray:
    """The measure per topic of ``topics``, 0 where the evaluation has no value."""
    if qrels.height == 0:
        return np.zeros(len(topics))
    result = measures.evaluate(qrels, run, [spec], options)
    per_topic = result.per_topic
    values = dict(zip(per_topic.get_column("qid"), per_topic.get_column(name), strict=True))
    return np.array([float(values.get(q, 0.0)) for q in topics])


def settle(
    known: pl.DataFrame,
    unknown: pl.DataFrame,
    runs: Mapping[str, pl.DataFrame],
    measure: str,
    options: measures.Options | None = None,
    *,
    top_grade: int,
    seed: int = 0,
) -> LiveBoard:
    """The live board (see the module) for one measure named in either dialect (one output
    name, e.g. ndcg_cut.10 or nDCG@10). Raises ValueError for a measure with several
    outputs or none, a top grade below 1, or as measures.evaluate does."""
    options = options or measures.Options()
    if not isinstance(top_grade, int) or top_grade < 1:
        raise ValueError(f"the top grade must be a whole number >= 1, got {top_grade!r}")
    outputs = measures.outputs([measure], options)
    if len(outputs) != 1 or not measures.is_mean(outputs[0].name):
        raise ValueError(f"choose one measure that is a mean over topics, got {measure!r}")
    (output,) = outputs
    name, k = output.name, output.k
    # Whether the value depends on the run's own top k only (families.py: P, Success, RR),
    # so that the topic's other undecided pairs cannot move it.
    own_top_k = output.family is not None and output.family.top_k_only
    known = known.select("qid", "docno", pl.col("grade").cast(pl.Int64))
    unknown = unknown.select("qid", "docno").unique()
    topics = sorted(set(known.get_column("qid")) | set(unknown.get_column("qid")))
    tops = {}
    ranked = {}
    rows: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for run_name, frame in runs.items():
        frame = frame.select("qid", "docno", "score").filter(pl.col("qid").is_in(topics))
        deepest = int(frame.group_by("qid").len().get_column("len").max() or 1)
        top = topk.top_k(frame, k or deepest, trec_eval_version=options.trec_eval_version)
        mine = unknown.join(top.select("qid", "docno"), on=["qid", "docno"], how="semi")
        others = unknown.join(mine, on=["qid", "docno"], how="anti")
        tops[run_name] = mine
        ranked[run_name] = top
        top_fill = pl.lit(top_grade, pl.Int64).alias("grade")
        low_qrels = pl.concat([known, others.with_columns(top_fill)])
        high_qrels = pl.concat([known, mine.with_columns(top_fill)])
        point = _per_topic(known, frame, measure, options, name, topics)
        fills = (
            _per_topic(low_qrels, frame, measure, options, name, topics),
            _per_topic(high_qrels, frame, measure, options, name, topics),
        )
        # The grades so far (undecided = not relevant) are one possible outcome too: where
        # a fill moves nDCG the other way (the ideal ranking rises with the run's own
        # documents), the bounds still hold every outcome computed.
        rows[run_name] = (
            point,
            np.minimum.reduce([point, *fills]),
            np.maximum.reduce([point, *fills]),
        )
    order = sorted(runs, key=lambda r: (-rows[r][0].mean() if topics else 0.0, r))
    if topics and order:
        matrix = np.vstack([rows[r][0] for r in order])
        lows, highs = significance.bootstrap_mean_interval(
            matrix, resamples=significance.RESAMPLES, level=LEVEL, seed=seed
        )
    else:
        lows = highs = np.zeros(len(order))
    board_runs = []
    for i, run_name in enumerate(order):
        point, low, high = rows[run_name]
        mean = lambda v: float(v.mean()) if len(v) else 0.0  # noqa: E731
        board_runs.append(
            LiveRun(run_name, mean(point), mean(low), mean(high), float(lows[i]), float(highs[i]))
        )
    by_name = {r.name: r for r in board_runs}
    model = None
    if name.startswith("ndcg_cut_") and k and len(order) > 1:
        model = win_probability(known, unknown, ranked, order, k=k, top_grade=top_grade)
    pairs = []
    open_topics: dict[str, set[str]] = {}
    for i, better in enumerate(order):
        for worse in order[i + 1 :]:
            margin = by_name[better].low - by_name[worse].high
            settled = margin > 0
            probability = None
            if model is not None and not settled:
                probability = float(model[order.index(better), order.index(worse)])
            pairs.append(LivePair(better, worse, settled, margin, probability))
            if not settled:
                for run_name in (better, worse):
                    _, low, high = rows[run_name]
                    moving = {topics[t] for t in np.flatnonzero(high > low)}
                    open_topics.setdefault(run_name, set()).update(moving)
    needed: set[tuple[str, str]] = set()
    for run_name, moving in open_topics.items():
        source = tops[run_name] if own_top_k else unknown
        needed.update(source.filter(pl.col("qid").is_in(sorted(moving))).iter_rows())
    return LiveBoard(
        measure=name,
        top_grade=top_grade,
        topics=len(topics),
        known=known.height,
        unknown=unknown.height,
        runs=board_runs,
        pairs=pairs,
        to_settle=len(needed),
    )


def _gain_moments(grades: list[int], top_grade: int) -> tuple[float, float]:
    """Mean and variance of an undecided pair's grade in a topic with ``grades`` so far: the
    grades so far plus one pseudo-grade spread evenly over 0..top_grade."""
    prior_mean = top_grade / 2
    prior_square = top_grade * (2 * top_grade + 1) / 6  # mean of g² over 0..top_grade
    n = len(grades)
    mean = (sum(grades) + prior_mean) / (n + 1)
    square = (sum(g * g for g in grades) + prior_square) / (n + 1)
    return mean, max(square - mean * mean, 0.0)


def win_probability(
    known: pl.DataFrame,
    unknown: pl.DataFrame,
    ranked: Mapping[str, pl.DataFrame],
    systems: list[str],
    *,
    k: int,
    top_grade: int,
) -> np.ndarray:
    """S x S (``systems`` order): P(mean nDCG@k of a > that of b once every undecided pair is
    graded), under the model of the module's docstring. ``ranked``: per run its top k
    (qid, rank, docno) as evaluation.analysis.topk.top_k gives them; documents outside the pool
    count not relevant and certain."""
    rows = [(q, d, int(g)) for q, d, g in known.iter_rows()]
    rows += [(q, d, None) for q, d in unknown.iter_rows()]
    index = {(q, d): i for i, (q, d, _) in enumerate(rows)}
    topics = sorted({q for q, _, _ in rows})
    by_topic: dict[str, list[int]] = {q: [] for q in topics}
    for q, _, g in rows:
        if g is not None:
            by_topic[q].append(max(g, 0))
    v = np.zeros((len(rows), len(systems)))
    for column, run_name in enumerate(systems):
        for qid, rank, docno in ranked[run_name].select("qid", "rank", "docno").iter_rows():
            row = index.get((qid, docno))
            if row is not None and rank <= k:
                v[row, column] = 1.0 / np.log2(rank + 1)
    idcg = {q: max(1.0, ideal_dcg(by_topic[q], k=k)) for q in topics}
    moments = {q: _gain_moments(by_topic[q], top_grade) for q in topics}
    weight = np.array([1.0 / (idcg[q] * max(1, len(topics))) for q, _, _ in rows])
    unjudged = np.array([g is None for _, _, g in rows], dtype=bool)
    grades = np.array([0.0 if g is None else max(g, 0) for _, _, g in rows])
    gain_mean = np.array([moments[q][0] for q, _, _ in rows])
    gain_var = np.array([moments[q][1] for q, _, _ in rows])
    if not rows:
        return np.full((len(systems), len(systems)), 0.5)
    return comparison_probability(
        v, weight, grades, unjudged, gain_mean=gain_mean, gain_var=gain_var
    )


def stop_waiting_for(
    board: LiveBoard, *, rule: str, top: int = 3, confidence: float = 0.95
) -> list[tuple[str, str]]:
    """The comparisons (better, worse) the stop rule ``rule`` ("adjacent" or "top", see
    annotation.strategies.settling.open_comparisons) still waits for on ``board``; judging
    may stop when the list is empty. A comparison is done when the bounds decide it or its
    probability under the model (where the board has one) reaches ``confidence``. A board
    of fewer than two runs, or with no undecided pair left, waits for nothing to be judged
    but has nothing to stop either: the caller decides (services.stopping pauses only a
    board with at least two runs and undecided pairs)."""
    names = [r.name for r in board.runs]
    if len(names) < 2:
        return []
    at = {name: i for i, name in enumerate(names)}
    size = len(names)
    lower = np.zeros((size, size))
    upper = np.zeros((size, size))
    for a, run_a in enumerate(board.runs):
        for b, run_b in enumerate(board.runs):
            lower[a, b] = run_a.low - run_b.high
            upper[a, b] = run_a.high - run_b.low
    prob = None
    if any(p.probability is not None for p in board.pairs):
        prob = np.full((size, size), 0.5)
        for p in board.pairs:
            if p.probability is not None:
                prob[at[p.better], at[p.worse]] = p.probability
                prob[at[p.worse], at[p.better]] = 1 - p.probability
    waiting = open_comparisons(
        [r.mean for r in board.runs],
        lower,
        upper,
        rule=rule,
        top=min(top, size),
        prob=prob,
        confidence=confidence,
    )
    return [(names[a], names[b]) for a, b in waiting]
