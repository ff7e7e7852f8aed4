"""A run's page: its per-topic values of one measure, worst first, with the unjudged
documents of each topic's top k and the data of its charts."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evaluation import measures, services
from evaluation.analysis import topk
from evaluation.dashboards.scoring import (
    HISTOGRAM_BINS,
    NotScored,
    Scoring,
    choose_k,
    choose_measure,
    scored,
)
from evaluation.judging import judging
from evaluation.models import Evaluation, Run


@dataclass(frozen=True)
class TopicRow:
    qid: str
    value: float
    unjudged: int  # documents of the top k without a grade in the qrels
    retrieved: int  # documents in the top k (fewer than k when the run returned fewer)
    query: str = ""


@dataclass
class RunTopics:
    run: Run
    scoring: Scoring
    evaluation: Evaluation
    measure: str
    k: int
    rows: list[TopicRow]  # worst first
    values: dict[str, dict[str, float]] = field(repr=False)  # the per-topic values
    unjudged_docnos: dict[str, list[str]] = field(repr=False)  # per topic, in rank order

    def chart(self) -> dict:
        """Per-topic values sorted ascending, and their histogram over [0, 1]."""
        ordered = sorted(self.rows, key=lambda row: (row.value, row.qid))
        counts, edges = np.histogram(
            [row.value for row in ordered], bins=HISTOGRAM_BINS, range=(0.0, 1.0)
        )
        return {
            "measure": measures.display_name(self.measure),
            "qids": [row.qid for row in ordered],
            "values": [row.value for row in ordered],
            "bins": [float(edge) for edge in edges[:-1]],
            "counts": [int(count) for count in counts],
            "width": 1.0 / HISTOGRAM_BINS,
        }

    @property
    def unjudged_total(self) -> int:
        return sum(row.unjudged for row in self.rows)


def build_run_topics(
    run: Run, scoring: Scoring, *, measure: str | None = None, k: int | None = None
) -> RunTopics:
    """The run's per-topic values of one measure, worst first, with the unjudged documents
    of each topic's top k (k defaults to the measure's cutoff). NotScored if the run has no
    evaluation with this scoring."""
    evaluation = scored(scoring, trials=True).filter(run=run).first()
    if evaluation is None:
        raise NotScored([run])
    measure = choose_measure(scoring.names, measure)
    k = choose_k(scoring.outputs[measure], k)
    options = scoring.options
    top = services.load_run_top(
        run, k, trec_eval_version=options.trec_eval_version, depth=options.depth
    )
    graded = topk.with_grades(top, services.cached_qrels_frame(scoring.qrels))
    unjudged: dict[str, list[str]] = {}
    for qid, docno in topk.unjudged_pairs(graded):  # in rank order
        unjudged.setdefault(qid, []).append(docno)
    retrieved = dict(graded.group_by("qid").len().iter_rows())
    rows = sorted(
        (
            TopicRow(qid, values[measure], len(unjudged.get(qid, ())), retrieved.get(qid, 0))
            for qid, values in evaluation.per_topic.items()
        ),
        key=lambda row: (row.value, row.qid.encode()),
    )
    return RunTopics(run, scoring, evaluation, measure, k, rows, evaluation.per_topic, unjudged)


def with_queries(rows: list[TopicRow], *, user) -> list[TopicRow]:
    """The rows with the query text of a topic of the same qid in a campaign ``user`` leads
    (the newest such campaign's), where one exists. One query."""
    queries = topic_queries(user, [row.qid for row in rows])
    return [TopicRow(r.qid, r.value, r.unjudged, r.retrieved, queries.get(r.qid, "")) for r in rows]


def topic_queries(user, qids: list[str]) -> dict[str, str]:
    """{qid: query text} of the topics with these qids in the campaigns ``user`` leads
    (evaluation.judging): a topic of another lead's campaign is neither shown nor changes
    how a qid reads."""
    return judging().topic_queries(user, qids)
