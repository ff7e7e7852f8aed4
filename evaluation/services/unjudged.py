"""Unjudged documents: the pairs in runs' top k that a qrels version does not judge, and
sending them to a campaign's pool for judging.
"""

from __future__ import annotations

import gzip
import json

from evaluation import measures
from evaluation.analysis import topk
from evaluation.judging import SentToJudging, judging
from evaluation.models import QrelsVersion, Run, SearchRun
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


def send_unjudged_to_judging(
    *, campaign, pairs: list[tuple[str, str]], runs: list[Run] | None = None
) -> SentToJudging:
    """Add unjudged (qid, docno) pairs to a campaign's pool; pairs of topics the campaign
    lacks are left out and named. Documents a search endpoint returned in ``runs`` come with
    the title and text its mapping read, so the campaign can judge them (its own texts are
    never replaced). The judging side does it (evaluation.judging)."""
    documents = returned_documents(runs or [], {docno for _, docno in pairs})
    return judging().send_pairs(campaign, pairs, documents)


def returned_documents(runs: list[Run], docnos: set[str]) -> dict[str, tuple[str, str]]:
    """{docno: (title, text)} of ``docnos`` as the runs made from search endpoints returned
    them (the first run that has a document wins); empty for uploaded runs."""
    found: dict[str, tuple[str, str]] = {}
    made = SearchRun.objects.filter(run__in=[run.pk for run in runs]).exclude(documents="")
    for search_run in made.order_by("-started_at"):
        with search_run.documents.open("rb") as handle:
            lines = gzip.decompress(handle.read()).decode().splitlines()
        for line in lines:
            if not line:
                continue
            record = json.loads(line)
            if record["docno"] in docnos and record["docno"] not in found:
                found[record["docno"]] = (record["title"], record["text"])
    return found
