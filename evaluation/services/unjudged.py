"""Unjudged documents: the pairs in runs' top k that a qrels version does not judge, and
sending them to a campaign's pool for judging.
"""

from __future__ import annotations

from evaluation import measures
from evaluation.analysis import topk
from evaluation.judging import SentToJudging, judging
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


def send_unjudged_to_judging(*, campaign, pairs: list[tuple[str, str]]) -> SentToJudging:
    """Add unjudged (qid, docno) pairs to a campaign's pool; pairs of topics the campaign
    lacks are left out and named. The judging side does it (evaluation.judging)."""
    return judging().send_pairs(campaign, pairs)
