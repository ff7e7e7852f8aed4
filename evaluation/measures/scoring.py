"""Per-topic values and their means, computed the way trec_eval 9.0.8 computes them.

Notation for one topic: the run's documents in trec_eval's order (see ranking.py) at ranks
i = 1..num_ret; rel(i) when the document is judged with grade >= l (`-l`, default 1);
R = num_rel, the number of judged documents with grade >= l; grade(i) the judged grade
(negative grades and unjudged documents count as not relevant and gain 0).

    P@k          = |{i <= k : rel(i)}| / k                  (k even when fewer are retrieved)
    recall@k     = |{i <= k : rel(i)}| / R                  (0 when R = 0)
    success@k    = 1 if some i <= k has rel(i), else 0
    map          = sum over relevant i of prec(i), / R,     prec(i) = |{j <= i : rel(j)}| / i
    map_cut@k    = the same sum over relevant i <= k, / R
    gm_map       = per topic log(max(map, 0.00001)); the mean is exp(mean of those)
    Rprec        = |{i <= R : rel(i)}| / R
    recip_rank   = 1 / the first relevant rank (0 if none)
    bpref        = (1/R) * sum over relevant i of (1 - min(n(i), R) / min(N, R)), where n(i)
                   counts documents ranked above i judged with 0 <= grade < l and N counts all
                   such judgments of the topic (a term is 1 while n(i) = 0)
    iprec_at_recall_p = max of prec(i) over relevant i at or after the m-th relevant one,
                   m = (long)(p * R + 0.9) in 9.0.8, lround(p * R) in 10.0; 0 when m exceeds
                   the relevant documents retrieved
    ndcg         = DCG / IDCG and ndcg_cut@k = DCG@k / IDCG@k, with
                   DCG@k  = sum over i <= k of gain(grade(i)) / log2(i + 1)
                   IDCG@k = the same over the topic's judged grades >= 1 sorted descending,
                            retrieved or not; nDCG is 0 when IDCG is 0. `-l` does not apply.
                   gain(g) = g ("linear", trec_eval) or 2^g - 1 ("exp")
    judged@k     = |{i <= k : document i judged, any grade}| / min(k, num_ret)  (ir_measures'
                   Judged@k; 0 when nothing is retrieved), with documents ranked the way
                   ir_measures' judged provider ranks them: scores as doubles, ties by docno
                   ascending (ranking.ORDERS)
    num_ret, num_rel, num_rel_ret, num_q: counts; their "all" value is the sum (num_q: the
                   number of topics averaged over)

Sums run in rank order and means in topic order, in double precision, as trec_eval's loops
do: a different order could change the last bits and, rarely, a printed fourth decimal.
"""

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from .binary import MIN_GEO_MEAN
from .catalog import _KINDS, DEFAULT_MEASURES, GEOMETRIC_NAMES, Measure, Options, parse_measures
from .inputs import check_measures
from .judged_lookup import few
from .judged_only import keep_judged_only
from .ranking import ORDERS, JudgedRanking, QidBlocks, rank_in_order, rank_judged_documents
from .scorer import Scorer
from .sequences import sequential_sum
from .topics import TopicJudgments
from .zscores import convert_to_zscores

__all__ = ["Evaluation", "Prepared", "evaluate", "prepare", "score"]

_MAX_EXP_GRADE = 62  # 2^g - 1 must fit in a signed 64-bit integer, as in trec_eval's long
_COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")
_DEFAULT_OPTIONS = Options()


@dataclass(frozen=True)
class Evaluation:
    """A run scored against qrels.

    measures: output names in trec_eval's order (runid, which has no value, is left out).
    per_topic: qid and one Float64 column per name; the scored topics in trec_eval's order
        (qid in byte order). gm_map's column holds log(max(map, 0.00001)), the value
        trec_eval (and pytrec_eval) computes per topic. With `complete`, topics missing from
        the run are included with
        the values trec_eval counts for them (all 0; gm_map log(0.00001); in 10.0 num_rel
        is the topic's real count).
    means: trec_eval's "all" line: means, sums for num_ret/num_rel/num_rel_ret, the topic
        count for num_q, the geometric mean for gm_map.
    missing_topics: the topics of per_topic that the run does not contain (only with
        `complete`); trec_eval 9.0.8 prints no per-topic lines for them.
    runid_requested: "runid" was asked for, so format_trec_eval prints a runid line.
    """

    measures: list[str]
    per_topic: pl.DataFrame
    means: dict[str, float]
    options: Options
    missing_topics: tuple[str, ...] = ()
    runid_requested: bool = False
    # Measures with a string per topic and no summary (relstring): qid and one String
    # column per name; `line_order` is every per-topic name in trec_eval's order.
    strings: pl.DataFrame | None = None
    line_order: tuple[str, ...] = ()
    zscored: bool = False  # values are z-scores (-Z): trec_eval prints them as "Zname"


def evaluate(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    measures: Sequence[str] = DEFAULT_MEASURES,
    options: Options = _DEFAULT_OPTIONS,
    *,
    zscores: pl.DataFrame | None = None,
) -> Evaluation:
    """Score `run` (qid, docno, score) against `qrels` (qid, docno, grade) like trec_eval.

    `measures` are trec_eval `-m` arguments ("ndcg_cut.10", "P.5,10", "official"). Topics
    only in the run are ignored; topics only in the qrels are skipped, or with
    `options.complete` scored 0 and counted. A (qid, docno) pair must not repeat in either
    frame (evaluation.trec rejects such files; trec_eval refuses them too); this is
    checked for the qrels, not for the run, where the check would cost more than scoring.

    Raises ValueError for unknown measures, bad cutoffs, malformed frames, or when no topic
    has both judgments and results (trec_eval stops there too).
    """
    parsed = parse_measures(measures, trec_eval_version=options.trec_eval_version)
    check_measures("qrels", parsed)
    return score(prepare(qrels, run, options), parsed, options, zscores=zscores)


@dataclass
class Prepared:
    """A run and its qrels made ready for scoring: checked, their topics found, the run
    ranked. None of it depends on the relevance level or the measures, so measures scored
    with other levels over the same frames (grouped.py) reuse it; `score` checks that the
    options it is given were the ones it was prepared with, the level aside.

    judgments: topic (index into `topics`), docno, grade: the qrels of the scored topics.
    missing: per topic, whether the run lacks it (only with `complete`).
    """

    qrels: pl.DataFrame
    run: pl.DataFrame
    run_blocks: QidBlocks
    topics: pl.Series
    missing: np.ndarray
    judgments: pl.DataFrame
    ranking: JudgedRanking
    options: Options  # the options prepared with (of which the level and -J do not count)
    _judged_order: JudgedRanking | None = None

    def judged_order(self) -> JudgedRanking:
        """The run ranked as ir_measures' judged provider ranks it (judged@k)."""
        if self._judged_order is None:
            self._judged_order = rank_in_order(
                self.judgments,
                self.run,
                self.run_blocks,
                self.topics,
                ORDERS["Judged"],
                trec_eval_version=self.options.trec_eval_version,
                depth=self.options.depth,
            )
        return self._judged_order


def _preparation_key(options: Options) -> tuple:
    """What of the options a Prepared depends on: every option but the level and -J."""
    return tuple(getattr(options, name) for name in _PREPARED_WITH)


_PREPARED_WITH = tuple(
    field.name
    for field in dataclasses.fields(Options)
    if field.name not in ("relevance_level", "judged_only")
)


def prepare(qrels: pl.DataFrame, run: pl.DataFrame, options: Options) -> Prepared:
    """The frames checked, their topics found and the run ranked (ValueError as evaluate)."""
    qrels, run = _checked_frames(qrels, run, options)
    run_blocks, qrels_blocks = QidBlocks(run.get_column("qid")), QidBlocks(qrels.get_column("qid"))
    topics, missing = _scored_topics(run_blocks, qrels_blocks, options.complete)
    counted_missing = options.complete and options.trec_eval_version == 10
    if topics.len() == 0 or (missing.all() and not counted_missing):
        raise ValueError(
            "no topic has both relevance judgments and results: check that the qrels and "
            "the run use the same topic ids"
        )

    judged_topic, _ = qrels_blocks.topic_numbers(topics)
    judgments = qrels.hstack([pl.Series("topic", judged_topic)])
    if not (judged_topic >= 0).all():
        judgments = judgments[np.flatnonzero(judged_topic >= 0)]
    ranking = rank_judged_documents(
        judgments,
        run,
        run_blocks,
        topics,
        trec_eval_version=options.trec_eval_version,
        depth=options.depth,
    )
    return Prepared(qrels, run, run_blocks, topics, missing, judgments, ranking, options)


def _scored_topics(
    run_blocks: QidBlocks, qrels_blocks: QidBlocks, complete: bool
) -> tuple[pl.Series, np.ndarray]:
    """The topics to score, in trec_eval's order (qid in byte order), and whether the run
    lacks each (only with `complete`: otherwise the topics judged and retrieved)."""
    if run_blocks.few_unique is not None and qrels_blocks.few_unique is not None:
        retrieved = set(run_blocks.few_unique)
        judged = qrels_blocks.few_unique
        # Python orders str by code point, which is the byte order of their UTF-8.
        names = sorted(judged if complete else [q for q in judged if q in retrieved])
        missing = np.array([q not in retrieved for q in names], dtype=bool)
        return pl.Series("qid", names, dtype=pl.String), missing
    run_topics = run_blocks.unique.implode()
    judged_topics = qrels_blocks.unique
    if not complete:
        judged_topics = judged_topics.filter(judged_topics.is_in(run_topics))
    topics = judged_topics.sort()
    return topics, ~topics.is_in(run_topics).to_numpy()


def score(
    prepared: Prepared,
    parsed: Sequence[Measure],
    options: Options,
    *,
    zscores: pl.DataFrame | None = None,
) -> Evaluation:
    """evaluate's result for measures already read (parse_measures) over prepared frames.
    `options` may differ from the ones `prepared` was made with in the level and -J only."""
    if _preparation_key(options) != _preparation_key(prepared.options):
        raise ValueError("these frames were prepared with other options: prepare them again")
    topics, missing, judgments = prepared.topics, prepared.missing, prepared.judgments
    ranking = prepared.ranking
    judged_order = None
    if ranking.tied and any(m.name == "judged" for m in parsed):
        # judged@k is ir_measures' Judged@k: ties broken as its judged provider breaks them.
        judged_order = prepared.judged_order()
    if options.judged_only:
        ranking = keep_judged_only(ranking)
        judged_order = judged_order and keep_judged_only(judged_order)
    scorer = Scorer(
        ranking, TopicJudgments(judgments, topics.len(), options), options, judged_order
    )
    columns: dict[str, np.ndarray] = {}
    strings: dict[str, list[str]] = {}
    line_order: list[str] = []
    for measure in parsed:
        if measure.name == "runid":
            continue
        values = dict(zip(measure.output_names, scorer.values(measure), strict=True))
        if _KINDS[measure.name].summary:
            columns.update(values)
        else:
            strings.update(values)
        if measure.per_topic:
            line_order.extend(values)
    if missing.any():
        _fill_missing(columns, strings, missing, options)
    if zscores is not None:  # -Z; 9.0.8 never evaluates (nor converts) a missing topic
        evaluated = ~missing if options.trec_eval_version == 9 else None
        columns = convert_to_zscores(topics, columns, zscores, evaluated)

    # Series first: a frame made from a dict of arrays costs half again as much per column.
    per_topic = pl.DataFrame(
        [topics.alias("qid"), *(pl.Series(name, v) for name, v in columns.items())]
    )
    means = {name: _mean(name, values, missing, options) for name, values in columns.items()}
    if options.complete and "num_rel" in means:
        # With -c both versions' summary num_rel goes back to the qrels (m_num_rel.c,
        # te_calc_avg_num_rel): every judgment with grade > 0 of every topic, whatever -l says.
        means["num_rel"] = float((judgments.get_column("grade") > 0).sum())
    return Evaluation(
        measures=list(columns),
        per_topic=per_topic,
        means=means,
        options=options,
        missing_topics=tuple(topics.filter(pl.Series(missing)).to_list()),
        runid_requested=any(m.name == "runid" for m in parsed),
        strings=pl.DataFrame({"qid": topics, **strings}) if strings else None,
        line_order=tuple(line_order),
        zscored=zscores is not None,
    )


def _fill_missing(columns: dict, strings: dict, missing: np.ndarray, options: Options) -> None:
    """The values of topics judged but absent from the run (only with `complete`).

    9.0.8 never evaluates them: they add nothing to any sum (0), and log(MIN_GEO_MEAN) to the
    geometric means (_mean adds that). 10.0 scores them against an empty ranking, which the
    measures already do, and then clears the relevance string (trec_eval.c)."""
    if options.trec_eval_version == 9:
        for name, values in columns.items():
            if name != "num_q" and name not in GEOMETRIC_NAMES:
                columns[name] = np.where(missing, 0.0, values)
    for name, values in strings.items():
        strings[name] = ["" if gone else text for gone, text in zip(missing, values, strict=True)]


def _checked_frames(
    qrels: pl.DataFrame, run: pl.DataFrame, options: Options
) -> tuple[pl.DataFrame, pl.DataFrame]:
    qrels = _checked_frame(qrels, "qrels", "grade", pl.Int64)
    run = _checked_frame(run, "run", "score", pl.Float64)
    score = run.get_column("score")
    if np.isnan(score.to_numpy()).any() if few(score.len()) else score.is_nan().any():
        raise ValueError("run: the score column contains NaN")
    if options.gain == "exp" and qrels.height and qrels.get_column("grade").max() > _MAX_EXP_GRADE:
        raise ValueError(f"qrels: exponential gain needs grades <= {_MAX_EXP_GRADE}")
    return qrels, run


def _checked_frame(
    frame: pl.DataFrame, label: str, value: str, dtype: type[pl.DataType]
) -> pl.DataFrame:
    """The frame's qid, docno and value columns, the value cast to `dtype`."""
    if not isinstance(frame, pl.DataFrame):
        raise ValueError(f"{label} must be a polars DataFrame, got {type(frame).__name__}")
    schema = frame.schema
    columns = []
    for name in ("qid", "docno", value):
        if name not in schema:
            raise ValueError(f"{label}: column {name!r} is missing (columns: {frame.columns})")
        column_type = schema[name]
        if name == value:
            fits = column_type.is_integer() or (dtype == pl.Float64 and column_type.is_float())
            wanted = "an integer" if dtype == pl.Int64 else "a number"
        else:
            fits, wanted = column_type == pl.String, "a string"
        if not fits:
            raise ValueError(f"{label}: column {name!r} must be {wanted}, not {column_type}")
        column = frame.get_column(name)
        if column.null_count():
            raise ValueError(f"{label}: column {name!r} has missing values")
        columns.append(column)
    if columns[2].dtype != dtype:
        columns[2] = columns[2].cast(dtype)
    # A frame of the Series as they are: a select would cost a query plan on every call.
    return pl.DataFrame(columns)


def _mean(name: str, values: np.ndarray, missing: np.ndarray, options: Options) -> float:
    """trec_eval's "all" value: topic values added in topic order, then divided."""
    n = values.size
    if name == "num_q":
        return float(n)
    if name in _COUNTS:
        return sequential_sum(values)
    if name in GEOMETRIC_NAMES:
        if options.trec_eval_version == 9:
            # meas_avg.c: missing topics are added after the others, log(MIN_GEO_MEAN) each.
            total = sequential_sum(values[~missing])
            total += int(missing.sum()) * math.log(MIN_GEO_MEAN)
        else:
            total = sequential_sum(values)
        return math.exp(total / n)
    return sequential_sum(values) / n
