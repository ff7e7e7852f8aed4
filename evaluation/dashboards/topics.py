"""A topic's page: every scored run's values for one topic (read in the database), the top
k of the best runs with each document's grade, the ideal ranking, and document texts."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from django.db.models import F, Func, JSONField

from evaluation import services
from evaluation.analysis import topk
from evaluation.dashboards.runs import topic_queries
from evaluation.dashboards.scoring import (
    MAX_TOPIC_LISTS,
    Scoring,
    choose_k,
    choose_measure,
    scored,
)
from evaluation.judging import judging
from evaluation.models import QrelsEntry, Run


class TopicValues(Func):
    """``per_topic[qid]`` read in the database, so a topic page does not load every run's
    per-topic values. (Django's KeyTransform reads a key of digits, a common qid, as an
    array index.)"""

    output_field = JSONField()

    def __init__(self, qid: str):
        super().__init__(F("per_topic"))
        self.qid = qid

    @staticmethod
    def can_read(qid: str) -> bool:
        # SQLite's JSON path cannot quote these, nor match non-ASCII keys stored escaped
        # (Django writes JSON with ensure_ascii); such qids take the slow path.
        return qid.isascii() and not any(c in qid for c in '"\\')

    def as_sql(self, compiler, connection, **extra):  # SQLite
        column, params = compiler.compile(self.source_expressions[0])
        return f"JSON_EXTRACT({column}, %s)", (*params, f'$."{self.qid}"')

    def as_postgresql(self, compiler, connection, **extra):
        column, params = compiler.compile(self.source_expressions[0])
        return f"({column} -> %s)", (*params, self.qid)


@dataclass(frozen=True)
class RankedDocument:
    rank: int
    docno: str
    score: float
    grade: int | None  # None: unjudged


@dataclass
class TopicRun:
    run: Run
    values: dict[str, float] | None  # None: the run has no score for this topic
    value: float | None
    top: list[RankedDocument] | None = None  # None: not listed on the page

    @property
    def unjudged(self) -> int | None:
        return None if self.top is None else sum(1 for d in self.top if d.grade is None)


@dataclass
class TopicView:
    qid: str
    query: str
    scoring: Scoring
    measure: str
    k: int
    runs: list[TopicRun]  # best first; runs without a score for the topic last
    ideal: list[tuple[str, int]]
    grades: dict[int, int]  # grade -> judged documents of the topic
    listed: int  # runs whose top k is shown

    @property
    def judged(self) -> int:
        return sum(self.grades.values())


def build_topic(
    scoring: Scoring,
    qid: str,
    *,
    user,
    measure: str | None = None,
    k: int | None = None,
    run_ids: list[int] | None = None,
) -> TopicView:
    """Every scored run's values for topic ``qid`` (read from the stored per-topic values
    without loading them whole), the top k of up to MAX_TOPIC_LISTS runs (those chosen, else
    the best) with each document's grade, and the topic's ideal ranking; the query text from
    a campaign ``user`` leads (topic_queries). LookupError when neither the qrels nor any
    evaluation knows the topic."""
    measure = choose_measure(scoring.names, measure)
    k = choose_k(scoring.outputs[measure], k)
    evaluations = (
        scored(scoring)
        .select_related("run__system", "run__search")
        .defer("options", "intervals", "run__search__queries", "run__search__snapshot")
    )
    if TopicValues.can_read(qid):
        evaluations = evaluations.defer("per_topic").annotate(topic=TopicValues(qid))
    runs = []
    for evaluation in evaluations:
        values = evaluation.topic if hasattr(evaluation, "topic") else evaluation.per_topic.get(qid)
        values = values if isinstance(values, dict) else None
        runs.append(TopicRun(evaluation.run, values, values.get(measure) if values else None))
    runs.sort(key=lambda r: (r.value is None, -(r.value or 0.0), str(r.run)))
    judged = list(
        QrelsEntry.objects.filter(qrels=scoring.qrels, qid=qid).values_list("docno", "grade")
    )
    if not judged and not any(r.values for r in runs):
        raise LookupError(f"topic {qid} is neither in {scoring.qrels.label} nor in any run")
    grades: dict[int, int] = {}
    for _, grade in judged:
        grades[grade] = grades.get(grade, 0) + 1
    qrels = pl.DataFrame(
        [(qid, docno, grade) for docno, grade in judged],
        schema={"qid": pl.String, "docno": pl.String, "grade": pl.Int64},
        orient="row",
    )
    wanted = set(run_ids or [])
    listed = [r for r in runs if r.values and (not wanted or r.run.pk in wanted)]
    for topic_run in listed[:MAX_TOPIC_LISTS]:
        frame = services.load_run_topics(topic_run.run, [qid])
        options = scoring.options
        top = topk.top_k(frame, k, trec_eval_version=options.trec_eval_version, depth=options.depth)
        topic_run.top = [
            RankedDocument(rank, docno, score, grade)
            for _, rank, docno, score, grade in topk.with_grades(top, qrels).iter_rows()
        ]
    return TopicView(
        qid=qid,
        query=topic_queries(user, [qid]).get(qid, ""),
        scoring=scoring,
        measure=measure,
        k=k,
        runs=runs,
        ideal=topk.ideal_ranking(qrels, qid, k),
        grades=dict(sorted(grades.items())),
        listed=min(len(listed), MAX_TOPIC_LISTS),
    )


def find_document(user, docno: str, qid: str = ""):
    """A document with this docno and some text from a campaign ``user`` leads, preferring
    campaigns that have the topic ``qid``; None when none of them holds its text
    (evaluation.judging): another lead's campaign is never read."""
    return judging().find_document(user, docno, qid)
