"""How much unjudged documents could move a score: per run and topic, the best and the worst
value of a measure over the unjudged documents of the run's top k (pure: polars, no Django).

trec_eval counts an unjudged document as not relevant, so a run that retrieves many of them
may be better than its number says. The residual (as cwl-eval reports it) bounds that:

- best: every unjudged document of the run's top k counted as relevant at ``top_grade``
  (by default the highest grade in the qrels, at least the relevance level);
- worst: every one of them counted as judged not relevant (grade 0).

k is the measure's own cutoff (nDCG@10: the top 10; P@5: the top 5); a measure without one
(map, ndcg, recip_rank, Rprec, bpref) looks at every document the run retrieved (at most
``options.depth``). Only the run's documents are filled: the qrels' other documents keep
their grades, so the ideal ranking of nDCG grows with the filled ones, as it would had they
been judged so. For most measures the worst case is the value itself; bpref, which tells
judged non-relevant from unjudged documents, can drop. judged@k has no residual (filling
the gaps is what it counts), nor do the counts (num_ret, num_rel, ...).

Topics the qrels do not hold are not filled: trec_eval does not score them, and neither does
this.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from evaluation import measures
from evaluation.analysis import topk

__all__ = ["RESIDUAL_MEASURES", "Residuals", "residual_bounds"]

# Measures whose value a grade given to an unjudged document can change.
RESIDUAL_MEASURES = frozenset(
    {"map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "recall"}
    | {"ndcg", "ndcg_cut", "map_cut", "success"}
)


@dataclass(frozen=True)
class Residuals:
    """``per_topic[qid][name] = (worst, best)``; ``means[name] = (worst, best)``, trec_eval's
    "all" values of the filled qrels (means over topics, as the measure's own)."""

    per_topic: dict[str, dict[str, tuple[float, float]]]
    means: dict[str, tuple[float, float]]
    top_grade: int


def _single_specs(specs: Sequence[str]) -> list[tuple[str, str, int | None]]:
    """(output name, one-measure spec, k) for each output name that has a residual."""
    measures.parse_measures(list(specs))  # trec_eval's names only, checked by its rules
    return [
        (output.name, output.spec, output.k)
        for output in measures.outputs(list(specs))
        if output.measure in RESIDUAL_MEASURES
    ]


def residual_bounds(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    measure_specs: Sequence[str],
    options: measures.Options | None = None,
    *,
    top_grade: int | None = None,
) -> Residuals:
    """Best and worst value of each measure (trec_eval ``-m`` arguments) per topic of
    ``run`` (qid, docno, score) against ``qrels`` (qid, docno, grade), with the unjudged
    documents of each measure's top k filled both ways: see the module's doc. Raises
    ValueError as measures.evaluate does, or for a top grade below 1."""
    options = options or measures.Options()
    if top_grade is None:
        highest = qrels.get_column("grade").max() if qrels.height else None
        top_grade = max(int(highest) if highest is not None else 1, options.relevance_level, 1)
    if not isinstance(top_grade, int) or top_grade < 1:
        raise ValueError(f"the top grade must be a whole number >= 1, got {top_grade!r}")
    judged = qrels.select("qid", "docno", pl.col("grade").cast(pl.Int64))
    known_topics = judged.get_column("qid").unique().implode()
    run = run.select("qid", "docno", "score")
    deepest = int(run.group_by("qid").len().get_column("len").max() or 1)
    by_k: dict[int | None, list[tuple[str, str]]] = {}
    for name, spec, k in _single_specs(measure_specs):
        by_k.setdefault(k, []).append((name, spec))
    per_topic: dict[str, dict[str, tuple[float, float]]] = {}
    means: dict[str, tuple[float, float]] = {}
    for k, wanted in by_k.items():
        top = topk.top_k(
            run,
            k or deepest,
            trec_eval_version=options.trec_eval_version,
            depth=options.depth,
        )
        unjudged = (
            topk.with_grades(top, judged)
            .filter(pl.col("grade").is_null() & pl.col("qid").is_in(known_topics))
            .select("qid", "docno")
        )
        specs = [spec for _, spec in wanted]
        results = []
        for grade in (0, top_grade):
            filled = pl.concat(
                [judged, unjudged.with_columns(pl.lit(grade, pl.Int64).alias("grade"))]
            )
            results.append(measures.evaluate(filled, run, specs, options))
        worst, best = results
        worst_rows = {row["qid"]: row for row in worst.per_topic.iter_rows(named=True)}
        for row in best.per_topic.iter_rows(named=True):
            low = worst_rows[row["qid"]]
            values = per_topic.setdefault(row["qid"], {})
            for name, _ in wanted:
                values[name] = (float(low[name]), float(row[name]))
        for name, _ in wanted:
            means[name] = (float(worst.means[name]), float(best.means[name]))
    return Residuals(per_topic=per_topic, means=means, top_grade=top_grade)
