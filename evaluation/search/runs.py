"""A query set becomes a run: each topic asked of the endpoint (a few at a time), each
outcome kept (its hits, or its failure: never an empty list in place of an error), and the
hits written as a TREC run file that the ordinary import reads, as if uploaded.

    outcomes = ask_topics(client, topics, k=100, concurrency=4)
    text = run_text(outcomes, tag="bm25-live")

No Django here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from evaluation.search.client import SearchClient, SearchError
from evaluation.search.kinds import Topic
from evaluation.search.mapping import Hit


@dataclass(frozen=True)
class Outcome:
    """One topic's answer: ``hits`` when it was answered (maybe none), else ``error``."""

    qid: str
    seconds: float
    attempts: int
    hits: list[Hit] = field(default_factory=list)
    error: str = ""  # the failure's message, "" when answered
    error_kind: str = ""
    status: int | None = None
    scores_from: str = ""
    duplicates: int = 0

    @property
    def failed(self) -> bool:
        return bool(self.error_kind)

    def provenance(self) -> dict:
        """What the run's provenance keeps of it (no document texts)."""
        record = {
            "qid": self.qid,
            "seconds": round(self.seconds, 4),
            "attempts": self.attempts,
            "hits": len(self.hits),
        }
        if self.failed:
            record.update(error=self.error, error_kind=self.error_kind, status=self.status)
        else:
            record.update(scores_from=self.scores_from, duplicates=self.duplicates)
        return record


def ask_topic(client: SearchClient, topic: Topic, *, k: int) -> Outcome:
    try:
        result = client.search(topic, k=k)
    except SearchError as error:
        return Outcome(
            qid=topic.qid,
            seconds=0.0,
            attempts=error.attempts,
            error=str(error),
            error_kind=error.kind,
            status=error.status,
        )
    return Outcome(
        qid=topic.qid,
        seconds=result.seconds,
        attempts=result.attempts,
        hits=result.mapped.hits,
        scores_from=result.mapped.scores_from,
        duplicates=result.mapped.duplicates,
    )


def ask_topics(
    client: SearchClient,
    topics: Iterable[Topic],
    *,
    k: int,
    concurrency: int,
    on_outcome: Callable[[Outcome], None] = lambda outcome: None,
) -> list[Outcome]:
    """Every topic asked, ``concurrency`` at a time (the outbound policy bounds the whole
    process besides); outcomes in the topics' order. ``on_outcome`` sees each as it comes."""
    topics = list(topics)
    if concurrency < 1:
        raise ValueError("the concurrency must be at least 1")
    results: dict[int, Outcome] = {}
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="search") as pool:
        futures = {pool.submit(ask_topic, client, topic, k=k): n for n, topic in enumerate(topics)}
        for future in futures:  # in submission order; each waits for its own
            outcome = future.result()
            results[futures[future]] = outcome
            on_outcome(outcome)
    return [results[n] for n in range(len(topics))]


def run_text(outcomes: Iterable[Outcome], *, tag: str) -> bytes:
    """The answered topics' hits as TREC run lines (``qid Q0 docno rank score tag``), each
    topic's hits in the engine's order; failed topics have no lines (the provenance names
    them)."""
    lines = []
    for outcome in outcomes:
        for rank, hit in enumerate(outcome.hits, 1):
            lines.append(f"{outcome.qid} Q0 {hit.docno} {rank} {hit.score!r} {tag}\n")
    return "".join(lines).encode()


def documents_jsonl(outcomes: Iterable[Outcome]) -> bytes:
    """Each returned document's mapped title and text, once per docno (the first topic that
    returned it), one JSON object a line: what sending it to judging adds."""
    seen: set[str] = set()
    lines = []
    for outcome in outcomes:
        for hit in outcome.hits:
            if hit.docno in seen or not (hit.title or hit.text):
                continue
            seen.add(hit.docno)
            lines.append(json.dumps({"docno": hit.docno, "title": hit.title, "text": hit.text}))
    return ("\n".join(lines) + "\n" if lines else "").encode()
