"""trec_eval's preference measures (`-R prefs`, `-R qrels_prefs`), computed as
form_prefs_counts.c and the m_prefs_*.c files of trec_eval 9.0.8 and 10.0 do. Pure.

    evaluate_prefs(prefs, run, ["all_prefs"], Options()) -> Evaluation

Input. A preference file holds (qid, jg, jsg, docno, level) lines: within one judgment
subgroup (jsg) of a judgment group (jg), a document with a higher level is preferred to one
with a lower level; level 0 means not relevant. A jg with one subgroup prefers by level across
all its documents; a jg with several subgroups joins their preferences and adds the transitive
ones (A > B in one subgroup and B > C in another give A > C), and it must stay consistent: a
preference both ways, or a document at 0 in one subgroup and above 0 in another, is an error.
`-R qrels_prefs` reads a qrels file this way: jg = the iteration field, one subgroup.

The run. A topic's documents are ranked by score descending, ties by docno *ascending* (this
file's order, unlike the other measures'), `-M` keeps the first ones; 9.0.8 compares scores as
C floats (and levels too), 10.0 as doubles. Of the documents named in the topic's
preferences, the retrieved ones come first in rank order, then the others in docno order.

Counts, per jg, over its preferences A > B: "fulfilled" when A comes before B in that order;
"ret" when both are retrieved, "imp" (implied) when exactly one is (fulfilled when it is A),
"notoccur" when neither is (never fulfilled). R and N are the jg's documents with level > 0
and level <= 0 (with subgroups: level == 0), R_ret and N_ret those retrieved.

    prefs_num_prefs_poss     every preference;            summed over topics, not averaged
    prefs_num_prefs_ful      fulfilled ret + imp;          summed
    prefs_num_prefs_ful_ret  fulfilled ret;                summed
    prefs_simp               fulfilled / possible (ret, imp and notoccur), over all jgs
    prefs_simp_ret, _imp     the same over ret, and over ret + imp
    prefs_pair               mean over document pairs with a preference, of the share of
                             jgs that agree with the order (notoccur pairs count 0)
    prefs_pair_ret, _imp     the same over pairs of retrieved documents, and pairs with at
                             least one retrieved
    prefs_avgjg              mean over jgs of fulfilled / possible (a jg without
                             preferences adds 0 and still counts)
    prefs_avgjg_ret, _imp    the same over ret, over ret + imp
    prefs_avgjg_Rnonrel      as prefs_avgjg with N set to R: when R >= N, R_ret * (R - N)
                             fulfilled and R * (R - N) possible preferences are added; when
                             R < N, only the first R (docid order) non-relevant documents
                             are kept and the preferences recounted
    prefs_avgjg_Rnonrel_ret  the same over retrieved documents, with R_ret and N_ret

Every value is 0 where trec_eval leaves it at 0 (nothing possible; an avgjg sum that is not
positive). trec_eval's own quirks are kept, since they change numbers: the avgjg_Rnonrel
recount also pairs the lowest equivalence class with the kept non-relevant documents, a jg
whose ratio is 0/0 makes the topic's avgjg_Rnonrel sum NaN and so its value 0, and
avgjg_Rnonrel_ret adds R * (R_ret - N_ret) rather than R_ret * (...) possible preferences.
Where trec_eval reads past an array (that recount when the lowest class holds fewer than R
documents), we keep the documents that exist.

Sums run in trec_eval's order (topics in qid byte order, jgs in jg byte order, pairs row by
row), so the last bits agree.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from .catalog import Options, parse_measures
from .inputs import check_measures
from .scoring import Evaluation
from .zscores import convert_to_zscores

__all__ = ["PREFS_MEASURES", "evaluate_prefs", "prefs_from_qrels"]

PREFS_MEASURES = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
_DEFAULT_OPTIONS = Options()
_SUMMED = ("num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")


def prefs_from_qrels(qrels: pl.DataFrame) -> pl.DataFrame:
    """A qrels_prefs frame (qid, jg, docno, level) as preferences: one subgroup "0"."""
    return qrels.select("qid", "jg", pl.lit("0").alias("jsg"), "docno", "level")


def evaluate_prefs(
    prefs: pl.DataFrame,
    run: pl.DataFrame,
    measures: Sequence[str] = ("prefs",),
    options: Options = _DEFAULT_OPTIONS,
    *,
    rel_format: str = "prefs",
    zscores: pl.DataFrame | None = None,
) -> Evaluation:
    """Score `run` (qid, docno, score) against `prefs` (qid, jg, jsg, docno, level).

    Topics only in the run are ignored; topics only in `prefs` are skipped, or with
    `options.complete` counted in every mean (9.0.8: as 0 and not printed; 10.0: scored as
    an empty ranking). Raises ValueError for measures that need another input, malformed
    frames, inconsistent preferences within a judgment group, or when no topic has both
    preferences and results.
    """
    parsed = parse_measures(measures)
    check_measures(rel_format, parsed)
    prefs, run = _checked(prefs, run, options)
    prefs_topics = prefs.get_column("qid").unique().sort()
    run_topics = run.get_column("qid").unique()
    present = prefs_topics.is_in(run_topics.implode())
    topics = prefs_topics if options.complete else prefs_topics.filter(present)
    missing = ~topics.is_in(run_topics.implode()).to_numpy()
    scored_missing = options.complete and options.trec_eval_version == 10
    if topics.len() == 0 or (missing.all() and not scored_missing):
        raise ValueError(
            "no topic has both preferences and results: check that the preferences and the "
            "run use the same topic ids"
        )
    rows, judged_ret = _docids(prefs, run, topics, options)
    names = [name for m in parsed if m.name != "runid" for name in m.output_names]
    values = {name: np.zeros(topics.len()) for name in names}
    blocks = _topic_blocks(rows, topics.len())
    for t in range(topics.len()):
        if missing[t] and not scored_missing:
            continue
        start, stop = blocks[t], blocks[t + 1]
        topic = _Topic(
            str(topics[t]),
            rows.slice(start, stop - start),
            int(judged_ret[t]),
            options.trec_eval_version,
        )
        for name in names:
            values[name][t] = topic.value(name)
    if zscores is not None:  # -Z; 9.0.8 never evaluates (nor converts) a missing topic
        evaluated = None if scored_missing else ~missing
        values = convert_to_zscores(topics, values, zscores, evaluated)
    per_topic = pl.DataFrame({"qid": topics, **values})
    means = {name: _mean(name, values[name]) for name in names}
    return Evaluation(
        measures=names,
        per_topic=per_topic,
        means=means,
        options=options,
        missing_topics=tuple(topics.filter(pl.Series(missing)).to_list()),
        runid_requested=any(m.name == "runid" for m in parsed),
        zscored=zscores is not None,
    )


def _mean(name: str, values: np.ndarray) -> float:
    total = float(np.cumsum(values)[-1]) if values.size else 0.0
    if name == "num_q":
        return float(values.size)
    return total if name in _SUMMED else total / values.size


def _checked(prefs: pl.DataFrame, run: pl.DataFrame, options: Options):
    for label, frame, columns in (
        ("prefs", prefs, {"qid": pl.String, "jg": pl.String, "jsg": pl.String, "docno": pl.String}),
        ("run", run, {"qid": pl.String, "docno": pl.String}),
    ):
        if not isinstance(frame, pl.DataFrame):
            raise ValueError(f"{label} must be a polars DataFrame, got {type(frame).__name__}")
        for column, dtype in columns.items():
            if frame.schema.get(column) != dtype:
                raise ValueError(f"{label}: column {column!r} must be a string column")
    for label, frame, column in (("prefs", prefs, "level"), ("run", run, "score")):
        dtype = frame.schema.get(column)
        if dtype is None or not dtype.is_numeric():
            raise ValueError(f"{label}: column {column!r} must be numeric")
        if frame.get_column(column).null_count():
            raise ValueError(f"{label}: column {column!r} has missing values")
        if not frame.get_column(column).cast(pl.Float64).is_finite().all():
            raise ValueError(f"{label}: column {column!r} must be finite")
    # 9.0.8 keeps levels and scores as C floats: values equal once rounded compare equal.
    width = pl.Float32 if options.trec_eval_version == 9 else pl.Float64
    level = pl.col("level").cast(width).cast(pl.Float64) + 0.0
    prefs = prefs.select("qid", "jg", "jsg", "docno", level.alias("level"))
    score = pl.col("score").cast(width).cast(pl.Float64) + 0.0  # -0.0 ties with 0.0, as in C
    return prefs, run.select("qid", "docno", score.alias("score"))


def _docids(prefs: pl.DataFrame, run: pl.DataFrame, topics: pl.Series, options: Options):
    """The preference lines of `topics`, with topic (index into topics) and docid, sorted by
    (topic, jg, jsg, level descending, docid); and per topic the number of judged documents
    retrieved. A docid numbers a topic's judged documents: the retrieved ones in rank order
    from 0, then the others in docno order."""
    topic_index = pl.DataFrame({"qid": topics, "topic": np.arange(topics.len(), dtype=np.int64)})
    ranked = (
        run.join(topic_index, on="qid")
        .sort(["topic", "score", "docno"], descending=[False, True, False])
        .with_columns(rank=pl.int_range(pl.len()).over("topic"))
    )
    if options.depth is not None:
        ranked = ranked.filter(pl.col("rank") < options.depth)
    rows = prefs.join(topic_index, on="qid")
    judged = rows.select("topic", "docno").unique()
    retrieved = ranked.join(judged, on=["topic", "docno"], how="semi").select(
        "topic", "docno", "rank"
    )
    if retrieved.select(pl.struct("topic", "docno").is_duplicated().any()).item():
        raise ValueError("run: a document appears twice in one topic's ranking")
    docs = (
        judged.join(retrieved, on=["topic", "docno"], how="left")
        .sort(["topic", "rank", "docno"], nulls_last=True)
        .with_columns(docid=pl.int_range(pl.len()).over("topic"))
    )
    judged_ret = np.bincount(
        retrieved.get_column("topic").to_numpy(), minlength=topics.len()
    ).astype(np.int64)
    rows = (
        rows.join(docs.select("topic", "docno", "docid"), on=["topic", "docno"])
        .sort(
            ["topic", "jg", "jsg", "level", "docid"], descending=[False, False, False, True, False]
        )
        .select("topic", "jg", "jsg", "docno", "level", "docid")
    )
    return rows, judged_ret


def _topic_blocks(rows: pl.DataFrame, n: int) -> np.ndarray:
    counts = np.bincount(rows.get_column("topic").to_numpy(), minlength=n)
    return np.concatenate([[0], np.cumsum(counts)])


@dataclass
class _Group:
    """One judgment group's preferences over its own documents (local index = docid order)."""

    docid: np.ndarray  # sorted ascending
    prefers: np.ndarray | None  # subgroups: prefers[a, b] when document a is preferred to b
    level: np.ndarray  # per document: its level (subgroups: the last one assigned)
    ec: np.ndarray | None  # one subgroup: the equivalence class (0 = highest level)
    retrieved: int  # how many of its documents are retrieved (the first ones)

    def preference_matrix(self) -> np.ndarray:
        if self.prefers is not None:
            return self.prefers
        return self.ec[:, None] < self.ec[None, :]  # a higher class is preferred

    def counts(self) -> dict[str, int]:
        if self.prefers is not None:
            return _count(self.prefers, self.retrieved)
        return _count_classes(self.ec, self.retrieved)


class _Topic:
    """The counts of form_prefs_counts.c for one topic, and each measure from them."""

    def __init__(self, qid: str, rows: pl.DataFrame, judged_ret: int, version: int) -> None:
        self.qid = qid
        self.judged_ret = judged_ret
        docid = rows.get_column("docid").to_numpy()
        self.num_judged = int(docid.max()) + 1 if docid.size else 0
        jg = rows.get_column("jg").to_numpy()
        jsg = rows.get_column("jsg").to_numpy()
        level = rows.get_column("level").to_numpy()
        docno = rows.get_column("docno").to_numpy()
        bounds = np.flatnonzero(np.r_[True, jg[1:] != jg[:-1], True]) if jg.size else [0]
        self.groups = [
            self._group(jg[a], jsg[a:b], level[a:b], docid[a:b], docno[a:b])
            for a, b in itertools.pairwise(bounds)
        ]
        self.jg_counts = [group.counts() for group in self.groups]
        self._pref_counts: np.ndarray | None = None
        self._cache: dict[str, float] = {}

    def pref_counts(self) -> np.ndarray:
        """counts[i, j]: how many judgment groups prefer docid i to docid j (trec_eval's
        counts array); only the pair measures of a topic with several groups need it."""
        if self._pref_counts is None:
            n = self.num_judged
            self._pref_counts = np.zeros((n, n), dtype=np.int32)
            for group in self.groups:
                self._pref_counts[np.ix_(group.docid, group.docid)] += group.preference_matrix()
        return self._pref_counts

    # --- building each judgment group ------------------------------------------------------

    def _group(self, jg, jsg, level, docid, docno) -> _Group:
        docs, local = np.unique(docid, return_inverse=True)
        m = docs.size
        retrieved = int(np.searchsorted(docs, self.judged_ret))
        final = np.empty(m)
        final[local] = level  # later rows win, as trec_eval's rel_array
        starts = np.flatnonzero(np.r_[True, jsg[1:] != jsg[:-1]])
        if starts.size == 1:
            # One subgroup: equivalence classes by level, every document once.
            ec = np.zeros(m, dtype=np.int64)
            ec[local] = np.cumsum(np.r_[False, level[1:] != level[:-1]])
            return _Group(docs, None, final, ec, retrieved)
        self._check_zero_levels(jg, level, local, docno)
        prefers = np.zeros((m, m), dtype=bool)
        sizes = np.diff(np.r_[starts, jsg.size])
        if starts.size > 64:  # many small subgroups (pairwise preferences): all pairs at once
            first, second = _pairs_within(starts, sizes)
            above = level[first] > level[second]
            prefers[local[first[above]], local[second[above]]] = True
        else:
            for start, size in zip(starts, sizes, strict=True):
                rows = slice(start, start + size)
                prefers[np.ix_(local[rows], local[rows])] |= (
                    level[rows][:, None] > level[rows][None, :]
                )
        prefers = self._closure(jg, prefers, docno, local)
        return _Group(docs, prefers, final, None, retrieved)

    def _check_zero_levels(self, jg, level, local, docno) -> None:
        # trec_eval checks each row against the level last given to its document.
        order = np.argsort(local, kind="stable")
        same = local[order][1:] == local[order][:-1]
        before, after = level[order][:-1], level[order][1:]
        clash = same & (((before > 0) & (after == 0)) | ((before == 0) & (after > 0)))
        if clash.any():
            name = docno[order][1:][clash][0]
            raise ValueError(
                f"prefs: topic {self.qid!r}, judgment group {jg!r}: document {name!r} has "
                "level 0 in one subgroup and a level above 0 in another"
            )

    def _closure(self, jg, prefers, docno, local) -> np.ndarray:
        m = prefers.shape[0]
        reach = prefers | np.eye(m, dtype=bool)
        while True:
            wider = (reach.astype(np.float32) @ reach.astype(np.float32)) > 0
            if np.array_equal(wider, reach):
                break
            reach = wider
        np.fill_diagonal(reach, False)
        both = reach & reach.T
        if both.any():
            a, b = np.argwhere(both)[0]
            names = {int(i): str(n) for i, n in zip(local, docno, strict=True)}
            raise ValueError(
                f"prefs: topic {self.qid!r}, judgment group {jg!r}: the preferences contradict "
                f"each other: {names[a]!r} and {names[b]!r} are each preferred to the other "
                "(directly or through other documents)"
            )
        return reach

    # --- measures ------------------------------------------------------------------------------

    def value(self, name: str) -> float:
        if name not in self._cache:
            self._cache[name] = float(getattr(self, f"_{name}")())
        return self._cache[name]

    def _total(self, *fields: str) -> int:
        return sum(int(counts[field]) for counts in self.jg_counts for field in fields)

    def _num_q(self):
        return 1.0

    def _prefs_num_prefs_poss(self):
        return self._total("poss_ret", "poss_imp", "notoccur")

    def _prefs_num_prefs_ful(self):
        return self._total("ful_ret", "ful_imp")

    def _prefs_num_prefs_ful_ret(self):
        return self._total("ful_ret")

    def _simp(self, ful: tuple[str, ...], poss: tuple[str, ...]) -> float:
        possible = self._total(*poss)
        return self._total(*ful) / possible if possible else 0.0

    def _prefs_simp(self):
        return self._simp(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp", "notoccur"))

    def _prefs_simp_ret(self):
        return self._simp(("ful_ret",), ("poss_ret",))

    def _prefs_simp_imp(self):
        return self._simp(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp"))

    def _avgjg(self, ful: tuple[str, ...], poss: tuple[str, ...]) -> float:
        total = 0.0
        for counts in self.jg_counts:
            possible = sum(int(counts[f]) for f in poss)
            if possible:
                total += sum(int(counts[f]) for f in ful) / possible
        return total / len(self.groups) if total > 0.0 else 0.0

    def _prefs_avgjg(self):
        return self._avgjg(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp", "notoccur"))

    def _prefs_avgjg_ret(self):
        return self._avgjg(("ful_ret",), ("poss_ret",))

    def _prefs_avgjg_imp(self):
        return self._avgjg(("ful_ret", "ful_imp"), ("poss_ret", "poss_imp"))

    def _pair(self, blocks: tuple[str, ...]) -> float:
        """Mean over document pairs (i < j in docid order) with a preference either way of
        counts[i, j] / (counts[i, j] + counts[j, i]), the pairs taken block by block."""
        if len(self.groups) == 1:
            # One group: each pair scores 1 when fulfilled and 0 otherwise, so the mean over
            # pairs is prefs_simp's ratio (sums of ones and zeros are exact in any order).
            ful = {"ret": ("ful_ret",), "imp": ("ful_imp",), "notoccur": ()}
            poss = {"ret": ("poss_ret",), "imp": ("poss_imp",), "notoccur": ("notoccur",)}
            return self._simp(
                tuple(f for b in blocks for f in ful[b]), tuple(f for b in blocks for f in poss[b])
            )
        k, n = self.judged_ret, self.num_judged
        c = self.pref_counts()
        ratios, pairs = [], 0
        spans = {"ret": (0, k, None), "imp": (0, k, (k, n)), "notoccur": (k, n, None)}
        for block in blocks:
            low, high, columns = spans[block]
            if columns is None:
                upper = np.triu(np.ones((high - low, high - low), dtype=bool), 1)
                forward, backward = c[low:high, low:high], c[low:high, low:high].T
                present = upper & ((forward > 0) | (backward > 0))
            else:
                forward = c[low:high, columns[0] : columns[1]]
                backward = c[columns[0] : columns[1], low:high].T
                present = (forward > 0) | (backward > 0)
            pairs += int(present.sum())
            if block != "notoccur":
                ratios.append(forward[present] / (forward[present] + backward[present]))
        if not pairs:
            return 0.0
        total = np.concatenate(ratios) if ratios else np.zeros(0)
        return (float(np.cumsum(total)[-1]) if total.size else 0.0) / pairs

    def _prefs_pair(self):
        return self._pair(("ret", "imp", "notoccur"))

    def _prefs_pair_ret(self):
        return self._pair(("ret",))

    def _prefs_pair_imp(self):
        return self._pair(("ret", "imp"))

    def _prefs_avgjg_Rnonrel(self):
        return self._rnonrel(retrieved_only=False)

    def _prefs_avgjg_Rnonrel_ret(self):
        return self._rnonrel(retrieved_only=True)

    def _rnonrel(self, *, retrieved_only: bool) -> float:
        total = 0.0
        for group, counts in zip(self.groups, self.jg_counts, strict=True):
            k = group.retrieved
            relevant = group.level > 0
            nonrel = group.level <= 0 if group.ec is not None else group.level == 0
            num_rel, num_rel_ret = int(relevant.sum()), int(relevant[:k].sum())
            if retrieved_only:
                big_r, big_n = num_rel_ret, int(nonrel[:k].sum())
            else:
                big_r, big_n = num_rel, int(nonrel.sum())
            if big_r >= big_n:
                if retrieved_only:
                    ful = int(counts["ful_ret"])
                    poss = int(counts["poss_ret"])
                else:
                    ful = int(counts["ful_ret"] + counts["ful_imp"])
                    poss = int(counts["poss_ret"] + counts["poss_imp"] + counts["notoccur"])
                ful += num_rel_ret * (big_r - big_n)
                poss += num_rel * (big_r - big_n)
            elif group.ec is not None:
                ful, poss = _recount_classes(group, num_rel, num_rel_ret, retrieved_only)
            else:
                ful, poss = _recount_subgroups(group, num_rel, retrieved_only)
            total += _ratio(ful, poss)
        # A NaN sum (a 0/0 ratio) is not > 0, so the topic scores 0, as in trec_eval.
        return total / len(self.groups) if total > 0.0 else 0.0


def _ratio(ful: int, poss: int) -> float:
    if poss == 0:
        return math.nan if ful == 0 else math.copysign(math.inf, ful)
    return ful / poss


def _count(prefers: np.ndarray, k: int) -> dict[str, int]:
    """A jg's preference counts by area (form_prefs_counts.c's A1-A5); documents 0..k-1 are
    the retrieved ones, in rank order."""
    top = prefers[:k, :k]
    ful_ret = int(np.triu(top, 1).sum())
    ful_imp = int(prefers[:k, k:].sum())
    return {
        "ful_ret": ful_ret,
        "poss_ret": int(top.sum()),
        "ful_imp": ful_imp,
        "poss_imp": ful_imp + int(prefers[k:, :k].sum()),
        "notoccur": int(prefers[k:, k:].sum()),
    }


def _before(ec: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For a jg with one subgroup (class ec per document, docid order): per document b, how
    many documents a < b are in a higher class (preferred to b) and in a lower one; and the
    same counting only the first k documents (the retrieved ones) as a."""
    classes = int(ec.max()) + 1 if ec.size else 1
    onehot = np.zeros((ec.size, classes), dtype=np.int64)
    onehot[np.arange(ec.size), ec] = 1
    before = np.cumsum(onehot, axis=0) - onehot
    upto = np.cumsum(before, axis=1)[np.arange(ec.size), ec]  # classes <= ec[b]
    same = before[np.arange(ec.size), ec]
    higher = upto - same
    lower = np.arange(ec.size) - upto
    in_top = np.bincount(ec[:k], minlength=classes)
    top_upto = np.cumsum(in_top)[ec]
    higher_top = top_upto - in_top[ec]
    lower_top = min(k, ec.size) - top_upto
    return higher, lower, higher_top, lower_top


def _count_classes(ec: np.ndarray, k: int) -> dict[str, int]:
    """_count for a jg with one subgroup, from its classes rather than a matrix."""
    higher, lower, higher_top, lower_top = _before(ec, k)
    ful_imp = int(higher_top[k:].sum())
    return {
        "ful_ret": int(higher[:k].sum()),
        "poss_ret": int(higher[:k].sum() + lower[:k].sum()),
        "ful_imp": ful_imp,
        "poss_imp": ful_imp + int(lower_top[k:].sum()),
        "notoccur": int((higher + lower - higher_top - lower_top)[k:].sum()),
    }


def _recount_classes(group: _Group, num_rel: int, num_rel_ret: int, retrieved_only: bool):
    """m_prefs_avgjg_Rnonrel*.c's recalculate() for a jg with one subgroup: every pair
    (a, b) with a in a higher class than b and b above the lowest class, then every pair
    (a, b) with a any document (the lowest class included, b itself too) and b among the
    first R (R_ret) documents of the lowest class; fulfilled when a comes before b and is
    retrieved. _ret: only retrieved documents, as a and as b."""
    ec, k = group.ec, group.retrieved
    last = int(ec.max())
    lowest = np.flatnonzero(ec == last)
    if retrieved_only:
        scope = k
        target = lowest[:num_rel_ret]
        target = target[target < k]
    else:
        scope = ec.size
        target = lowest[:num_rel]
    higher, _, higher_top, _ = _before(ec, k)
    # a fulfils when it comes before b and is retrieved: for b < k any a < b, else a < k.
    fulfilling = np.where(np.arange(ec.size) < k, higher, higher_top)
    above = np.flatnonzero(ec[:scope] < last)
    sizes = np.bincount(ec[:scope], minlength=last + 1)[:last]
    between = int((sizes * (np.cumsum(sizes) - sizes)).sum())
    ful = int(fulfilling[above].sum()) + int(np.minimum(target, k).sum())
    counted = between + scope * target.size
    return ful, counted


def _recount_subgroups(group: _Group, num_rel: int, retrieved_only: bool):
    """recalculate() for a jg with subgroups: non-relevant documents after the R-th one (in
    docid order; among the retrieved for _ret) are dropped, the areas counted again."""
    k = group.retrieved
    zero = group.level == 0
    scan = zero[:k] if retrieved_only else zero
    seen = np.cumsum(scan)
    beyond = np.flatnonzero(seen == num_rel + 1)
    first_dropped = beyond[0] if beyond.size else scan.size
    dropped = zero & (np.arange(zero.size) >= first_dropped)
    keep = ~dropped
    prefers = group.prefers[np.ix_(keep, keep)]
    counts = _count(prefers, int(keep[:k].sum()))
    if retrieved_only:
        return counts["ful_ret"], counts["poss_ret"]
    return (
        counts["ful_ret"] + counts["ful_imp"],
        counts["poss_ret"] + counts["poss_imp"] + counts["notoccur"],
    )


def _pairs_within(starts: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (i, j) of row indices within each group of consecutive rows."""
    squares = sizes * sizes
    group = np.repeat(np.arange(sizes.size), squares)
    offset = np.arange(int(squares.sum())) - np.repeat(np.cumsum(squares) - squares, squares)
    size = sizes[group]
    return starts[group] + offset // size, starts[group] + offset % size
