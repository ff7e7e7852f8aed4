"""Depth-k pooling: per topic, the union of each run's top k documents, de-duplicated.

"Top k" uses trec_eval's order (score descending, ties by docno descending), so the pool is
exactly the documents that decide every measure at cutoff <= k. Pure: polars only.
"""

from collections.abc import Sequence

import polars as pl

POOL_SCHEMA = {"qid": pl.String, "docno": pl.String, "runs": pl.UInt32, "best_rank": pl.UInt32}


def pool_runs(
    runs: Sequence[pl.DataFrame], *, depth: int, topics: Sequence[str] | None = None
) -> pl.DataFrame:
    """Pool ``runs`` (frames with qid, docno, score) at ``depth``.

    Returns one row per pooled (qid, docno), sorted by qid then docno, with how many runs
    retrieved it in their top ``depth`` (``runs``) and its best rank among them
    (``best_rank``, 1-based) — for the lead's pool page; judges never see either.
    ``topics``, when given, keeps only those topics (a campaign pools only its own topics).
    """
    if depth < 1:
        raise ValueError(f"pool depth must be at least 1, got {depth}")
    if not runs:
        raise ValueError("pooling needs at least one run")
    tops = []
    for index, run in enumerate(runs):
        missing = {"qid", "docno", "score"} - set(run.columns)
        if missing:
            raise ValueError(f"run {index} lacks columns {sorted(missing)}")
        frame = run.select("qid", "docno", "score")
        if topics is not None:
            frame = frame.filter(pl.col("qid").is_in(list(topics)))
        tops.append(
            frame.sort(["qid", "score", "docno"], descending=[False, True, True])
            .with_columns(rank=pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("qid"))
            .filter(pl.col("rank") <= depth)
            .select("qid", "docno", "rank")
        )
    return (
        pl.concat(tops)
        .group_by("qid", "docno")
        .agg(runs=pl.len().cast(pl.UInt32), best_rank=pl.col("rank").min())
        .sort("qid", "docno")
        .cast(POOL_SCHEMA)
    )
