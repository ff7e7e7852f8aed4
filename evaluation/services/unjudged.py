"""Unjudged documents: the pairs in runs' top k that a qrels version does not judge, and
sending them to a campaign's pool for judging.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluation import measures, topk
from evaluation.models import QrelsVersion, Run
from evaluation.services.qrels import cached_qrels_frame
from evaluation.services.runs import load_run_top, load_run_topics


def unjudged_top_k(
    *,
    runs: list[Run],
    qrels: QrelsVersion,
    k: int,
    options: measures.Options,
    qids: list[str] | None = None,
) -> list[tuple[str, str]]:
    """The (qid, docno) pairs in the runs' top k (trec_eval's order) that ``qrels`` does not
    judge, over ``qids`` or every topic of the runs; sorted, each once."""
    judged = cached_qrels_frame(qrels)
    pairs: set[tuple[str, str]] = set()
    for run in runs:
        version, depth = options.trec_eval_version, options.depth
        if qids is None:
            top = load_run_top(run, k, trec_eval_version=version, depth=depth)
        else:
            frame = load_run_topics(run, qids)
            top = topk.top_k(frame, k, trec_eval_version=version, depth=depth)
        pairs.update(topk.unjudged_pairs(topk.with_grades(top, judged)))
    return sorted(pairs)


@dataclass(frozen=True)
class SentToJudging:
    """What ``send_unjudged_to_judging`` did: pairs added to the pool, pairs it already had,
    and the topics left out because the campaign does not have them."""

    added: int
    already: int
    assigned: int
    missing_qids: list[str]
    left_out: int


def send_unjudged_to_judging(*, campaign, pairs: list[tuple[str, str]]) -> SentToJudging:
    """Add unjudged (qid, docno) pairs to a campaign's pool (annotation.services.add_pairs,
    source "unjudged"). Pairs of topics the campaign does not have are left out and their
    qids reported: a pool pair needs the campaign's topic."""
    from annotation import services as annotation  # annotation imports evaluation
    from annotation.models import PairSource

    topics = set(campaign.topics.values_list("qid", flat=True))
    kept = [(qid, docno) for qid, docno in pairs if qid in topics]
    missing = sorted({qid for qid, _ in pairs if qid not in topics})
    if not kept:
        return SentToJudging(0, 0, 0, missing, len(pairs))
    change = annotation.add_pairs(campaign=campaign, pairs=kept, source=PairSource.UNJUDGED)
    return SentToJudging(
        added=change.added,
        already=change.already,
        assigned=change.assigned,
        missing_qids=missing,
        left_out=len(pairs) - len(kept),
    )
