"""Scoring a run against a qrels version: the evaluation is stored once per (run, qrels,
options) and served again for the same inputs; dashboards add each measure's bootstrap
interval over topics.
"""

from __future__ import annotations

import time
from dataclasses import asdict

import numpy as np
from django.db import IntegrityError, transaction

from evaluation import measures, trec
from evaluation.analysis import significance
from evaluation.measures import specs
from evaluation.models import Evaluation, QrelsVersion, Run
from evaluation.services import runs
from evaluation.services.qrels import load_qrels_frame
from evaluation.services.runs import load_run_frame

# Bump when a change to evaluation/measures can change a number: cached evaluations are
# keyed on it and recomputed instead of served stale.
ENGINE_VERSION = "1"

# What dashboards score by default (issue "Evaluation dashboards", item 2).
DASHBOARD_MEASURES = ("ndcg_cut.1,3,5,10,20,100", "P.5,10", "map", "recip_rank", "judged.10")


def options_key(measure_specs: list[str], options: measures.Options) -> str:
    return specs.options_key(measure_specs, options, ENGINE_VERSION)


def evaluate_run(
    *,
    run: Run,
    qrels: QrelsVersion,
    measure_specs: list[str],
    options: measures.Options | None = None,
) -> Evaluation:
    """Score ``run`` against ``qrels``, or return the stored evaluation for the same inputs."""
    options = options or measures.Options()
    key = options_key(measure_specs, options)
    stored = Evaluation.objects.filter(run=run, qrels=qrels, options_key=key).first()
    if stored is not None:
        return stored
    started = time.perf_counter()
    result = _evaluate(load_qrels_frame(qrels), run, measure_specs, options)
    per_topic = {
        row["qid"]: {name: row[name] for name in result.measures}
        for row in result.per_topic.iter_rows(named=True)
    }
    try:
        with transaction.atomic():
            return Evaluation.objects.create(
                run=run,
                qrels=qrels,
                options_key=key,
                options={"measures": measure_specs, **asdict(options)},
                measures=result.measures,
                means=result.means,
                per_topic=per_topic,
                topic_count=result.per_topic.height,
                seconds=time.perf_counter() - started,
            )
    except IntegrityError:
        # Someone scored the same inputs meanwhile; theirs is the same numbers.
        return Evaluation.objects.get(run=run, qrels=qrels, options_key=key)


def _evaluate(qrels_frame, run: Run, measure_specs: list[str], options: measures.Options):
    """measures.evaluate on the stored run; a long one (runs.LARGE_RUN_LINES) is read and
    scored in chunks of whole topics when the measures allow it (the same numbers)."""
    if run.line_count >= runs.LARGE_RUN_LINES and measures.can_chunk(measure_specs, options):
        try:
            chunks = runs.iter_run_chunks(run)
            return measures.evaluate_in_chunks(qrels_frame, chunks, measure_specs, options)
        except trec.NotInTopicBlocks:
            pass  # a topic's lines are not consecutive: read the run whole
    return measures.evaluate(qrels_frame, load_run_frame(run), measure_specs, options)


# --- dashboards (issue "Evaluation dashboards") -------------------------------------------
# Leaderboards show each measure's mean with a 95% percentile bootstrap interval over topics.
# Intervals are computed once per evaluation and kept on its row; every row uses the same
# settings and seed, and topics in byte order, so the same evaluation always gets the same
# interval on SQLite and PostgreSQL (jsonb does not keep key order), on every page and in
# the API.

INTERVAL_LEVEL = 0.95
INTERVAL_SEED = 0


def describe_intervals() -> str:
    """How the intervals are made, in the leaderboard's words."""
    return (
        f"{INTERVAL_LEVEL:.0%} percentile bootstrap over topics "
        f"({significance.RESAMPLES:,} resamples, seed {INTERVAL_SEED})"
    )


def mean_measures(evaluation: Evaluation) -> list[str]:
    """The evaluation's measures whose mean is the mean over topics (what intervals and
    comparisons are computed for), in its order."""
    return [name for name in evaluation.measures if measures.is_mean(name)]


def topic_matrix(per_topic: dict, names: list[str]) -> tuple[list[str], np.ndarray]:
    """From an evaluation's ``per_topic``: its qids in byte order and a names × topics array."""
    qids = sorted(per_topic)
    matrix = np.array([[per_topic[qid][name] for qid in qids] for name in names], dtype=float)
    return qids, matrix.reshape(len(names), len(qids))


def ensure_intervals(evaluations: list[Evaluation]) -> None:
    """Fill ``intervals`` on the evaluations that lack them, with one vectorised bootstrap
    per topic count (significance.bootstrap_mean_interval on measures × topics), and save
    them. Reads the per-topic values of those evaluations only (one query)."""
    missing = [e for e in evaluations if not e.intervals and e.topic_count and mean_measures(e)]
    if not missing:
        return
    deferred = [e.pk for e in missing if "per_topic" in e.get_deferred_fields()]
    loaded = dict(Evaluation.objects.filter(pk__in=deferred).values_list("pk", "per_topic"))
    groups: dict[int, list[tuple[Evaluation, list[str], np.ndarray]]] = {}
    for evaluation in missing:
        per_topic = loaded.get(evaluation.pk)
        if per_topic is None:
            per_topic = evaluation.per_topic
        names = mean_measures(evaluation)
        qids, matrix = topic_matrix(per_topic, names)
        groups.setdefault(len(qids), []).append((evaluation, names, matrix))
    for rows in groups.values():
        # Rows of equal topic count draw the same resamples, so one call for all of them
        # gives each row the interval it would get alone.
        lows, highs = significance.bootstrap_mean_interval(
            np.vstack([matrix for _, _, matrix in rows]),
            resamples=significance.RESAMPLES,
            level=INTERVAL_LEVEL,
            seed=INTERVAL_SEED,
        )
        at = 0
        for evaluation, names, _ in rows:
            evaluation.intervals = {
                name: [float(lows[at + i]), float(highs[at + i])] for i, name in enumerate(names)
            }
            at += len(names)
    Evaluation.objects.bulk_update(missing, ["intervals"])


def score_run(
    *,
    run: Run,
    qrels: QrelsVersion,
    measure_specs: list[str],
    options: measures.Options | None = None,
) -> Evaluation:
    """``evaluate_run`` plus the evaluation's bootstrap intervals: what dashboards show."""
    evaluation = evaluate_run(run=run, qrels=qrels, measure_specs=measure_specs, options=options)
    ensure_intervals([evaluation])
    return evaluation
