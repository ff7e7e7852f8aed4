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
                   Judged@k; 0 when nothing is retrieved)
    num_ret, num_rel, num_rel_ret, num_q: counts; their "all" value is the sum (num_q: the
                   number of topics averaged over)

Sums run in rank order and means in topic order, in double precision, as trec_eval's loops
do: a different order could change the last bits and, rarely, a printed fourth decimal.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from .catalog import DEFAULT_MEASURES, Measure, Options, parse_measures
from .inputs import check_measures
from .judged_only import keep_judged_only
from .ranking import JudgedRanking, QidBlocks, rank_judged_documents
from .zscores import convert_to_zscores

__all__ = ["Evaluation", "evaluate"]

MIN_GEO_MEAN = 0.00001  # trec_eval.h: the floor under map before gm_map takes its log
_MAX_EXP_GRADE = 62  # 2^g - 1 must fit in a signed 64-bit integer, as in trec_eval's long
_COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")
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
    zscored: the per-topic values were converted to z-scores before averaging (zscores.py).
    """

    measures: list[str]
    per_topic: pl.DataFrame
    means: dict[str, float]
    options: Options
    missing_topics: tuple[str, ...] = ()
    runid_requested: bool = False
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
    parsed = parse_measures(measures)
    check_measures("qrels", parsed)
    qrels, run = _checked_frames(qrels, run, options)
    run_blocks, qrels_blocks = QidBlocks(run.get_column("qid")), QidBlocks(qrels.get_column("qid"))
    run_topics = run_blocks.unique.implode()
    judged_topics = qrels_blocks.unique
    if not options.complete:
        judged_topics = judged_topics.filter(judged_topics.is_in(run_topics))
    topics = judged_topics.sort()
    missing = ~topics.is_in(run_topics).to_numpy()
    counted_missing = options.complete and options.trec_eval_version == 10
    if topics.len() == 0 or (missing.all() and not counted_missing):
        raise ValueError(
            "no topic has both relevance judgments and results: check that the qrels and "
            "the run use the same topic ids"
        )

    judged_topic, _ = qrels_blocks.topic_numbers(topics)
    judgments = qrels.with_columns(topic=judged_topic).filter(pl.col("topic") >= 0)
    ranking = rank_judged_documents(
        judgments,
        run,
        run_blocks,
        topics,
        trec_eval_version=options.trec_eval_version,
        depth=options.depth,
    )
    if options.judged_only:
        ranking = keep_judged_only(ranking)
    scorer = _Scorer(ranking, _TopicJudgments(judgments, topics.len(), options), options)
    columns: dict[str, np.ndarray] = {}
    for measure in parsed:
        if measure.name != "runid":
            columns.update(zip(measure.output_names, scorer.values(measure), strict=True))
    if missing.any() and options.trec_eval_version == 9 and "num_rel" in columns:
        # 9.0.8 never evaluates a missing topic: it adds nothing to any sum.
        columns["num_rel"] = np.where(missing, 0.0, columns["num_rel"])
    if zscores is not None:  # -Z; 9.0.8 never evaluates (nor converts) a missing topic
        evaluated = ~missing if options.trec_eval_version == 9 else None
        columns = convert_to_zscores(topics, columns, zscores, evaluated)

    per_topic = pl.DataFrame({"qid": topics, **columns})
    means = {name: _mean(name, values, missing, options) for name, values in columns.items()}
    return Evaluation(
        measures=list(columns),
        per_topic=per_topic,
        means=means,
        options=options,
        missing_topics=tuple(topics.filter(pl.Series(missing)).to_list()),
        runid_requested=any(m.name == "runid" for m in parsed),
        zscored=zscores is not None,
    )


def _checked_frames(
    qrels: pl.DataFrame, run: pl.DataFrame, options: Options
) -> tuple[pl.DataFrame, pl.DataFrame]:
    qrels = _checked_frame(qrels, "qrels", "grade", pl.Int64)
    run = _checked_frame(run, "run", "score", pl.Float64)
    if run.get_column("score").is_nan().any():
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
    for name in ("qid", "docno", value):
        if name not in frame.columns:
            raise ValueError(f"{label}: column {name!r} is missing (columns: {frame.columns})")
        column_type = frame.schema[name]
        if name == value:
            fits = column_type.is_integer() or (dtype == pl.Float64 and column_type.is_float())
            wanted = "an integer" if dtype == pl.Int64 else "a number"
        else:
            fits, wanted = column_type == pl.String, "a string"
        if not fits:
            raise ValueError(f"{label}: column {name!r} must be {wanted}, not {column_type}")
        if frame.get_column(name).null_count():
            raise ValueError(f"{label}: column {name!r} has missing values")
    return frame.select("qid", "docno", pl.col(value).cast(dtype))


class _TopicJudgments:
    """What the qrels say about each scored topic: R, the judged non-relevant count, and the
    ideal DCG's running sum over the topic's positive grades sorted descending."""

    def __init__(self, judgments: pl.DataFrame, n: int, options: Options) -> None:
        topic = judgments.get_column("topic").to_numpy()
        grade = judgments.get_column("grade").to_numpy()
        level = options.relevance_level
        self.num_rel = np.bincount(topic[(grade >= 0) & (grade >= level)], minlength=n)
        self.num_nonrel = np.bincount(topic[(grade >= 0) & (grade < level)], minlength=n)
        positive = grade > 0
        topic, grade = topic[positive], grade[positive]
        top = int(grade.max(initial=0))
        order = np.argsort(topic * (top + 1) + (top - grade))  # by topic, then grade descending
        self.ideal = _Events(topic[order], None, n)
        self.ideal.set_values(_gains(grade[order], options.gain) / _log2(self.ideal.position + 1))

    def idcg(self, k: int | None) -> np.ndarray:
        """IDCG@k per topic (k=None: over every positive judgment)."""
        return self.ideal.sum_first(None if k is None else np.full(self.ideal.n, k))


class _Events:
    """Per-topic sequences (relevant documents, gains, ...) sorted by topic then rank, with
    running sums computed in order, as trec_eval's loops add them."""

    def __init__(self, topic: np.ndarray, rank: np.ndarray | None, n: int) -> None:
        self.n = n
        self.topic = topic
        self.rank = rank
        self.count = np.bincount(topic, minlength=n)
        self.start = np.cumsum(self.count) - self.count
        self.position = np.arange(topic.size) - self.start[topic] + 1  # 1-based, per topic
        self.running = np.zeros(0)

    def set_values(self, values: np.ndarray) -> None:
        self.running = _running_sums(values, self.position)

    def count_within(self, k: int | np.ndarray) -> np.ndarray:
        """Per topic, events at rank <= k (k: one cutoff, or one per topic)."""
        limit = k if np.isscalar(k) else k[self.topic]
        return np.bincount(self.topic[self.rank <= limit], minlength=self.n)

    def sum_first(self, count: np.ndarray | None) -> np.ndarray:
        """Per topic, the running sum after its first `count` events (None: all of them)."""
        count = self.count if count is None else np.minimum(count, self.count)
        last = self.start + count - 1
        picked = np.where(count > 0, last, 0)
        if self.running.size == 0:
            return np.zeros(self.n)
        return np.where(count > 0, self.running[picked], 0.0)

    def sum_within(self, k: int) -> np.ndarray:
        return self.sum_first(self.count_within(k))

    def first(self, values: np.ndarray, position: np.ndarray) -> np.ndarray:
        """Per topic, values[the position-th event] (1-based); 0 where there is none."""
        exists = (position >= 1) & (position <= self.count)
        picked = np.where(exists, self.start + position - 1, 0)
        if values.size == 0:
            return np.zeros(self.n)
        return np.where(exists, values[picked], 0.0)


class _Scorer:
    """Each measure as a method returning one value per topic (one array per cutoff)."""

    def __init__(self, ranking: JudgedRanking, judgments: _TopicJudgments, options: Options):
        self.options = options
        self.judgments = judgments
        self.num_ret = ranking.num_ret
        n = self.num_ret.size
        level = options.relevance_level
        grade = ranking.grade
        relevant = (grade >= 0) & (grade >= level)
        self.judged = _Events(ranking.topic, ranking.rank, n)
        self.relevant = _Events(ranking.topic[relevant], ranking.rank[relevant], n)
        # prec(i) at each relevant rank i; map adds them up, iprec_at_recall takes maxima.
        self.precision = self.relevant.position / self.relevant.rank
        self.relevant.set_values(self.precision)
        gain_rows = grade > 0
        self.gains = _Events(ranking.topic[gain_rows], ranking.rank[gain_rows], n)
        self.gains.set_values(_gains(grade[gain_rows], options.gain) / _log2(self.gains.rank + 1))
        self._nonrel_above_relevant = self._count_nonrelevant_above(ranking, relevant)
        self._best_after: np.ndarray | None = None  # max prec(j) over j >= each relevant i

    def values(self, measure: Measure) -> list[np.ndarray]:
        method = getattr(self, f"_{measure.name}")
        if measure.cutoffs:
            return [np.asarray(method(k), dtype=np.float64) for k in measure.cutoffs]
        return [np.asarray(method(), dtype=np.float64)]

    # --- counts -----------------------------------------------------------------------

    def _num_q(self):
        return np.ones(self.num_ret.size)

    def _num_ret(self):
        return self.num_ret

    def _num_rel(self):
        return self.judgments.num_rel

    def _num_rel_ret(self):
        return self.relevant.count

    # --- binary measures --------------------------------------------------------------

    def _map(self):
        return _divide(self.relevant.sum_first(None), self.judgments.num_rel)

    def _gm_map(self):
        return _log(np.maximum(self._map(), MIN_GEO_MEAN))

    def _map_cut(self, k):
        return _divide(self.relevant.sum_within(k), self.judgments.num_rel)

    def _P(self, k):
        return self.relevant.count_within(k) / k

    def _recall(self, k):
        return _divide(self.relevant.count_within(k), self.judgments.num_rel)

    def _success(self, k):
        return (self.relevant.count_within(k) > 0).astype(np.float64)

    def _Rprec(self):
        num_rel = self.judgments.num_rel
        return _divide(self.relevant.count_within(num_rel), num_rel)

    def _recip_rank(self):
        first_rank = self.relevant.first(self.relevant.rank, np.ones(self.num_ret.size, int))
        return _divide(np.ones(self.num_ret.size), first_rank)

    def _bpref(self):
        topic = self.relevant.topic
        num_rel = self.judgments.num_rel[topic]
        num_nonrel = self.judgments.num_nonrel[topic]
        above = self._nonrel_above_relevant
        with np.errstate(divide="ignore", invalid="ignore"):
            penalty = np.minimum(above, num_rel) / np.minimum(num_nonrel, num_rel)
        terms = np.where(above > 0, 1.0 - penalty, 1.0)
        sums = _Events(topic, self.relevant.rank, self.num_ret.size)
        sums.set_values(terms)
        return _divide(sums.sum_first(None), self.judgments.num_rel)

    def _iprec_at_recall(self, point):
        num_rel = self.judgments.num_rel
        wanted = point * num_rel
        if self.options.trec_eval_version == 9:
            relevant_needed = np.floor(wanted + 0.9).astype(np.int64)
        else:  # lround: halves away from zero
            floor = np.floor(wanted)
            relevant_needed = (floor + (wanted - floor >= 0.5)).astype(np.int64)
        if self._best_after is None:
            self._best_after = _suffix_maxima(self.precision, self.relevant.position)
        best_after = self._best_after
        value = self.relevant.first(best_after, np.maximum(relevant_needed, 1))
        value = np.where(relevant_needed <= self.relevant.count, value, 0.0)
        if not self.options.judged_only:
            return value
        # -J can leave nothing retrieved; trec_eval's interpolated precision then starts at
        # 0/0, so the points needing no relevant document get NaN.
        return np.where((self.num_ret == 0) & (relevant_needed == 0), np.nan, value)

    # --- graded measures --------------------------------------------------------------

    def _ndcg(self):
        return _divide(self.gains.sum_first(None), self.judgments.idcg(None))

    def _ndcg_cut(self, k):
        return _divide(self.gains.sum_within(k), self.judgments.idcg(k))

    # --- ours -------------------------------------------------------------------------

    def _judged(self, k):
        return _divide(self.judged.count_within(k), np.minimum(self.num_ret, k))

    def _count_nonrelevant_above(self, ranking: JudgedRanking, relevant: np.ndarray):
        """For each relevant document, the judged non-relevant (0 <= grade < l) documents
        ranked above it in its topic."""
        nonrel = (ranking.grade >= 0) & ~relevant
        running = np.cumsum(nonrel)  # integers: exact in any order
        before = running - nonrel
        topic_offset = before[self.judged.start[ranking.topic]]
        return (running - topic_offset)[relevant]


def _gains(grade: np.ndarray, gain: str) -> np.ndarray:
    """gain(g) for judged grades g >= 0, as the double trec_eval divides (exact integers)."""
    if gain == "exp":
        return (np.left_shift(np.int64(1), grade.astype(np.int64)) - 1).astype(np.float64)
    return grade.astype(np.float64)


def _log2(values: np.ndarray) -> np.ndarray:
    """log2 of whole numbers >= 1 from the C library, as trec_eval calls it (numpy's own
    log2 can differ in the last bit); computed once per distinct value."""
    values = np.asarray(values, dtype=np.int64)
    top = int(values.max(initial=1))
    if top <= 4 * values.size + 1024:
        table = np.array([math.log2(v) if v else 0.0 for v in range(top + 1)])
        return table[values]
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([math.log2(v) for v in distinct], dtype=np.float64)[inverse]


def _log(values: np.ndarray) -> np.ndarray:
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([math.log(v) for v in distinct], dtype=np.float64)[inverse]


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0 (trec_eval leaves such a
    value at its initial 0)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _running_sums(values: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Cumulative sums restarting where position == 1, each added strictly in order.

    np.cumsum adds in order but does not restart; numpy's reductions add pairwise. So the
    sums advance one position at a time across all topics at once: as many vectorised steps
    as the longest sequence, or one np.cumsum per topic when there are fewer topics.
    """
    return _running(values, position, np.add)


def _suffix_maxima(values: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Per topic, the maximum of values from each event to the topic's last one."""
    return _running(values[::-1], _reverse_positions(position), np.maximum)[::-1]


def _reverse_positions(position: np.ndarray) -> np.ndarray:
    """Positions counted from each topic's end, in reversed array order."""
    reversed_position = position[::-1]
    starts = np.flatnonzero(np.r_[True, reversed_position[1:] >= reversed_position[:-1]])
    lengths = np.diff(np.r_[starts, reversed_position.size])
    return np.arange(reversed_position.size) - np.repeat(starts, lengths) + 1


def _running(values: np.ndarray, position: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    out = np.array(values, dtype=np.float64)
    if out.size == 0:
        return out
    starts = np.flatnonzero(position == 1)
    longest = int(position.max())
    if longest <= starts.size:
        # Grouping by position needs no particular order within a position; a stable sort
        # of 16-bit integers is a radix sort, the fastest numpy has.
        narrow = position.astype(np.int16) if longest < 2**15 else position
        order = np.argsort(narrow, kind="stable")
        bounds = np.searchsorted(position[order], np.arange(1, longest + 2), "left")
        for step in range(1, longest):
            index = order[bounds[step] : bounds[step + 1]]
            out[index] = ufunc(out[index - 1], out[index])
    else:
        for start, stop in zip(starts, np.r_[starts[1:], out.size], strict=True):
            out[start:stop] = ufunc.accumulate(out[start:stop])
    return out


def _sequential_sum(values: np.ndarray) -> float:
    return float(np.cumsum(values)[-1]) if values.size else 0.0


def _mean(name: str, values: np.ndarray, missing: np.ndarray, options: Options) -> float:
    """trec_eval's "all" value: topic values added in topic order, then divided."""
    n = values.size
    if name == "num_q":
        return float(n)
    if name in _COUNTS:
        return _sequential_sum(values)
    if name == "gm_map":
        if options.trec_eval_version == 9:
            # meas_avg.c: missing topics are added after the others, log(MIN_GEO_MEAN) each.
            total = _sequential_sum(values[~missing])
            total += int(missing.sum()) * math.log(MIN_GEO_MEAN)
        else:
            total = _sequential_sum(values)
        return math.exp(total / n)
    return _sequential_sum(values) / n
