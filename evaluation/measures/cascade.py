"""Measures that trec_eval does not have and ir_measures names: ERR@k, RR@k and RBP (pure,
vectorised over the judged documents' ranks, like scoring.py).

Notation as in scoring.py: the run's documents in trec_eval's order (ranking.py: score
descending, then docno descending) at ranks i = 1..num_ret; g(i) the judged grade of the
document at rank i (unjudged documents and negative grades count as 0).

    ERR@k     = sum over i <= k of  R(i) / i * prod over j < i of (1 - R(j)),
                R(i) = (2^g(i) - 1) / 2^4                       (Chapelle et al., CIKM 2009)
                as gdeval.pl (TREC Web track, ir_measures' ERR provider) computes it: its
                highest grade is 4, and a qrels file with a higher grade is refused.
    RR@k      = 1 / the first rank i <= k with g(i) >= rel, or 0     (MS MARCO's MRR@10)
    RBP(p)    = (1 - p) * sum over i of  p^(i-1) * gain(i)           (Moffat & Zobel, 2008)
                gain(i) = 1 if g(i) >= rel else 0 with rel=N (cwl_eval's binary RBP, what
                ir_measures computes for RBP(rel=N)); without rel, gain(i) = g(i), the grade
                itself (trectools' graded RBP, ir_measures' provider for RBP without rel).
                Every retrieved document counts: cwl_eval stops at rank 1000 (a difference
                of at most p^1000 when a topic has more than 1000 documents).

Sums run in rank order, each term added in turn (as gdeval's loop does); the products of
ERR likewise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from .catalog import Options
from .dialects import MeasureRequest
from .ranking import JudgedRanking, QidBlocks, rank_judged_documents
from .scoring import _checked_frames
from .sequences import Events as _Events
from .sequences import _running
from .sequences import divide as _divide

__all__ = ["ERR_MAX_GRADE", "score_ours"]

ERR_MAX_GRADE = 4  # gdeval.pl's $MAX_JUDGMENT


def score_ours(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    topics: pl.Series,
    requests: Sequence[MeasureRequest],
    options: Options,
    relevance_level: int,
) -> list[np.ndarray]:
    """One array of per-topic values (in the order of `topics`) for each request, each one
    of ours (ERR, RR with a cutoff, RBP). `relevance_level` is RR's rel."""
    qrels, run = _checked_frames(qrels, run, options)
    ranking = _rank(qrels, run, topics, options)
    n = topics.len()
    values = []
    for request in requests:
        if request.ours == "ERR":
            _check_err_grades(qrels, request)
            values.append(expected_reciprocal_rank(ranking, n, request.cutoff))
        elif request.ours == "RR":
            values.append(reciprocal_rank(ranking, n, request.cutoff, relevance_level))
        elif request.ours == "RBP":
            values.append(rank_biased_precision(ranking, n, request.p, request.rel))
        else:
            raise ValueError(f"{request.spec!r} is not one of our measures")
    return values


def _rank(qrels: pl.DataFrame, run: pl.DataFrame, topics: pl.Series, options: Options):
    index = pl.DataFrame({"qid": topics, "topic": np.arange(topics.len(), dtype=np.int64)})
    judgments = qrels.join(index, on="qid", how="inner", maintain_order="left")
    return rank_judged_documents(
        judgments.select("topic", "docno", "grade"),
        run,
        QidBlocks(run.get_column("qid")),
        topics,
        trec_eval_version=options.trec_eval_version,
        depth=options.depth,
    )


def _check_err_grades(qrels: pl.DataFrame, request: MeasureRequest) -> None:
    if qrels.height and qrels.get_column("grade").max() > ERR_MAX_GRADE:
        top = qrels.get_column("grade").max()
        raise ValueError(
            f"'{request.spec}': ERR follows gdeval, whose grades go up to {ERR_MAX_GRADE}; "
            f"the qrels have grade {top}"
        )


def expected_reciprocal_rank(ranking: JudgedRanking, n: int, k: int) -> np.ndarray:
    keep = (ranking.grade > 0) & (ranking.rank <= k)
    grade = ranking.grade[keep].astype(np.int64)
    rank = ranking.rank[keep]
    events = _Events(ranking.topic[keep], rank, n)
    r = (np.left_shift(np.int64(1), grade) - 1).astype(np.float64) / float(2**ERR_MAX_GRADE)
    # The chance of reaching each document: the product of (1 - R) over the topic's earlier
    # documents (documents of grade 0 multiply it by 1, so they can be left out).
    through = _running(1.0 - r, events.position, np.multiply)
    reached = np.ones_like(r)
    later = events.position > 1
    reached[later] = through[np.flatnonzero(later) - 1]
    events.set_values(r * reached / rank)
    return events.sum_first(None)


def reciprocal_rank(ranking: JudgedRanking, n: int, k: int, relevance_level: int) -> np.ndarray:
    relevant = (ranking.grade >= 0) & (ranking.grade >= relevance_level) & (ranking.rank <= k)
    events = _Events(ranking.topic[relevant], ranking.rank[relevant], n)
    first = events.first(events.rank.astype(np.float64), np.ones(n, dtype=np.int64))
    return _divide(np.where(first > 0, 1.0, 0.0), first)


def rank_biased_precision(
    ranking: JudgedRanking, n: int, p: float, relevance_level: int | None
) -> np.ndarray:
    grade = ranking.grade
    if relevance_level is None:
        keep = grade > 0
        gain = grade[keep].astype(np.float64)
    else:
        keep = (grade >= 0) & (grade >= relevance_level)
        gain = np.ones(int(keep.sum()))
    rank = ranking.rank[keep]
    events = _Events(ranking.topic[keep], rank, n)
    events.set_values(gain * np.power(p, (rank - 1).astype(np.float64)))
    return (1.0 - p) * events.sum_first(None)
