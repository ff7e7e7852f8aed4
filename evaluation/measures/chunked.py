"""Scoring a run given in chunks of whole topics, for runs too large to hold whole.

    evaluate_in_chunks(qrels, chunks, ["all_trec"], Options())  -> the Evaluation `evaluate`
                                                                   gives for the whole run

Every trec_eval measure's per-topic value depends on that topic's lines and judgments alone,
so each chunk is scored on its own (scoring.evaluate, with the judgments of its topics) and
the per-topic rows are put together in trec_eval's topic order. The "all" values are then
computed from those rows exactly as scoring.evaluate computes them (its ``_mean``, in topic
order), so the numbers are the same to the last bit. With `-c`, the judged topics no chunk
holds are scored next to one topic of the run (9.0.8 refuses to score missing topics alone),
and only their rows are kept.

Only requests the trec_eval engine scores in one group can be chunked (``can_chunk``): the
measures in trec_eval's dialect and the ir_measures names that map to them with the
request's own options. Measures with options of their own (``P(rel=2)@5``, judged-only
variants) and our own (ERR, RBP) are computed over the whole run by grouped.evaluate. Pure.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

import polars as pl

from . import scoring
from .catalog import DEFAULT_MEASURES, Options
from .grouped import _engine_specs, _plan

__all__ = ["can_chunk", "evaluate_in_chunks"]

_DEFAULT_OPTIONS = Options()
_SCORERS = 2  # chunks scored at once: two cores


def _engine_request(measures: Sequence[str] | str, options: Options) -> list[str] | None:
    """The engine's specs when the request is scored by it in one group, else None."""
    groups = _plan(measures, options)
    main = groups.pop((options.relevance_level, None, False, None))
    if groups or any(r.ours is not None for r in main):
        return None
    return _engine_specs(main, keep_trec_rule=True)


def can_chunk(measures: Sequence[str] | str, options: Options = _DEFAULT_OPTIONS) -> bool:
    """Whether evaluate_in_chunks can score this request (ValueError for bad names)."""
    return _engine_request(measures, options) is not None


def evaluate_in_chunks(
    qrels: pl.DataFrame,
    chunks: Iterable[pl.DataFrame],
    measures: Sequence[str] | str = DEFAULT_MEASURES,
    options: Options = _DEFAULT_OPTIONS,
    *,
    zscores: pl.DataFrame | None = None,
) -> scoring.Evaluation:
    """What ``evaluate(qrels, whole_run, measures, options)`` returns, from ``chunks``: frames
    with the run's columns (qid, docno, score) that together hold the run, each topic's lines
    all in one chunk. ValueError as evaluate, and when ``can_chunk`` is False."""
    specs = _engine_request(measures, options)
    if specs is None:
        raise ValueError("these measures cannot be scored in chunks: score the whole run")
    # The checks evaluate makes on the whole qrels (a chunk only sees its topics' judgments).
    scoring._checked_frames(qrels, pl.DataFrame(schema=_RUN_SCHEMA), options)
    judged = qrels.get_column("qid").unique()
    scored: collections.deque = collections.deque()  # chunks being scored, in order
    parts: list[scoring.Evaluation] = []
    last_chunk: pl.DataFrame | None = None  # its last topic's lines: -c's anchor (below)
    empty: pl.DataFrame | None = None
    seen: list[pl.Series] = []
    # Chunks are scored on two threads (numpy and polars mostly run without the interpreter
    # lock), so that both cores score once the file is read, while this one takes the next.
    with ThreadPoolExecutor(max_workers=_SCORERS, thread_name_prefix="score") as pool:
        try:
            for chunk in chunks:
                # Chunks come in topic blocks: few runs of equal qids, usually all judged.
                topics = chunk.get_column("qid").rle().struct.field("value").unique()
                if not topics.is_in(judged.implode()).all():
                    chunk = chunk.filter(pl.col("qid").is_in(judged.implode()))
                    topics = topics.filter(topics.is_in(judged.implode()))
                if empty is None:
                    empty = chunk.head(0)
                if not chunk.height:
                    continue
                seen.append(topics)
                chunk_qrels = qrels.filter(pl.col("qid").is_in(topics.implode()))
                scored.append(
                    pool.submit(
                        scoring.evaluate, chunk_qrels, chunk, specs, options, zscores=zscores
                    )
                )
                last_chunk = chunk
                del chunk, chunk_qrels
                while len(scored) > _SCORERS or (scored and scored[0].done()):
                    parts.append(scored.popleft().result())
            while scored:
                parts.append(scored.popleft().result())
        finally:
            for future in scored:
                future.cancel()
    if not parts:
        # No run topic is judged: whatever the whole run gives (an error, or with 10.0's -c
        # every judged topic scored as missing), an empty run gives.
        run = empty if empty is not None else pl.DataFrame(schema=_RUN_SCHEMA)
        return scoring.evaluate(qrels, run, specs, options, zscores=zscores)
    unseen = judged.filter(~judged.is_in(pl.concat(seen).implode()))
    if options.complete and unseen.len():
        # The lines of one judged topic, next to which the missing ones are scored.
        anchor = last_chunk.filter(pl.col("qid") == last_chunk.get_column("qid")[-1])
        anchored = pl.concat([unseen, anchor.get_column("qid").head(1)])
        both = scoring.evaluate(
            qrels.filter(pl.col("qid").is_in(anchored.implode())),
            anchor,
            specs,
            options,
            zscores=zscores,
        )
        parts.append(_only(both, unseen))
    return _joined(parts, qrels, options)


_RUN_SCHEMA = {"qid": pl.String, "docno": pl.String, "score": pl.Float64}


def _only(evaluation: scoring.Evaluation, topics: pl.Series) -> scoring.Evaluation:
    keep = pl.col("qid").is_in(topics.implode())
    strings = evaluation.strings
    return scoring.Evaluation(
        measures=evaluation.measures,
        per_topic=evaluation.per_topic.filter(keep),
        means={},
        options=evaluation.options,
        missing_topics=evaluation.missing_topics,
        runid_requested=evaluation.runid_requested,
        strings=None if strings is None else strings.filter(keep),
        line_order=evaluation.line_order,
        zscored=evaluation.zscored,
    )


def _joined(
    parts: list[scoring.Evaluation], qrels: pl.DataFrame, options: Options
) -> scoring.Evaluation:
    """The parts' rows in trec_eval's topic order (qid in byte order, as evaluate sorts
    them) and the "all" values computed from them as evaluate computes them."""
    first = parts[0]
    per_topic = pl.concat([part.per_topic for part in parts]).sort("qid")
    strings = None
    if first.strings is not None:
        strings = pl.concat([part.strings for part in parts]).sort("qid")
    missing_topics = sorted(
        (qid for part in parts for qid in part.missing_topics), key=lambda qid: qid.encode()
    )
    missing = per_topic.get_column("qid").is_in(
        pl.Series(missing_topics, dtype=pl.String).implode()
    )
    missing = missing.to_numpy()
    means = {
        name: scoring._mean(name, per_topic.get_column(name).to_numpy(), missing, options)
        for name in first.measures
    }
    if options.complete and "num_rel" in means:
        means["num_rel"] = float((qrels.get_column("grade") > 0).sum())
    return scoring.Evaluation(
        measures=list(first.measures),
        per_topic=per_topic,
        means=means,
        options=options,
        missing_topics=tuple(missing_topics),
        runid_requested=first.runid_requested,
        strings=strings,
        line_order=first.line_order,
        zscored=first.zscored,
    )
