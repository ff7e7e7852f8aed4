"""The first k documents of each topic in trec_eval's order, and which of them are judged.

Dashboards show a run's top k per topic with each document's grade, count the unjudged ones
(a score over mostly unjudged documents is a lower bound), and send those to judging. The
order is the one trec_eval scores with (see evaluation.measures.ranking): score descending,
ties broken by docno descending in byte order; 9.0.8 compares scores rounded to float32,
10.0 the doubles; `-M depth` keeps the first `depth` documents. So the unjudged documents
counted here are exactly those judged@k leaves out.

Frames: a run is (qid, docno, score), qrels (qid, docno, grade), as evaluation.measures
takes them. Pure: polars and numpy only.
"""

from collections.abc import Iterable

import polars as pl

__all__ = ["ideal_ranking", "top_k", "unjudged_counts", "unjudged_pairs", "with_grades"]

_KEY = "__order_key"


def top_k(
    run: pl.DataFrame,
    k: int,
    *,
    trec_eval_version: int = 9,
    depth: int | None = None,
    qids: Iterable[str] | None = None,
) -> pl.DataFrame:
    """Each topic's first min(k, depth) documents: qid, rank (1-based), docno, score; sorted
    by qid (byte order), then rank. ``qids`` limits the topics looked at."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    if trec_eval_version not in (9, 10):
        raise ValueError(f"trec_eval_version must be 9 or 10, got {trec_eval_version!r}")
    keep = k if depth is None else min(k, depth)
    frame = run.select("qid", "docno", "score")
    if qids is not None:
        frame = frame.filter(pl.col("qid").is_in(list(qids)))
    score = pl.col("score").cast(pl.Float64)
    if trec_eval_version == 9:
        score = score.cast(pl.Float32).cast(pl.Float64)  # 9.0.8 ranks C floats
    frame = frame.with_columns(score.alias(_KEY))
    # Keep a topic's documents that can still be among its first `keep` (ties at the edge
    # included), then put those few in exact order: cheaper than sorting every line.
    frame = frame.filter(pl.col(_KEY).rank("min", descending=True).over("qid") <= keep)
    frame = frame.sort(["qid", _KEY, "docno"], descending=[False, True, True])
    frame = frame.group_by("qid", maintain_order=True).head(keep)
    return frame.select(
        "qid",
        (pl.int_range(pl.len()).over("qid") + 1).cast(pl.Int64).alias("rank"),
        "docno",
        pl.col("score").cast(pl.Float64),
    )


def with_grades(top: pl.DataFrame, qrels: pl.DataFrame) -> pl.DataFrame:
    """``top`` with a grade column: the document's grade in the qrels, null when unjudged."""
    grades = qrels.select("qid", "docno", pl.col("grade").cast(pl.Int64))
    return top.join(grades, on=["qid", "docno"], how="left", maintain_order="left")


def unjudged_counts(graded_top: pl.DataFrame) -> dict[str, int]:
    """Per topic of a ``with_grades`` frame, how many of its documents are unjudged."""
    counts = graded_top.group_by("qid").agg(pl.col("grade").is_null().sum().alias("n"))
    return dict(zip(counts["qid"].to_list(), counts["n"].to_list(), strict=True))


def unjudged_pairs(graded_top: pl.DataFrame) -> list[tuple[str, str]]:
    """The (qid, docno) pairs of a ``with_grades`` frame that the qrels do not judge."""
    unjudged = graded_top.filter(pl.col("grade").is_null()).select("qid", "docno")
    return list(unjudged.iter_rows())


def ideal_ranking(qrels: pl.DataFrame, qid: str, k: int) -> list[tuple[str, int]]:
    """The ideal top k of a topic as nDCG's ideal DCG counts it: its judged documents with
    grade >= 1, highest grade first (equal grades by docno, for a stable display)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    ideal = (
        qrels.filter((pl.col("qid") == qid) & (pl.col("grade") >= 1))
        .sort(["grade", "docno"], descending=[True, False])
        .head(k)
    )
    return list(ideal.select("docno", pl.col("grade").cast(pl.Int64)).iter_rows())
