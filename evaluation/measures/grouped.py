"""Scoring a request that names measures in either dialect, some with options of their own.

    evaluate(qrels, run, ["ndcg_cut.10", "nDCG@20", "P(rel=2)@5", "ERR@20"], Options())

Measures are grouped by the options they are scored with (relevance level, nDCG gains,
judged documents only): the group of the request's own options, whose values keep their
trec_eval output names (ndcg_cut_10, ndcg_cut_20: `-m P@5` and `-m P.5` are one column),
and one group per other option set, whose values are named by their ir_measures names
(P(rel=2)@5). Each group is scored by the trec_eval engine once (scoring.py, vectorised),
plus our own measures (cascade.py) when the group has any. Topics are the request's: a
measure scored over judged documents only is 0 on a topic none of whose retrieved documents
is judged, as trec_eval -J gives.

Within a group, ir_measures names add their cutoffs to the trec_eval measure's cutoff list
(`-m P.5 -m P@10` scores P_5 and P_10), while trec_eval names keep trec_eval's rule (the
first cutoff list given for a measure wins: `-m P.5 -m P.10` scores P_5 alone).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import polars as pl

from evaluation.analysis import topk

from . import catalog, scoring
from .cascade import score_ours
from .catalog import DEFAULT_MEASURES, Options
from .dialects import FAMILIES, MeasureRequest, parse_request
from .families import Family, by_trec_name
from .inputs import check_measures
from .judged_lookup import few

__all__ = ["Output", "evaluate", "output_names", "outputs", "parse_requests"]

_DEFAULT_OPTIONS = Options()
_SUMS = frozenset({"num_ret", "num_rel", "num_rel_ret"})
# trec_eval measures whose cutoffs ir_measures names add to (ndcg_cut for nDCG@10).
_CUTOFF_FAMILIES = frozenset(f.trec for f in FAMILIES.values() if f.trec and f.cutoff != "none")


def parse_requests(specs: Sequence[str] | str) -> list[MeasureRequest]:
    """Every measure of a request, in either dialect; ValueError names the first bad one.
    trec_eval names are checked with trec_eval's rules (catalog.parse_measures)."""
    if isinstance(specs, str):
        specs = [specs]
    requests = [parse_request(spec) for spec in specs]
    if not requests:
        raise ValueError("no measure requested")
    trec_specs = [r.trec for r in requests if r.trec is not None]
    if trec_specs:
        catalog.parse_measures(trec_specs)
    return requests


def evaluate(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    measures: Sequence[str] | str = DEFAULT_MEASURES,
    options: Options = _DEFAULT_OPTIONS,
    *,
    zscores: pl.DataFrame | None = None,
) -> scoring.Evaluation:
    """Score `run` against `qrels` for measures named in either dialect (see the module).

    The result is scoring.Evaluation: `measures` lists the request's own group first, in
    trec_eval's order, then the other groups' and our own measures in the order asked.
    Raises ValueError as scoring.evaluate does, and for names neither dialect knows.
    """
    groups = _plan(measures, options)
    main_key = (options.relevance_level, None, False, None)
    main_requests = groups.pop(main_key)
    if not groups and all(r.ours is None for r in main_requests):
        # trec_eval's measures only: the engine's evaluation as it is (relstring, -Z, ...).
        specs = _engine_specs(main_requests, keep_trec_rule=True)
        return scoring.evaluate(qrels, run, specs, options, zscores=zscores)
    if zscores is not None:
        others = [r.spec for members in groups.values() for r in members]
        others += [r.spec for r in main_requests if r.ours is not None]
        raise ValueError(
            f"-Z: z-scores are for trec_eval's measures with the request's options; "
            f"{', '.join(others)} would be printed as z-scores without being ones"
        )
    main = _score_group(qrels, run, main_requests, options, main=True)
    base = main.evaluation
    prepared = main.prepared
    columns: dict[str, pl.Series] = {}
    means: dict[str, float] = {}
    topics = base.per_topic.get_column("qid")
    for name in main.names:
        column = columns[name] = base.per_topic.get_column(name)
        means[name] = base.means[name] if name in base.means else _mean(name, column.to_numpy())
    for (rel, gains, judged_only, _), members in groups.items():
        group_options = dataclasses.replace(options, relevance_level=rel)
        group_qrels = _with_gains(qrels, gains) if gains else qrels
        group_run = run
        shared = prepared if not gains else None  # the same frames: checked and ranked once
        if judged_only:
            group_run = _judged_only(run, qrels, options)
            group_options = dataclasses.replace(group_options, depth=None)  # cut already
            shared = None
        scored = _score_group(
            group_qrels,
            group_run,
            members,
            group_options,
            main=False,
            zscores=zscores,
            prepared=shared,
        )
        frame = scored.evaluation.per_topic
        same_topics = frame.height == topics.len() and frame.get_column("qid").equals(topics)
        for name in scored.names:
            if name in columns:
                continue
            if same_topics:
                columns[name] = frame.get_column(name)
                means[name] = scored.evaluation.means[name]
            else:
                aligned = pl.DataFrame({"qid": topics}).join(
                    frame.select("qid", name), on="qid", how="left", maintain_order="left"
                )
                columns[name] = aligned.get_column(name).fill_null(0.0)
                means[name] = _mean(name, columns[name].to_numpy())
    # The groups' columns as they are (each a Float64 named for its value): no copies.
    per_topic = pl.DataFrame(
        [topics, *(_float_column(name, column) for name, column in columns.items())]
    )
    extra = [name for name in columns if name not in base.measures]
    line_order = (*base.line_order, *extra) if base.line_order else ()
    return dataclasses.replace(
        base,
        measures=list(columns),
        per_topic=per_topic,
        means=means,
        options=options,
        line_order=line_order,
    )


def _plan(specs: Sequence[str] | str, options: Options) -> dict[tuple, list[MeasureRequest]]:
    """The requests by option group, the request's own group first (maybe empty). A rel
    equal to the request's level is no option of its own (P(rel=1)@5 is P@5 with -l 1)."""
    level = options.relevance_level
    groups: dict[tuple, list[MeasureRequest]] = {(level, None, False, None): []}
    for request in parse_requests(specs):
        if request.rel == level and request.family not in (None, "RBP"):
            request = dataclasses.replace(request, rel=None)
        groups.setdefault(request.group(level), []).append(request)
    return groups


@dataclasses.dataclass(frozen=True)
class Output:
    """One value an evaluation names, as the parser read it (never read back from its name).

    name: its output name (ndcg_cut_10, map, P(rel=2)@5, ERR@20).
    spec: the measure name that scores this value alone, in its dialect (ndcg_cut.10, map,
        P(rel=2)@5, ERR@20).
    measure: the trec_eval measure that computes it (ndcg_cut); None for one of ours.
    cutoff: its rank cutoff or recall point as a number (10, 0.5); None without one.
    family: its family (families.py); None for a trec_eval measure without one (gm_map's
        is declared; utility's is not).
    """

    name: str
    spec: str
    measure: str | None
    cutoff: int | float | None
    family: Family | None

    @property
    def k(self) -> int | None:
        """The rank cutoff k (nDCG@10: 10); None for a recall point or without a cutoff."""
        return self.cutoff if isinstance(self.cutoff, int) else None


def outputs(specs: Sequence[str] | str, options: Options = _DEFAULT_OPTIONS) -> list[Output]:
    """The values `evaluate(qrels, run, specs, options)` will name, in its order, without
    scoring anything. ValueError as parse_requests."""
    found: dict[str, Output] = {}
    for index, requests in enumerate(_plan(specs, options).values()):
        engine = [r for r in requests if r.trec is not None]
        if index == 0:
            specs_ = _engine_specs(engine, keep_trec_rule=True)
            measures = catalog.parse_measures(specs_) if specs_ else []
            for measure in measures:
                if measure.name == "runid":
                    continue
                family = by_trec_name(measure.name)
                for name, spec, cutoff in measure.singles:
                    found.setdefault(name, Output(name, spec, measure.name, cutoff, family))
        else:
            for r in engine:
                measure = catalog.parse_measures([r.trec])[0].name
                name = r.name()
                found.setdefault(name, Output(name, name, measure, r.cutoff, FAMILIES[r.family]))
        for r in requests:
            if r.ours is not None:
                name = r.name()
                found.setdefault(name, Output(name, name, None, r.cutoff, FAMILIES[r.family]))
    return list(found.values())


def output_names(specs: Sequence[str] | str, options: Options = _DEFAULT_OPTIONS) -> list[str]:
    """The names `evaluate(qrels, run, specs, options).measures` will have, in its order,
    without scoring anything. ValueError as parse_requests."""
    return [output.name for output in outputs(specs, options)]


@dataclasses.dataclass
class _Scored:
    evaluation: scoring.Evaluation  # per_topic holds the group's columns under `names`
    names: list[str]
    prepared: scoring.Prepared | None = None  # the group's frames, ready to score again


def _score_group(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    requests: list[MeasureRequest],
    options: Options,
    *,
    main: bool,
    zscores: pl.DataFrame | None = None,
    prepared: scoring.Prepared | None = None,
) -> _Scored:
    """Score one group: its trec_eval measures by the engine, then ours. In the main group
    the engine's output names are kept; elsewhere each value is named by its request.
    `prepared`: the group's frames prepared already (another group's, with another level)."""
    specs = _engine_specs([r for r in requests if r.trec is not None], keep_trec_rule=main)
    placeholder = not specs
    if not main and not _shares_topics(qrels, run, options):
        return _empty(qrels, run, requests, options)
    # scoring.evaluate's steps, keeping the prepared frames for the other groups and ours.
    parsed = catalog.parse_measures(specs or ["num_q"], trec_eval_version=options.trec_eval_version)
    check_measures("qrels", parsed)
    if prepared is None:
        prepared = scoring.prepare(qrels, run, options)
    result = scoring.score(prepared, parsed, options, zscores=zscores)
    frame = result.per_topic
    renamed: dict[str, str] = {}
    names: list[str] = [] if placeholder else list(result.measures)
    if not main:
        names = []
        for request in requests:
            if request.trec is not None:
                (output,) = catalog.parse_measures([request.trec])[0].output_names
                renamed.setdefault(output, request.name())
        names = list(dict.fromkeys(renamed.values()))
    ours = [r for r in requests if r.ours is not None]
    extra: dict[str, np.ndarray] = {}
    if ours:
        values = score_ours(
            qrels,
            run,
            frame.get_column("qid"),
            ours,
            options,
            options.relevance_level,
            prepared=prepared,
        )
        for request, value in zip(ours, values, strict=True):
            name = request.name()
            if name not in extra:
                extra[name] = value
                names.append(name)
    frame = frame.rename({k: v for k, v in renamed.items() if k in frame.columns})
    if extra:
        frame = frame.with_columns(
            [pl.Series(name, value, pl.Float64) for name, value in extra.items()]
        )
    means = {renamed.get(k, k): v for k, v in result.means.items()}
    means.update({name: _mean(name, value) for name, value in extra.items()})
    evaluation = dataclasses.replace(result, per_topic=frame, means=means)
    return _Scored(evaluation, names, prepared)


def _engine_specs(requests: list[MeasureRequest], *, keep_trec_rule: bool) -> list[str]:
    """The engine's -m arguments: the cutoffs of ir_measures names merged into one list per
    trec_eval measure, put first so that trec_eval's first-list rule keeps them, followed by
    the trec_eval names as given."""
    trec_specs = [r.trec for r in requests if r.is_trec_dialect]
    first_lists = (
        {m.name: m.cutoffs for m in catalog.parse_measures(trec_specs)} if trec_specs else {}
    )
    merged: dict[str, list] = {}
    plain: list[str] = []
    for request in requests:
        if request.is_trec_dialect:
            continue
        family, dot, _ = request.trec.partition(".")
        if dot and family in _CUTOFF_FAMILIES:
            cutoffs = merged.setdefault(family, list(first_lists.get(family, ())))
            if request.cutoff not in cutoffs:
                cutoffs.append(request.cutoff)
        else:
            plain.append(request.trec)
    lists = [
        f"{family}.{','.join(map(catalog.cutoff_text, sorted(cs)))}"
        for family, cs in merged.items()
    ]
    return [*lists, *plain, *trec_specs]


def _shares_topics(qrels: pl.DataFrame, run: pl.DataFrame, options: Options) -> bool:
    """Whether the group's run retrieves a judged document of some topic. When it does not
    (judged documents only, none retrieved), every topic scores 0, with `-c` too: the
    engine would refuse a run that shares no topic with the qrels."""
    if few(qrels.height, run.height):
        judged = {qid for qid, _, grade in _rows(qrels, "grade") if grade >= 0}
        return any(qid in judged for qid in run.get_column("qid").to_list())
    judged = qrels.filter(pl.col("grade") >= 0).get_column("qid").unique()
    return bool(run.get_column("qid").is_in(judged.implode()).any())


def _empty(qrels, run, requests, options) -> _Scored:
    """A group with no topic to score (judged documents only, none retrieved): zeros."""
    names = list(dict.fromkeys(r.name() for r in requests))
    frame = pl.DataFrame(
        {
            "qid": pl.Series([], dtype=pl.String),
            **{n: pl.Series([], dtype=pl.Float64) for n in names},
        }
    )
    evaluation = scoring.Evaluation(names, frame, {}, options)
    return _Scored(evaluation, names)


def _with_gains(qrels: pl.DataFrame, gains: tuple[tuple[int, int], ...]) -> pl.DataFrame:
    """Grades replaced by their gains (nDCG's gains=...), the way ir_measures hands
    pytrec_eval a qrels with mapped grades."""
    old = pl.Series([g for g, _ in gains], dtype=pl.Int64)
    new = pl.Series([x for _, x in gains], dtype=pl.Int64)
    grade = pl.col("grade").cast(pl.Int64)
    return qrels.with_columns(grade.replace(old, new).alias("grade"))


def _judged_only(run: pl.DataFrame, qrels: pl.DataFrame, options: Options) -> pl.DataFrame:
    """The run's lines (within -M's depth: trec_eval cuts the ranking first) whose document the qrels judge with a grade >= 0 (trec_eval -J, which
    also drops documents judged with a negative grade: to trec_eval they are not pooled)."""
    if options.depth is not None:
        top = topk.top_k(run, options.depth, trec_eval_version=options.trec_eval_version)
        run = top.select("qid", "docno", "score")
    if few(qrels.height, run.height):
        judged = {(qid, docno) for qid, docno, grade in _rows(qrels, "grade") if grade >= 0}
        pairs = ((qid, docno) for qid, docno, _ in _rows(run, "score"))
        kept = [line for line, pair in enumerate(pairs) if pair in judged]
        return run[np.array(kept, dtype=np.int64)]
    judged = qrels.filter(pl.col("grade") >= 0).select("qid", "docno")
    return run.join(judged, on=["qid", "docno"], how="semi")


def _rows(frame: pl.DataFrame, value: str):
    """(qid, docno, value) of each line of a few (judged_lookup.few), as Python objects."""
    columns = [frame.get_column(name).to_list() for name in ("qid", "docno", value)]
    return zip(*columns, strict=True)


def _float_column(name: str, column: pl.Series) -> pl.Series:
    if column.name != name:
        column = column.alias(name)
    return column if column.dtype == pl.Float64 else column.cast(pl.Float64)


def _mean(name: str, values: np.ndarray) -> float:
    """trec_eval's "all" value of values added in topic order."""
    total = float(np.cumsum(values)[-1]) if values.size else 0.0
    if name in _SUMS:
        return total
    return total / values.size if values.size else 0.0
