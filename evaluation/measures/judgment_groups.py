"""trec_eval's judgment-group measures (`-R qrels_jg`), as form_res_rels_jg.c and
m_map_avgjg.c, m_P_avgjg.c, m_Rprec_mult_avgjg.c compute them (9.0.8 and 10.0). Pure.

    evaluate_judgment_groups(qrels_jg, run, ["qrels_jg"], Options()) -> Evaluation

A qrels_jg file is a qrels file whose iteration field names a judgment group (jg): one set of
judgments per user, say. Each jg is scored on its own over the same ranking (trec_eval's: score
descending, ties by docno descending; `-M` keeps the first documents; with `-J`, the documents
this jg has not judged, or judged negative, are dropped and the rest ranked again), with
rel(i) when the jg judged the document at rank i with a grade >= l (`-l`) and R_jg the jg's
documents with a grade >= l. Then the topic's value is the sum over its jgs (in jg byte order)
divided by the number of jgs when there are several:

    map_avgjg           AP_jg = sum over relevant i of prec(i), / R_jg  (0 when none retrieved)
    P_avgjg_k           P_jg@k = |{i <= k : rel(i)}| / k
    Rprec_mult_avgjg_x  P_jg@c with c = (long)(x * R_jg + 0.9); 0 when c = 0

Topics and -c follow the other measures: topics only in the run are ignored; topics only in
the qrels are skipped, or with `complete` counted (9.0.8: 0, not printed; 10.0: scored).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from .catalog import Options, parse_measures
from .inputs import check_measures
from .ranking import QidBlocks, rank_judged_documents
from .scoring import Evaluation
from .zscores import convert_to_zscores

__all__ = ["evaluate_judgment_groups"]

_DEFAULT_OPTIONS = Options()


def evaluate_judgment_groups(
    qrels_jg: pl.DataFrame,
    run: pl.DataFrame,
    measures: Sequence[str] = ("qrels_jg",),
    options: Options = _DEFAULT_OPTIONS,
    *,
    zscores: pl.DataFrame | None = None,
) -> Evaluation:
    """Score `run` (qid, docno, score) against `qrels_jg` (qid, jg, docno, grade).

    Raises ValueError for measures that need another input, malformed frames, a document
    judged twice by one jg, or when no topic has both judgments and results.
    """
    parsed = parse_measures(measures)
    check_measures("qrels_jg", parsed)
    qrels_jg, run = _checked(qrels_jg, run)
    judged_topics = qrels_jg.get_column("qid").unique().sort()
    run_topics = run.get_column("qid").unique().implode()
    topics = (
        judged_topics if options.complete else judged_topics.filter(judged_topics.is_in(run_topics))
    )
    missing = ~topics.is_in(run_topics).to_numpy()
    scored_missing = options.complete and options.trec_eval_version == 10
    if topics.len() == 0 or (missing.all() and not scored_missing):
        raise ValueError(
            "no topic has both relevance judgments and results: check that the qrels and "
            "the run use the same topic ids"
        )
    groups = _ranked_groups(qrels_jg, run, topics, options)
    n = topics.len()
    columns: dict[str, np.ndarray] = {}
    for measure in parsed:
        if measure.name == "num_q":
            columns["num_q"] = np.ones(n)
        elif measure.name == "map_avgjg":
            columns["map_avgjg"] = groups.per_topic(groups.average_precision())
        elif measure.name == "P_avgjg":
            for k, name in zip(measure.cutoffs, measure.output_names, strict=True):
                columns[name] = groups.per_topic(groups.precision_at(np.full(groups.n, k)))
        elif measure.name == "Rprec_mult_avgjg":
            for x, name in zip(measure.cutoffs, measure.output_names, strict=True):
                cutoff = np.floor(x * groups.num_rel + 0.9).astype(np.int64)
                columns[name] = groups.per_topic(groups.precision_at(cutoff))
    if not scored_missing:  # 9.0.8 never evaluates a missing topic: 0 everywhere
        columns = {
            name: values if name == "num_q" else np.where(missing, 0.0, values)
            for name, values in columns.items()
        }
    if zscores is not None:
        evaluated = None if scored_missing else ~missing
        columns = convert_to_zscores(topics, columns, zscores, evaluated)
    per_topic = pl.DataFrame({"qid": topics, **columns})
    return Evaluation(
        measures=list(columns),
        per_topic=per_topic,
        means={name: _mean(name, values) for name, values in columns.items()},
        options=options,
        missing_topics=tuple(topics.filter(pl.Series(missing)).to_list()),
        runid_requested=any(m.name == "runid" for m in parsed),
        zscored=zscores is not None,
    )


def _mean(name: str, values: np.ndarray) -> float:
    if name == "num_q":
        return float(values.size)
    return float(np.cumsum(values)[-1]) / values.size


def _checked(qrels_jg: pl.DataFrame, run: pl.DataFrame):
    for label, frame, columns in (
        ("qrels_jg", qrels_jg, ("qid", "jg", "docno")),
        ("run", run, ("qid", "docno")),
    ):
        if not isinstance(frame, pl.DataFrame):
            raise ValueError(f"{label} must be a polars DataFrame, got {type(frame).__name__}")
        for column in columns:
            if frame.schema.get(column) != pl.String:
                raise ValueError(f"{label}: column {column!r} must be a string column")
    if not (qrels_jg.schema.get("grade") or pl.String).is_integer():
        raise ValueError("qrels_jg: column 'grade' must be an integer column")
    score = run.schema.get("score")
    if score is None or not score.is_numeric():
        raise ValueError("run: column 'score' must be numeric")
    for frame, column in ((qrels_jg, "grade"), (run, "score")):
        if frame.get_column(column).null_count():
            raise ValueError(f"column {column!r} has missing values")
    if qrels_jg.select(pl.struct("qid", "jg", "docno").is_duplicated().any()).item():
        first = qrels_jg.filter(pl.struct("qid", "jg", "docno").is_duplicated()).row(0, named=True)
        raise ValueError(
            f"qrels_jg: topic {first['qid']!r}, judgment group {first['jg']!r} judges "
            f"document {first['docno']!r} twice"
        )
    return (
        qrels_jg.select("qid", "jg", "docno", pl.col("grade").cast(pl.Int64)),
        run.select("qid", "docno", pl.col("score").cast(pl.Float64)),
    )


class _Groups:
    """Every (topic, jg) with its relevant documents' ranks, sorted by (topic, jg, rank)."""

    def __init__(self, topic_of_group, num_rel, num_ret, event_group, event_rank, n_topics):
        self.topic = topic_of_group  # per group, sorted
        self.n = topic_of_group.size
        self.num_rel = num_rel  # per group
        self.num_ret = num_ret  # per group
        self.event_group = event_group  # per relevant retrieved document
        self.event_rank = event_rank
        self.n_topics = n_topics

    def average_precision(self) -> np.ndarray:
        count = np.bincount(self.event_group, minlength=self.n)
        start = np.cumsum(count) - count
        position = np.arange(self.event_group.size) - start[self.event_group] + 1
        sums = _sequential_sums(position / self.event_rank, self.event_group, self.n)
        return np.where(count > 0, sums / np.maximum(self.num_rel, 1), 0.0)

    def precision_at(self, cutoff: np.ndarray) -> np.ndarray:
        within = self.event_rank <= cutoff[self.event_group]
        hits = np.bincount(self.event_group[within], minlength=self.n)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(cutoff > 0, hits / np.maximum(cutoff, 1), 0.0)

    def per_topic(self, values: np.ndarray) -> np.ndarray:
        """Per topic: the groups' values added in jg order, divided by their number when
        there are several."""
        sums = _sequential_sums(values, self.topic, self.n_topics)
        groups = np.bincount(self.topic, minlength=self.n_topics)
        return np.where(groups > 1, sums / np.maximum(groups, 1), sums)


def _ranked_groups(qrels_jg: pl.DataFrame, run: pl.DataFrame, topics: pl.Series, options):
    topic_index = pl.DataFrame({"qid": topics, "topic": np.arange(topics.len(), dtype=np.int64)})
    rows = qrels_jg.join(topic_index, on="qid").sort(["topic", "jg", "docno"])
    # Rank each judged document once (any jg): its "grade" is its index among them.
    docs = rows.select("topic", "docno").unique(maintain_order=True)
    docs = docs.with_columns(grade=pl.int_range(pl.len(), dtype=pl.Int64))
    run_blocks = QidBlocks(run.get_column("qid"))
    ranking = rank_judged_documents(
        docs,
        run,
        run_blocks,
        topics,
        trec_eval_version=options.trec_eval_version,
        depth=options.depth,
    )
    ranked = pl.DataFrame({"doc": ranking.grade, "rank": ranking.rank})
    rows = (
        rows.join(docs.rename({"grade": "doc"}), on=["topic", "docno"])
        .join(ranked, on="doc", how="left")
        .sort(["topic", "jg", "docno"])
        .with_columns(
            group=(
                (pl.col("topic") != pl.col("topic").shift())
                | (pl.col("jg") != pl.col("jg").shift())
            )
            .fill_null(True)
            .cum_sum()
            .cast(pl.Int64)
            - 1
        )
        .sort(["group", "rank"], nulls_last=True)
    )
    group = rows.get_column("group").to_numpy()
    n_groups = int(group.max()) + 1 if group.size else 0
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if group.size else np.zeros(0, int)
    topic_of_group = rows.get_column("topic").to_numpy()[first]
    grade = rows.get_column("grade").to_numpy()
    rank = rows.get_column("rank").fill_null(0).to_numpy()
    retrieved = rank > 0
    level = options.relevance_level
    num_rel = np.bincount(group[grade >= level], minlength=n_groups)
    if options.judged_only:
        # -J: this jg's unjudged (and negatively judged) documents leave its ranking.
        kept = retrieved & (grade >= 0)
        count = np.bincount(group[kept], minlength=n_groups)
        start = np.cumsum(count) - count
        new_rank = np.zeros_like(rank)
        new_rank[kept] = np.arange(int(kept.sum())) - start[group[kept]] + 1
        rank, retrieved, num_ret = new_rank, kept, count
    else:
        num_ret = ranking.num_ret[topic_of_group]
    relevant = retrieved & (grade >= level)
    return _Groups(topic_of_group, num_rel, num_ret, group[relevant], rank[relevant], topics.len())


def _sequential_sums(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Per group, ``values`` (sorted by group) added one by one in order, as C's loops add
    them (numpy's reductions add pairwise, which can change the last bits)."""
    out = np.zeros(n)
    if values.size == 0:
        return out
    count = np.bincount(group, minlength=n)
    start = np.cumsum(count) - count
    position = np.arange(values.size) - start[group]
    order = np.argsort(position, kind="stable")
    bounds = np.searchsorted(position[order], np.arange(int(position.max()) + 2))
    for step in range(bounds.size - 1):
        index = order[bounds[step] : bounds[step + 1]]
        out[group[index]] += values[index]
    return out
