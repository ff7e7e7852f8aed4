"""Is the pool fair to a run that was not in it? The leave-one-run-out test (Zobel, "How
reliable are the results of large-scale information retrieval experiments?", SIGIR 1998;
Voorhees and Harman's "leave one group out" in TREC): pure, polars only, no Django.

A qrels version judged the union of some runs' top ``depth`` documents. A new system that
never entered that pool retrieves documents nobody judged, which trec_eval counts as not
relevant, so its numbers are too low. How much too low can be estimated from the runs that
were scored: for each run R,

1. its *unique contributions* are the judged documents of R's top ``depth`` (trec_eval's
   order) that no other run has in its top ``depth``: the documents the pool would not
   hold had R not been pooled;
2. the qrels *without R* are the qrels minus those documents (they become unjudged, as
   they would be for a run outside the pool);
3. R is scored again against the qrels without it. Its *drop* is full − reduced, per
   measure; its *rank drop* is its rank with the reduced score minus its rank with the full
   one, both among the other runs' scores on the full qrels (the usual reading of the test:
   the others keep their official numbers, one evaluation per run rather than one per pair
   of runs).

Ranks are competition ranks, largest first: 1 + the number of other runs with a strictly
larger full score. A run with no unique judged document has exactly the same qrels with and
without it, so neither its score nor its rank moves (tested as a property).

A topic whose judged documents all came from R alone would vanish from the reduced qrels,
and trec_eval would then skip it and average over fewer topics. The reduced mean is instead
taken over the full evaluation's topics, such a topic counting 0, which is what trec_eval
gives a topic without relevant documents for every measure here. Only measures whose "all"
value is the mean over topics are reported (not counts such as num_rel).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from evaluation import measures
from evaluation.analysis import topk

__all__ = ["FairnessReport", "RunFairness", "leave_one_run_out", "unique_contributions"]

DEFAULT_DEPTH = 100
# The deepest pool anyone may ask for: this test's (the leaderboard, the API) and a campaign's
# pool built from runs (annotation's pool form and API).
MAX_DEPTH = 10_000


@dataclass(frozen=True)
class RunFairness:
    """One run's result. ``full``/``reduced``: measure → mean; ``rank_full``/``rank_reduced``:
    measure → competition rank (1 = best) among every run's full score."""

    run: str
    unique_judged: int
    unique_relevant: int
    full: dict[str, float]
    reduced: dict[str, float]
    rank_full: dict[str, int]
    rank_reduced: dict[str, int]

    def drop(self, name: str) -> float:
        """How much the score falls without the run's unique documents (>= 0 in practice)."""
        return self.full[name] - self.reduced[name]

    def rank_drop(self, name: str) -> int:
        """How many places the run falls (0: it keeps its rank)."""
        return self.rank_reduced[name] - self.rank_full[name]

    def as_dict(self) -> dict:
        return {
            "run": self.run,
            "unique_judged": self.unique_judged,
            "unique_relevant": self.unique_relevant,
            "full": self.full,
            "reduced": self.reduced,
            "rank_full": self.rank_full,
            "rank_reduced": self.rank_reduced,
        }

    @classmethod
    def from_dict(cls, data: dict) -> RunFairness:
        return cls(**data)


@dataclass(frozen=True)
class FairnessReport:
    depth: int
    measures: list[str]
    runs: list[RunFairness]

    def of(self, run: str) -> RunFairness | None:
        return next((r for r in self.runs if r.run == run), None)

    def largest_drop(self, name: str) -> float:
        return max((r.drop(name) for r in self.runs), default=0.0)

    def mean_drop(self, name: str) -> float:
        return sum(r.drop(name) for r in self.runs) / len(self.runs) if self.runs else 0.0

    def as_dict(self) -> dict:
        return {
            "depth": self.depth,
            "measures": self.measures,
            "runs": [r.as_dict() for r in self.runs],
        }

    @classmethod
    def from_dict(cls, data: dict) -> FairnessReport:
        return cls(
            depth=data["depth"],
            measures=list(data["measures"]),
            runs=[RunFairness.from_dict(r) for r in data["runs"]],
        )


def _check_depth(depth: int) -> None:
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise ValueError(f"the pool depth must be a whole number >= 1, got {depth!r}")


def unique_contributions(
    runs: Mapping[str, pl.DataFrame], *, depth: int, trec_eval_version: int = 9
) -> dict[str, pl.DataFrame]:
    """run name → the (qid, docno) in that run's top ``depth`` and in no other run's top
    ``depth`` (judged or not; sorted)."""
    _check_depth(depth)
    tops = {
        name: topk.top_k(frame, depth, trec_eval_version=trec_eval_version)
        .select("qid", "docno")
        .unique()
        .with_columns(pl.lit(name).alias("run"))
        for name, frame in runs.items()
    }
    if not tops:
        return {}
    everyone = pl.concat(list(tops.values()))
    counts = everyone.group_by("qid", "docno").agg(pl.col("run").n_unique().alias("n"))
    alone = everyone.join(counts.filter(pl.col("n") == 1), on=["qid", "docno"])
    return {
        name: alone.filter(pl.col("run") == name).select("qid", "docno").sort("qid", "docno")
        for name in runs
    }


def _competition_rank(value: float, others: Sequence[float]) -> int:
    return 1 + sum(1 for other in others if other > value)


def leave_one_run_out(
    qrels: pl.DataFrame,
    runs: Mapping[str, pl.DataFrame],
    measure_specs: Sequence[str],
    options: measures.Options | None = None,
    *,
    depth: int = DEFAULT_DEPTH,
) -> FairnessReport:
    """The leave-one-run-out test (see the module) of every run of ``runs`` (name → frame
    with qid, docno, score) against ``qrels`` (qid, docno, grade) for the measures named
    (either dialect) at pool depth ``depth``. Raises ValueError for a bad depth, fewer than
    two runs, or as measures.evaluate does (e.g. a run with no topic in the qrels)."""
    _check_depth(depth)
    if len(runs) < 2:
        raise ValueError("the leave-one-run-out test needs at least two runs")
    options = options or measures.Options()
    judged = qrels.select("qid", "docno", pl.col("grade").cast(pl.Int64))
    unique = unique_contributions(runs, depth=depth, trec_eval_version=options.trec_eval_version)
    full_eval = {
        name: measures.evaluate(judged, frame, list(measure_specs), options)
        for name, frame in runs.items()
    }
    names = [n for n in next(iter(full_eval.values())).measures if measures.is_mean(n)]
    full = {name: {m: float(e.means[m]) for m in names} for name, e in full_eval.items()}
    results = []
    for name, frame in runs.items():
        mine = unique[name].join(judged, on=["qid", "docno"])
        relevant = mine.filter(pl.col("grade") >= options.relevance_level).height
        if mine.height == 0:
            reduced = dict(full[name])
        else:
            kept = judged.join(mine.select("qid", "docno"), on=["qid", "docno"], how="anti")
            reduced = _reduced_means(kept, frame, measure_specs, options, full_eval[name], names)
        others = {m: [full[o][m] for o in runs if o != name] for m in names}
        results.append(
            RunFairness(
                run=name,
                unique_judged=mine.height,
                unique_relevant=relevant,
                full=full[name],
                reduced=reduced,
                rank_full={m: _competition_rank(full[name][m], others[m]) for m in names},
                rank_reduced={m: _competition_rank(reduced[m], others[m]) for m in names},
            )
        )
    return FairnessReport(depth=depth, measures=names, runs=results)


def _reduced_means(kept, frame, measure_specs, options, full_evaluation, names) -> dict[str, float]:
    """Means over the full evaluation's topics of the run scored against ``kept``; a topic
    the reduced qrels no longer hold counts 0 (see the module)."""
    topics = full_evaluation.per_topic.get_column("qid").to_list()
    if kept.filter(pl.col("qid").is_in(topics)).height == 0:
        return {m: 0.0 for m in names}
    result = measures.evaluate(kept, frame, list(measure_specs), options)
    values = {row["qid"]: row for row in result.per_topic.iter_rows(named=True)}
    return {
        m: sum(float(values[q][m]) if q in values else 0.0 for q in topics) / len(topics)
        for m in names
    }
