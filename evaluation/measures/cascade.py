"""Measures that trec_eval does not have and ir_measures names: ERR@k, RR@k, Judged and RBP
(pure, vectorised over the judged documents' ranks, like scoring.py).

Notation as in scoring.py: g(i) the judged grade of the document at rank i = 1..num_ret
(unjudged documents and negative grades count as 0).

    ERR@k     = sum over i <= k of  R(i) / i * prod over j < i of (1 - R(j)),
                R(i) = (2^g(i) - 1) / 2^4                       (Chapelle et al., CIKM 2009)
                as gdeval.pl (TREC Web track, ir_measures' ERR provider) computes it: its
                highest grade is 4, and a qrels file with a higher grade is refused.
    RR@k      = 1 / the first rank i <= k with g(i) >= rel, or 0     (MS MARCO's MRR@10)
    Judged@k  = the judged documents (any grade, negative ones too) among the first k,
                divided by min(k, num_ret); without k, among all num_ret; 0 when nothing is
                retrieved                               (ir_measures' judged provider)
    RBP(p)    = (1 - p) * sum over i of  p^(i-1) * gain(i)           (Moffat & Zobel, 2008)
                without rel, gain(i) = g(i), the grade itself, over every retrieved
                document (trectools' graded RBP, which no default provider of ir_measures
                computes).
    RBP(rel=N) as cwl_eval computes it (ir_measures' provider for it): gain(i) = 1 if
                g(i) >= N else 0, over the first 1000 ranks, each weighed by the chance of
                examining it normalised over those 1000 ranks:
                    (1 - p) / (1 - p^1000) * sum over i <= 1000 of  p^(i-1) * gain(i)
                (the factor 1 / (1 - p^1000) shows from p = 0.97 on: 1.00000006).

Each measure ranks the run the way the program ir_measures hands it to does (its default
provider), so that equal scores are broken alike (ORDERS): gdeval (ERR) compares the
scores as doubles and breaks ties by docno descending; msmarco (RR@k) and judged (Judged)
by docno ascending; cwl_eval (RBP with rel) keeps tied documents in the run's line order.
Graded RBP keeps trec_eval's order (ranking.py: float32 scores in 9.0.8, docno descending).

Sums run in rank order, each term added in turn (as gdeval's loop does); the products of
ERR likewise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from .catalog import Options
from .dialects import MeasureRequest
from .ranking import ORDERS, JudgedRanking, QidBlocks, rank_in_order
from .scoring import Prepared, _checked_frames, _preparation_key
from .sequences import Events as _Events
from .sequences import _running
from .sequences import divide as _divide

__all__ = ["ERR_MAX_GRADE", "ORDERS", "RBP_MAX_RANK", "SCORERS", "score_ours"]

ERR_MAX_GRADE = 4  # gdeval.pl's $MAX_JUDGMENT
RBP_MAX_RANK = 1000  # cwl_eval's max_n, which ir_measures keeps


def score_ours(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    topics: pl.Series,
    requests: Sequence[MeasureRequest],
    options: Options,
    relevance_level: int,
    *,
    prepared: Prepared | None = None,
) -> list[np.ndarray]:
    """One array of per-topic values (in the order of `topics`) for each request, each one
    of ours (ERR, RR with a cutoff, RBP). `relevance_level` is RR's rel. `prepared`: the
    same frames as scoring.prepare made them for these options and `topics`, whose ranking
    (trec_eval's order) is reused."""
    rankings: dict = {}
    if prepared is None:
        qrels, run = _checked_frames(qrels, run, options)
        run_blocks = QidBlocks(run.get_column("qid"))
    else:
        same = _preparation_key(options) == _preparation_key(prepared.options)
        if not same or not prepared.topics.equals(topics):
            raise ValueError("these frames were prepared for other topics or options")
        qrels, run, run_blocks = prepared.qrels, prepared.run, prepared.run_blocks
        rankings[ORDERS["graded RBP"]] = prepared.ranking  # trec_eval's order

    def ranking(measure: str) -> JudgedRanking:
        order = ORDERS[measure]
        if order not in rankings:
            first = next(iter(rankings.values()), None)
            if first is not None and not first.tied:
                rankings[order] = first  # no judged document tied: every order agrees
            else:
                rankings[order] = _rank(qrels, run, run_blocks, topics, options, order)
        return rankings[order]

    n = topics.len()
    values = []
    for request in requests:
        scorer = SCORERS.get(request.ours)
        if scorer is None:
            raise ValueError(f"{request.spec!r} is not one of our measures")
        values.append(scorer(ranking, qrels, n, request, relevance_level))
    return values


def _score_err(ranking, qrels, n, request, relevance_level) -> np.ndarray:
    _check_err_grades(qrels, request)
    return expected_reciprocal_rank(ranking("ERR"), n, request.cutoff)


def _score_rr(ranking, qrels, n, request, relevance_level) -> np.ndarray:
    return reciprocal_rank(ranking("RR"), n, request.cutoff, relevance_level)


def _score_judged(ranking, qrels, n, request, relevance_level) -> np.ndarray:
    return judged_share(ranking("Judged"), n, request.cutoff)


def _score_rbp(ranking, qrels, n, request, relevance_level) -> np.ndarray:
    measure = "graded RBP" if request.rel is None else "RBP"
    return rank_biased_precision(ranking(measure), n, request.p, request.rel)


# Each family's `ours` (families.py) and its scorer: (the rankings in a provider's order, by
# measure; the qrels; the number of topics; the request; RR's relevance level) -> values.
SCORERS = {"ERR": _score_err, "RR": _score_rr, "Judged": _score_judged, "RBP": _score_rbp}


def _rank(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    run_blocks: QidBlocks,
    topics: pl.Series,
    options: Options,
    order: tuple[bool, str] | None,
) -> JudgedRanking:
    """The judged documents of `topics` ranked in a provider's order (ORDERS' values)."""
    index = pl.DataFrame({"qid": topics, "topic": np.arange(topics.len(), dtype=np.int64)})
    judgments = qrels.join(index, on="qid", how="inner", maintain_order="left")
    return rank_in_order(
        judgments.select("topic", "docno", "grade"),
        run,
        run_blocks,
        topics,
        order,
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


def judged_share(ranking: JudgedRanking, n: int, k: int | None) -> np.ndarray:
    """Judged@k: the share of the first k documents (all, without k) that are judged."""
    within = ranking.topic if k is None else ranking.topic[ranking.rank <= k]
    judged = np.bincount(within, minlength=n).astype(np.float64)
    shown = ranking.num_ret if k is None else np.minimum(ranking.num_ret, k)
    return _divide(judged, shown.astype(np.float64))


def rank_biased_precision(
    ranking: JudgedRanking, n: int, p: float, relevance_level: int | None
) -> np.ndarray:
    grade = ranking.grade
    if relevance_level is None:
        keep = grade > 0
        rank = ranking.rank[keep]
        events = _Events(ranking.topic[keep], rank, n)
        weight = np.power(p, (rank - 1).astype(np.float64))
        events.set_values(grade[keep].astype(np.float64) * weight)
        return (1.0 - p) * events.sum_first(None)
    keep = (grade >= 0) & (grade >= relevance_level) & (ranking.rank <= RBP_MAX_RANK)
    rank = ranking.rank[keep]
    events = _Events(ranking.topic[keep], rank, n)
    events.set_values(_cwl_rbp_weights(p)[rank - 1])
    return events.sum_first(None)


def _cwl_rbp_weights(p: float) -> np.ndarray:
    """cwl_eval's chance of examining ranks 1..1000: p^(i-1) normalised over its 1000 ranks,
    (1 - p) / (1 - p^1000) * p^(i-1), computed as it does (a running product) so the
    values agree to the last bits."""
    reach = np.ones(RBP_MAX_RANK)
    reach[1:] = np.cumprod(np.full(RBP_MAX_RANK - 1, p))
    first = 1.0 / np.sum(reach)
    weights = reach * first
    weights[0] = first
    return weights
