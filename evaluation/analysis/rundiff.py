"""How differently two runs rank each topic: rank-biased overlap, tau-AP, and a per-topic
summary of what changed (pure: polars and numpy, no Django).

Rankings are a run's top lists as evaluation.analysis.topk makes them (trec_eval's order: score
descending, ties by docno descending), as frames (qid, rank, docno[, grade]) with ranks
1..n per topic. ``a`` is the reference run (the baseline), ``b`` the other one.

Rank-biased overlap (Webber, Moffat & Zobel, "A similarity measure for indefinite
rankings", TOIS 2010), extrapolated, equation 32, for lists S (length s) and L (length
l >= s) cut at the page's depth::

    RBO_ext = (1-p)/p * ( sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d )
              + ( (X_l - X_s)/l + X_s/s ) p^l

where X_d is the overlap at depth d, |S[:d] ∩ L[:d]| (beyond s, S counts whole). The
persistence p is the probability that a reader looking at rank d goes on to rank d + 1;
with p = 0.9 (DEFAULT_P) the first 10 ranks carry 86% of the weight. RBO_ext is 1 for
identical lists, 0 for disjoint ones, symmetric in its two lists; two empty lists are
identical (1), one empty list against a non-empty one disjoint (0).

tau-AP (Yilmaz, Aslam & Robertson, "A new rank correlation coefficient for information
retrieval", SIGIR 2008) of ``b`` against the reference ``a``, over the n documents both
lists hold, ordered as ``b`` orders them::

    tau_AP = 2/(n-1) * sum_{i=2..n} C(i)/(i-1) - 1

where C(i) counts the documents above the i-th that ``a`` also ranks above it. It is 1 when
the two orders agree, -1 when one reverses the other, weights disagreements near the top of
``b`` more, and is not symmetric. With fewer than two documents in common it is undefined
(NaN), and such topics count as the most different when topics are ordered by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = [
    "DEFAULT_P",
    "ORDERS",
    "SideBySide",
    "diff_topics",
    "order_topics",
    "rbo_ext",
    "side_by_side",
    "tau_ap",
    "topic_similarity",
]

DEFAULT_P = 0.9
ORDERS = ("measure", "tau_ap", "rbo")  # how the diff orders topics


def _check_p(p: float) -> None:
    if not isinstance(p, int | float) or isinstance(p, bool) or not 0.0 < p < 1.0:
        raise ValueError(f"the persistence p must be a number strictly between 0 and 1, got {p!r}")


def _frame(ranking: Sequence[str], qid: str = "q") -> pl.DataFrame:
    docnos = list(ranking)
    if len(set(docnos)) != len(docnos):
        raise ValueError("a ranking lists each document once")
    return pl.DataFrame(
        {"qid": [qid] * len(docnos), "rank": range(1, len(docnos) + 1), "docno": docnos},
        schema={"qid": pl.String, "rank": pl.Int64, "docno": pl.String},
    )


def rbo_ext(a: Sequence[str], b: Sequence[str], p: float = DEFAULT_P) -> float:
    """RBO_ext of two rankings (documents, best first, each once): see the module's doc.
    The same arithmetic as topic_similarity's (_rbo_matrix) for one topic, without building
    and joining frames: the bootstraps of ranking_agreement call it for every draw."""
    _check_p(p)
    a, b = list(a), list(b)
    for ranking in (a, b):
        if len(set(ranking)) != len(ranking):
            raise ValueError("a ranking lists each document once")
    if not a and not b:
        return 1.0
    rank_b = {docno: rank for rank, docno in enumerate(b, start=1)}
    deepest = [max(rank, rank_b[d]) for rank, d in enumerate(a, start=1) if d in rank_b]
    value = _rbo_matrix(
        np.zeros(len(deepest), dtype=np.int64),
        np.array(deepest, dtype=np.int64),
        np.array([len(a)], dtype=np.int64),
        np.array([len(b)], dtype=np.int64),
        p,
    )
    return float(value[0])


def tau_ap(reference: Sequence[str], other: Sequence[str]) -> float:
    """tau-AP of ``other`` against ``reference`` over the documents both hold (NaN when fewer
    than two): see the module's doc."""
    table = topic_similarity(_frame(reference), _frame(other))
    if table.height == 0:
        return float("nan")
    return float(table["tau_ap"][0])


def _joined(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """Every document of either list: qid, docno, rank_a, rank_b (null when absent)."""
    left = a.select("qid", "docno", pl.col("rank").alias("rank_a"))
    right = b.select("qid", "docno", pl.col("rank").alias("rank_b"))
    return left.join(right, on=["qid", "docno"], how="full", coalesce=True)


def topic_similarity(a: pl.DataFrame, b: pl.DataFrame, *, p: float = DEFAULT_P) -> pl.DataFrame:
    """Per topic of either frame (qid byte order): len_a, len_b, common, rbo, tau_ap."""
    _check_p(p)
    joined = _joined(a, b)
    qids = joined.select(pl.col("qid").unique().sort()).get_column("qid")
    index = {qid: i for i, qid in enumerate(qids.to_list())}
    t = len(index)
    lengths = (
        joined.group_by("qid")
        .agg(
            pl.col("rank_a").max().fill_null(0).alias("len_a"),
            pl.col("rank_b").max().fill_null(0).alias("len_b"),
        )
        .sort("qid")
    )
    len_a = lengths.get_column("len_a").to_numpy().astype(np.int64)
    len_b = lengths.get_column("len_b").to_numpy().astype(np.int64)
    both = joined.filter(pl.col("rank_a").is_not_null() & pl.col("rank_b").is_not_null())
    rows = np.array([index[q] for q in both.get_column("qid").to_list()], dtype=np.int64)
    rank_a = both.get_column("rank_a").to_numpy().astype(np.int64)
    rank_b = both.get_column("rank_b").to_numpy().astype(np.int64)
    common = np.bincount(rows, minlength=t) if t else np.zeros(0, dtype=np.int64)
    rbo = _rbo_matrix(rows, np.maximum(rank_a, rank_b), len_a, len_b, p)
    tau = _tau_ap_matrix(rows, rank_a, rank_b, common)
    return pl.DataFrame(
        {
            "qid": qids,
            "len_a": len_a,
            "len_b": len_b,
            "common": common.astype(np.int64),
            "rbo": rbo,
            "tau_ap": tau,
        },
        schema={
            "qid": pl.String,
            "len_a": pl.Int64,
            "len_b": pl.Int64,
            "common": pl.Int64,
            "rbo": pl.Float64,
            "tau_ap": pl.Float64,
        },
    )


def _rbo_matrix(rows, deepest, len_a, len_b, p) -> np.ndarray:
    """RBO_ext per topic. A document in both lists joins the overlap at the depth where the
    later of its two ranks is reached, so X_d is a cumulative count of those depths."""
    t = len(len_a)
    if t == 0:
        return np.zeros(0)
    longest = int(max(len_a.max(), len_b.max(), 1))
    overlap = np.zeros((t, longest + 1))
    np.add.at(overlap, (rows, deepest), 1.0)
    overlap = np.cumsum(overlap, axis=1)  # overlap[:, d] = X_d, X_0 = 0
    s = np.minimum(len_a, len_b)
    l_ = np.maximum(len_a, len_b)
    d = np.arange(longest + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.where(d > 0, np.power(p, d) / np.where(d > 0, d, 1.0), 0.0)
        upto_l = d[None, :] <= l_[:, None]
        first = (overlap * weight[None, :] * upto_l).sum(axis=1)
        x_s = overlap[np.arange(t), s]
        x_l = overlap[np.arange(t), l_]
        beyond_s = (d[None, :] > s[:, None]) & upto_l
        safe_s = np.where(s > 0, s, 1).astype(float)
        second = x_s * (
            ((d[None, :] - s[:, None]) / safe_s[:, None]) * weight[None, :] * beyond_s
        ).sum(axis=1)
        safe_l = np.where(l_ > 0, l_, 1).astype(float)
        tail = ((x_l - x_s) / safe_l + x_s / safe_s) * np.power(p, l_)
        value = (1 - p) / p * (first + second) + tail
    value = np.where(s == 0, 0.0, value)
    value = np.where((len_a == 0) & (len_b == 0), 1.0, value)
    return np.clip(value, 0.0, 1.0)


_TAU_BLOCK = 2_000_000  # cells of the comparison matrix held at once


def _tau_ap_matrix(rows, rank_a, rank_b, common) -> np.ndarray:
    """tau-AP per topic over the common documents: a topics × n matrix of reference ranks in
    b's order (padded with +inf, which is never below a real rank), C(i) counted column by
    column, in blocks of topics to bound memory."""
    t = len(common)
    tau = np.full(t, np.nan)
    if t == 0 or rows.size == 0:
        return tau
    width = int(common.max())
    order = np.lexsort((rank_b, rows))
    rows, rank_a = rows[order], rank_a[order]
    starts = np.concatenate(([0], np.cumsum(common)[:-1]))
    column = np.arange(rows.size) - starts[rows]
    reference = np.full((t, width), np.inf)
    reference[rows, column] = rank_a
    defined = common >= 2
    block = max(1, _TAU_BLOCK // max(width, 1) // max(width, 1) + 1)
    above = np.zeros((t, width))
    for start in range(0, t, block):
        part = reference[start : start + block]
        for i in range(1, width):
            above[start : start + block, i] = (part[:, :i] < part[:, i : i + 1]).sum(axis=1)
    i = np.arange(width, dtype=float)
    real = i[None, :] < common[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(real & (i[None, :] > 0), above / np.where(i > 0, i, 1.0)[None, :], 0.0)
        value = 2.0 / (common - 1) * share.sum(axis=1) - 1.0
    tau[defined] = value[defined]
    return tau


def diff_topics(a: pl.DataFrame, b: pl.DataFrame, *, k: int, p: float = DEFAULT_P) -> pl.DataFrame:
    """Per topic of either run (qid byte order), what changed from ``a`` to ``b`` in their
    lists (cut at the page's depth; frames with a grade column, null = unjudged):

    - len_a, len_b, common, rbo, tau_ap: as topic_similarity;
    - only_a, only_b: documents in one list only;
    - move, move_docno, move_from, move_to: the biggest rank move of a document in both
      lists (|rank_b - rank_a|, ties by docno), 0 / null when none moved;
    - entering: unjudged documents in b's top k that a's top k does not hold;
    - unjudged_a, unjudged_b: unjudged documents in each run's top k.
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    similarity = topic_similarity(a, b, p=p)
    grades = pl.concat(
        [a.select("qid", "docno", "grade"), b.select("qid", "docno", "grade")]
    ).unique(["qid", "docno"], keep="first")
    joined = _joined(a, b).join(grades, on=["qid", "docno"], how="left")
    in_a, in_b = pl.col("rank_a").is_not_null(), pl.col("rank_b").is_not_null()
    top_a = in_a & (pl.col("rank_a") <= k)
    top_b = in_b & (pl.col("rank_b") <= k)
    unjudged = pl.col("grade").is_null()
    moves = (
        joined.filter(in_a & in_b)
        .with_columns((pl.col("rank_b") - pl.col("rank_a")).abs().alias("move"))
        .sort(["qid", "move", "docno"], descending=[False, True, False])
        .group_by("qid", maintain_order=True)
        .first()
        .select(
            "qid",
            "move",
            pl.col("docno").alias("move_docno"),
            pl.col("rank_a").alias("move_from"),
            pl.col("rank_b").alias("move_to"),
        )
    )
    counts = joined.group_by("qid").agg(
        (in_a & ~in_b).sum().cast(pl.Int64).alias("only_a"),
        (in_b & ~in_a).sum().cast(pl.Int64).alias("only_b"),
        (top_b & ~top_a & unjudged).sum().cast(pl.Int64).alias("entering"),
        (top_a & unjudged).sum().cast(pl.Int64).alias("unjudged_a"),
        (top_b & unjudged).sum().cast(pl.Int64).alias("unjudged_b"),
    )
    table = similarity.join(counts, on="qid", how="left").join(moves, on="qid", how="left")
    return table.with_columns(
        pl.col("move").fill_null(0).cast(pl.Int64),
        pl.when(pl.col("move").fill_null(0) > 0).then(pl.col("move_docno")).alias("move_docno"),
    ).sort("qid")


def order_topics(table: pl.DataFrame, by: str, deltas: dict[str, float] | None = None) -> list[str]:
    """The qids of a diff_topics table, most different first: by ``measure`` the largest
    |delta| of the measure (``deltas``, qid -> b - a; topics without one last), by
    ``tau_ap`` or ``rbo`` the smallest value (an undefined tau-AP first). Ties by qid."""
    if by not in ORDERS:
        raise ValueError(f"order topics by one of {', '.join(ORDERS)}, not {by!r}")
    qids = table.get_column("qid").to_list()
    if by == "measure":
        deltas = deltas or {}
        missing = [q for q in qids if q not in deltas]
        known = sorted(
            (q for q in qids if q in deltas), key=lambda q: (-abs(deltas[q]), q.encode())
        )
        return known + sorted(missing, key=str.encode)
    values = table.get_column(by).to_numpy()
    key = np.where(np.isnan(values), -np.inf, values)
    return [qids[i] for i in sorted(range(len(qids)), key=lambda i: (key[i], qids[i].encode()))]


@dataclass(frozen=True)
class SideBySide:
    """One rank of a topic's two lists: each side's document (None past its end), its grade
    (None: unjudged), and its rank in the other list (None: only in this one)."""

    rank: int
    docno_a: str | None
    grade_a: int | None
    other_a: int | None
    docno_b: str | None
    grade_b: int | None
    other_b: int | None


def side_by_side(a: pl.DataFrame, b: pl.DataFrame, qid: str) -> list[SideBySide]:
    """Topic ``qid``'s two lists rank by rank, each document with its rank in the other."""
    left = a.filter(pl.col("qid") == qid).sort("rank")
    right = b.filter(pl.col("qid") == qid).sort("rank")
    rank_in_a = dict(zip(left["docno"].to_list(), left["rank"].to_list(), strict=True))
    rank_in_b = dict(zip(right["docno"].to_list(), right["rank"].to_list(), strict=True))
    docs_a = list(zip(left["docno"].to_list(), left["grade"].to_list(), strict=True))
    docs_b = list(zip(right["docno"].to_list(), right["grade"].to_list(), strict=True))
    rows = []
    for i in range(max(len(docs_a), len(docs_b))):
        docno_a, grade_a = docs_a[i] if i < len(docs_a) else (None, None)
        docno_b, grade_b = docs_b[i] if i < len(docs_b) else (None, None)
        rows.append(
            SideBySide(
                rank=i + 1,
                docno_a=docno_a,
                grade_a=grade_a,
                other_a=rank_in_b.get(docno_a) if docno_a is not None else None,
                docno_b=docno_b,
                grade_b=grade_b,
                other_b=rank_in_a.get(docno_b) if docno_b is not None else None,
            )
        )
    return rows
