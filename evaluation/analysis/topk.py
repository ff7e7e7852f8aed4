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

__all__ = [
    "STORED_DEPTH",
    "ideal_ranking",
    "stored_tops",
    "top_k",
    "top_k_of_stored",
    "unjudged_counts",
    "unjudged_pairs",
    "with_grades",
]

_KEY = "__order_key"

# How deep the top lists kept with each run go (stored_tops): deep enough for every
# dashboard cutoff (ndcg_cut.100) and the diff's default depth, small next to the run.
STORED_DEPTH = 100


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


def stored_tops(run: pl.DataFrame, depth: int = STORED_DEPTH) -> pl.DataFrame:
    """What a run keeps beside its artifact so pages need not read and rank it whole: each
    topic's first ``depth`` documents under either trec_eval version's order, as qid, docno,
    score, rank_9, rank_10 (null: beyond ``depth`` in that version's order), sorted by qid
    and rank_9. top_k_of_stored cuts it as top_k would cut the run, for any k <= depth."""
    tops = [
        top_k(run, depth, trec_eval_version=version).select(
            "qid", "docno", "score", pl.col("rank").alias(f"rank_{version}")
        )
        for version in (9, 10)
    ]
    both = tops[0].join(tops[1].drop("score"), on=["qid", "docno"], how="full", coalesce=True)
    # A document in 10.0's top only has no score from the 9.0.8 side: take it from the run.
    missing = both.filter(pl.col("score").is_null())
    if missing.height:
        scores = run.select("qid", "docno", pl.col("score").cast(pl.Float64))
        filled = missing.drop("score").join(scores, on=["qid", "docno"], how="left")
        both = pl.concat([both.filter(pl.col("score").is_not_null()), filled.select(both.columns)])
    return both.select(
        "qid",
        "docno",
        pl.col("score").cast(pl.Float64),
        pl.col("rank_9").cast(pl.Int64),
        pl.col("rank_10").cast(pl.Int64),
    ).sort(["qid", "rank_9", "rank_10"], nulls_last=True)


def top_k_of_stored(
    stored: pl.DataFrame,
    k: int,
    *,
    stored_depth: int,
    trec_eval_version: int = 9,
    depth: int | None = None,
) -> pl.DataFrame:
    """top_k's frame, cut from a stored_tops frame ``stored_depth`` deep: the same rows for
    any min(k, depth) <= stored_depth (ValueError beyond it)."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    if trec_eval_version not in (9, 10):
        raise ValueError(f"trec_eval_version must be 9 or 10, got {trec_eval_version!r}")
    keep = k if depth is None else min(k, depth)
    if keep > stored_depth:
        raise ValueError(f"the stored lists are {stored_depth} deep, not {keep}")
    rank = f"rank_{trec_eval_version}"
    return (
        stored.filter(pl.col(rank) <= keep)
        .sort(["qid", rank])
        .select("qid", pl.col(rank).alias("rank"), "docno", "score")
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
