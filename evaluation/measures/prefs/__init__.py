"""trec_eval's preference measures (`-R prefs`, `-R qrels_prefs`), computed as
form_prefs_counts.c and the m_prefs_*.c files of trec_eval 9.0.8 and 10.0 do. Pure.

    evaluate_prefs(prefs, run, ["all_prefs"], Options()) -> Evaluation

Input. A preference file holds (qid, jg, jsg, docno, level) lines: within one judgment
subgroup (jsg) of a judgment group (jg), a document with a higher level is preferred to one
with a lower level; level 0 means not relevant. A jg with one subgroup prefers by level across
all its documents; a jg with several subgroups joins their preferences and adds the transitive
ones (A > B in one subgroup and B > C in another give A > C), and it must stay consistent: a
preference both ways, or a document at 0 in one subgroup and above 0 in another, is an error.
`-R qrels_prefs` reads a qrels file this way: jg = the iteration field, one subgroup.

The run. A topic's documents are ranked by score descending, ties by docno *ascending* (this
file's order, unlike the other measures'), `-M` keeps the first ones; 9.0.8 compares scores as
C floats (and levels too), 10.0 as doubles. Of the documents named in the topic's
preferences, the retrieved ones come first in rank order, then the others in docno order.

Counts, per jg, over its preferences A > B: "fulfilled" when A comes before B in that order;
"ret" when both are retrieved, "imp" (implied) when exactly one is (fulfilled when it is A),
"notoccur" when neither is (never fulfilled). R and N are the jg's documents with level > 0
and level <= 0 (with subgroups: level == 0), R_ret and N_ret those retrieved.

    prefs_num_prefs_poss     every preference;            summed over topics, not averaged
    prefs_num_prefs_ful      fulfilled ret + imp;          summed
    prefs_num_prefs_ful_ret  fulfilled ret;                summed
    prefs_simp               fulfilled / possible (ret, imp and notoccur), over all jgs
    prefs_simp_ret, _imp     the same over ret, and over ret + imp
    prefs_pair               mean over document pairs with a preference, of the share of
                             jgs that agree with the order (notoccur pairs count 0)
    prefs_pair_ret, _imp     the same over pairs of retrieved documents, and pairs with at
                             least one retrieved
    prefs_avgjg              mean over jgs of fulfilled / possible (a jg without
                             preferences adds 0 and still counts)
    prefs_avgjg_ret, _imp    the same over ret, over ret + imp
    prefs_avgjg_Rnonrel      as prefs_avgjg with N set to R: when R >= N, R_ret * (R - N)
                             fulfilled and R * (R - N) possible preferences are added; when
                             R < N, only the first R (docid order) non-relevant documents
                             are kept and the preferences recounted
    prefs_avgjg_Rnonrel_ret  the same over retrieved documents, with R_ret and N_ret

Every value is 0 where trec_eval leaves it at 0 (nothing possible; an avgjg sum that is not
positive). trec_eval's own quirks are kept, since they change numbers: the avgjg_Rnonrel
recount also pairs the lowest equivalence class with the kept non-relevant documents, a jg
whose ratio is 0/0 makes the topic's avgjg_Rnonrel sum NaN and so its value 0, and
avgjg_Rnonrel_ret adds R * (R_ret - N_ret) rather than R_ret * (...) possible preferences.
Where trec_eval reads past an array (that recount when the lowest class holds fewer than R
documents), we keep the documents that exist.

Sums run in trec_eval's order (topics in qid byte order, jgs in jg byte order, pairs row by
row), so the last bits agree.

Modules: this one checks the input, numbers each topic's judged documents and takes the
means; topic holds one topic's counts and its measures; counts the counting within one
judgment group.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from ..catalog import Options, parse_measures
from ..inputs import check_measures
from ..scoring import Evaluation
from ..zscores import convert_to_zscores
from .topic import _Topic

__all__ = ["PREFS_MEASURES", "evaluate_prefs", "prefs_from_qrels"]

PREFS_MEASURES = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
_DEFAULT_OPTIONS = Options()
_SUMMED = ("num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")


def prefs_from_qrels(qrels: pl.DataFrame) -> pl.DataFrame:
    """A qrels_prefs frame (qid, jg, docno, level) as preferences: one subgroup "0"."""
    return qrels.select("qid", "jg", pl.lit("0").alias("jsg"), "docno", "level")


def evaluate_prefs(
    prefs: pl.DataFrame,
    run: pl.DataFrame,
    measures: Sequence[str] = ("prefs",),
    options: Options = _DEFAULT_OPTIONS,
    *,
    rel_format: str = "prefs",
    zscores: pl.DataFrame | None = None,
) -> Evaluation:
    """Score `run` (qid, docno, score) against `prefs` (qid, jg, jsg, docno, level).

    Topics only in the run are ignored; topics only in `prefs` are skipped, or with
    `options.complete` counted in every mean (9.0.8: as 0 and not printed; 10.0: scored as
    an empty ranking). Raises ValueError for measures that need another input, malformed
    frames, inconsistent preferences within a judgment group, or when no topic has both
    preferences and results.
    """
    parsed = parse_measures(measures)
    check_measures(rel_format, parsed)
    prefs, run = _checked(prefs, run, options)
    prefs_topics = prefs.get_column("qid").unique().sort()
    run_topics = run.get_column("qid").unique()
    present = prefs_topics.is_in(run_topics.implode())
    topics = prefs_topics if options.complete else prefs_topics.filter(present)
    missing = ~topics.is_in(run_topics.implode()).to_numpy()
    scored_missing = options.complete and options.trec_eval_version == 10
    if topics.len() == 0 or (missing.all() and not scored_missing):
        raise ValueError(
            "no topic has both preferences and results: check that the preferences and the "
            "run use the same topic ids"
        )
    rows, judged_ret = _docids(prefs, run, topics, options)
    names = [name for m in parsed if m.name != "runid" for name in m.output_names]
    values = {name: np.zeros(topics.len()) for name in names}
    blocks = _topic_blocks(rows, topics.len())
    for t in range(topics.len()):
        if missing[t] and not scored_missing:
            continue
        start, stop = blocks[t], blocks[t + 1]
        topic = _Topic(
            str(topics[t]),
            rows.slice(start, stop - start),
            int(judged_ret[t]),
            options.trec_eval_version,
        )
        for name in names:
            values[name][t] = topic.value(name)
    if zscores is not None:  # -Z; 9.0.8 never evaluates (nor converts) a missing topic
        evaluated = None if scored_missing else ~missing
        values = convert_to_zscores(topics, values, zscores, evaluated)
    per_topic = pl.DataFrame({"qid": topics, **values})
    means = {name: _mean(name, values[name]) for name in names}
    return Evaluation(
        measures=names,
        per_topic=per_topic,
        means=means,
        options=options,
        missing_topics=tuple(topics.filter(pl.Series(missing)).to_list()),
        runid_requested=any(m.name == "runid" for m in parsed),
        zscored=zscores is not None,
    )


def _mean(name: str, values: np.ndarray) -> float:
    total = float(np.cumsum(values)[-1]) if values.size else 0.0
    if name == "num_q":
        return float(values.size)
    return total if name in _SUMMED else total / values.size


def _checked(prefs: pl.DataFrame, run: pl.DataFrame, options: Options):
    for label, frame, columns in (
        ("prefs", prefs, {"qid": pl.String, "jg": pl.String, "jsg": pl.String, "docno": pl.String}),
        ("run", run, {"qid": pl.String, "docno": pl.String}),
    ):
        if not isinstance(frame, pl.DataFrame):
            raise ValueError(f"{label} must be a polars DataFrame, got {type(frame).__name__}")
        for column, dtype in columns.items():
            if frame.schema.get(column) != dtype:
                raise ValueError(f"{label}: column {column!r} must be a string column")
    for label, frame, column in (("prefs", prefs, "level"), ("run", run, "score")):
        dtype = frame.schema.get(column)
        if dtype is None or not dtype.is_numeric():
            raise ValueError(f"{label}: column {column!r} must be numeric")
        if frame.get_column(column).null_count():
            raise ValueError(f"{label}: column {column!r} has missing values")
        if not frame.get_column(column).cast(pl.Float64).is_finite().all():
            raise ValueError(f"{label}: column {column!r} must be finite")
    # 9.0.8 keeps levels and scores as C floats: values equal once rounded compare equal.
    width = pl.Float32 if options.trec_eval_version == 9 else pl.Float64
    level = pl.col("level").cast(width).cast(pl.Float64) + 0.0
    prefs = prefs.select("qid", "jg", "jsg", "docno", level.alias("level"))
    score = pl.col("score").cast(width).cast(pl.Float64) + 0.0  # -0.0 ties with 0.0, as in C
    return prefs, run.select("qid", "docno", score.alias("score"))


def _docids(prefs: pl.DataFrame, run: pl.DataFrame, topics: pl.Series, options: Options):
    """The preference lines of `topics`, with topic (index into topics) and docid, sorted by
    (topic, jg, jsg, level descending, docid); and per topic the number of judged documents
    retrieved. A docid numbers a topic's judged documents: the retrieved ones in rank order
    from 0, then the others in docno order."""
    topic_index = pl.DataFrame({"qid": topics, "topic": np.arange(topics.len(), dtype=np.int64)})
    ranked = (
        run.join(topic_index, on="qid")
        .sort(["topic", "score", "docno"], descending=[False, True, False])
        .with_columns(rank=pl.int_range(pl.len()).over("topic"))
    )
    if options.depth is not None:
        ranked = ranked.filter(pl.col("rank") < options.depth)
    rows = prefs.join(topic_index, on="qid")
    judged = rows.select("topic", "docno").unique()
    retrieved = ranked.join(judged, on=["topic", "docno"], how="semi").select(
        "topic", "docno", "rank"
    )
    if retrieved.select(pl.struct("topic", "docno").is_duplicated().any()).item():
        raise ValueError("run: a document appears twice in one topic's ranking")
    docs = (
        judged.join(retrieved, on=["topic", "docno"], how="left")
        .sort(["topic", "rank", "docno"], nulls_last=True)
        .with_columns(docid=pl.int_range(pl.len()).over("topic"))
    )
    judged_ret = np.bincount(
        retrieved.get_column("topic").to_numpy(), minlength=topics.len()
    ).astype(np.int64)
    rows = (
        rows.join(docs.select("topic", "docno", "docid"), on=["topic", "docno"])
        .sort(
            ["topic", "jg", "jsg", "level", "docid"], descending=[False, False, False, True, False]
        )
        .select("topic", "jg", "jsg", "docno", "level", "docid")
    )
    return rows, judged_ret


def _topic_blocks(rows: pl.DataFrame, n: int) -> np.ndarray:
    counts = np.bincount(rows.get_column("topic").to_numpy(), minlength=n)
    return np.concatenate([[0], np.cumsum(counts)])
