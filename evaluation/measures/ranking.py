"""trec_eval's ranking of a run, computed for the judged documents only.

trec_eval (form_res_rels.c) ranks a topic's documents by score descending and breaks ties by
docno descending in strcmp (byte) order; the rank column of the file is ignored. Version
9.0.8 keeps scores as C floats, so scores equal once rounded to float32 tie; 10.0 keeps
doubles. `-M depth` keeps the first `depth` documents of that order.

Every measure we compute depends on a topic's unjudged documents only through how many there
are and where they push the judged ones, so instead of sorting millions of lines with their
docno strings we:
  1. give each line a 64-bit key that sorts like (topic, score descending): the topic number
     (or, when each topic's lines form one block, the block number) in the high bits, an
     order-preserving encoding of the score below it;
  2. sort the keys alone (numbers only, and skipped when the run is already in that order);
  3. find the judged lines by looking up each line's (topic, 64-bit docno hash) in a table
     of the judgments laid out topic by topic, then confirm each match by comparing the
     docno strings;
  4. rank each judged line: the lines of its topic with a smaller key come first; lines with
     an equal key (true ties, or for 10.0 doubles that agree in the bits the key keeps) are
     put in exact (score desc, docno desc) order, looking at those few lines only.
"""

import sys
from dataclasses import dataclass

import numpy as np
import polars as pl

from .judged_lookup import few, judged_lines, series_slices

__all__ = [
    "ORDERS",
    "TIES",
    "JudgedRanking",
    "QidBlocks",
    "rank_in_order",
    "rank_judged_documents",
]

TIES = ("docno_desc", "docno_asc", "line")

# How ir_measures' default provider for each measure ranks a run: (scores compared as
# doubles, how ties are broken). None: trec_eval's own order (the request's version).
ORDERS: dict[str, tuple[bool, str] | None] = {
    "ERR": (True, "docno_desc"),  # gdeval.pl: Perl numbers, then docno descending
    "RR": (True, "docno_asc"),  # msmarco: sorted(key=(-score, docno))
    "Judged": (True, "docno_asc"),  # judged: sorted(key=(-score, docno)); also judged.k
    "RBP": (True, "line"),  # cwl_eval: a stable sort of the run's lines by score
    "graded RBP": None,
}


@dataclass(frozen=True)
class JudgedRanking:
    """Where the judged documents of a run land in trec_eval's ranking.

    num_ret: per topic, documents ranked (after the depth cut).
    topic, rank, grade: one entry per judged document within the depth, sorted by
        (topic, rank); rank is 1-based; grade is the qrels grade, negative ones included.
    tied: whether a judged document's score ties another document's (as compared). When
        none does, every order of tied scores (and doubles or float32, since rounding keeps
        order) ranks the judged documents alike, so this ranking serves every order.
    """

    num_ret: np.ndarray
    topic: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    tied: bool = True


class QidBlocks:
    """A qid column read as runs of equal values.

    Run and qrels files are normally grouped by topic, so mapping qids to topic numbers
    costs one join per topic rather than one per line; a column that is not grouped falls
    back to joining every line.

    A column of a few lines (Hypothesis' collections, a small upload) is read in Python:
    there each polars call costs more than the work, and a dict gives the same numbers.
    `few_unique` then lists its distinct qids (None for a longer column).
    """

    def __init__(self, qid: pl.Series) -> None:
        self._lengths: np.ndarray | None = None
        self.few_unique: list[str] | None = None
        if few(qid.len()):
            values = qid.to_list()
            starts = [i for i in range(len(values)) if i == 0 or values[i] != values[i - 1]]
            if len(starts) * 8 <= len(values):
                lengths = np.diff(np.array([*starts, len(values)], dtype=np.int64))
                values, self._lengths = [values[i] for i in starts], lengths
            self._few: list[str] | None = values
            self.few_unique = list(dict.fromkeys(values))
            return
        self._few = None
        blocks = qid.rle().struct.unnest()
        if blocks.height * 8 <= qid.len():
            self._qids = blocks.get_column("value")
            self._lengths = blocks.get_column("len").to_numpy().astype(np.int64)
        else:
            self._qids = qid
        self._unique = self._qids.unique()

    @property
    def unique(self) -> pl.Series:
        """The distinct qids, in no particular order."""
        if self.few_unique is not None:
            return pl.Series("qid", self.few_unique, dtype=pl.String)
        return self._unique

    def topic_numbers(self, topics: pl.Series) -> tuple[np.ndarray, "_Blocks | None"]:
        """Per line, the index of its qid in `topics` or -1; and the blocks of lines of those
        topics, in order (None when the column is not grouped)."""
        if self._few is not None and few(topics.len()):
            index = {qid: number for number, qid in enumerate(topics.to_list())}
            numbers = np.array([index.get(qid, -1) for qid in self._few], dtype=np.int64)
        else:
            qids = self._qids if self._few is None else pl.Series(self._few, dtype=pl.String)
            index = pl.DataFrame({"qid": topics, "topic": np.arange(topics.len(), dtype=np.int64)})
            numbers = (
                pl.DataFrame({"qid": qids})
                .join(index, on="qid", how="left", maintain_order="left")
                .get_column("topic")
                .fill_null(-1)
                .to_numpy()
            )
        if self._lengths is None:
            return numbers, None
        lengths = self._lengths
        kept = numbers >= 0
        # int32 halves the per-line array; topic numbers stay far below 2^31.
        return np.repeat(numbers.astype(np.int32), lengths), _Blocks(numbers[kept], lengths[kept])


@dataclass(frozen=True)
class _Blocks:
    """Consecutive lines of one topic: the topic number and line count of each block."""

    topic: np.ndarray
    length: np.ndarray

    @property
    def start(self) -> np.ndarray:
        return np.cumsum(self.length) - self.length


def rank_judged_documents(
    judgments: pl.DataFrame,
    run: pl.DataFrame,
    run_blocks: QidBlocks,
    topics: pl.Series,
    *,
    trec_eval_version: int,
    depth: int | None,
    ties: str = "docno_desc",
) -> JudgedRanking:
    """Rank `run` like trec_eval and return the judged documents with their ranks.

    judgments: topic (index into `topics`), docno, grade; one row per judged pair.
    run_blocks: QidBlocks(run["qid"]). Run lines of topics not in `topics` are ignored.
    ties: how equal scores are ordered: "docno_desc" (trec_eval, gdeval), "docno_asc"
        (ir_measures' msmarco and judged providers) or "line" (the file's order: cwl_eval).
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(TIES)}, got {ties!r}")
    n_topics = topics.len()
    line_topic, blocks = run_blocks.topic_numbers(topics)
    kept = line_topic >= 0
    kept_lines = None if kept.all() else np.flatnonzero(kept)
    docno, score = run.get_column("docno"), run.get_column("score")
    # A run read in pieces comes in many chunks, and gathering the judged lines' docnos (and
    # the tied lines') from one chunk costs a fifth of what it costs across twenty.
    docno = docno.rechunk()
    if kept_lines is not None:
        line_topic, docno, score = line_topic[kept_lines], docno[kept_lines], score[kept_lines]
    scores = _ranking_scores(score, trec_eval_version)
    del score
    if blocks is None:
        counts = np.bincount(line_topic, minlength=n_topics)
    else:
        counts = np.bincount(blocks.topic, weights=blocks.length, minlength=n_topics)
        counts = counts.astype(np.int64)
    topic_start = np.cumsum(counts) - counts

    # Matching first, so its large temporaries are gone before the keys are built.
    lines, grade = judged_lines(judgments, topics, docno, line_topic)
    topic = line_topic[lines].astype(np.int64)
    if blocks is not None and np.unique(blocks.topic).size == blocks.topic.size:
        # Each topic's lines form one block. Keys made of the block number instead of the
        # topic number sort the same lines the same way, but follow the file's order of
        # topics, so a run that ranks each topic (the usual case) needs no sorting at all.
        del line_topic
        block = np.repeat(np.arange(blocks.topic.size, dtype=np.int32), blocks.length)
        keys = _order_keys(block, scores, blocks.topic.size)
        del block
        order = _KeyOrder(keys, None)
        start_of = np.zeros(n_topics, dtype=np.int64)
        start_of[blocks.topic] = blocks.start
    else:
        keys = _order_keys(line_topic, scores, n_topics)
        del line_topic
        order = _KeyOrder(keys, blocks)
        start_of = topic_start
    first, tied = order.place(lines)
    rank = first - start_of[topic] + 1
    if tied.any():
        rank[tied] += _places_among_ties(order, scores, docno, lines[tied], first[tied], ties)

    if depth is not None:
        within = rank <= depth
        topic, rank, grade = topic[within], rank[within], grade[within]
    by_rank = np.argsort(topic * (int(rank.max(initial=0)) + 1) + rank)
    num_ret = counts if depth is None else np.minimum(counts, depth)
    return JudgedRanking(
        num_ret, topic[by_rank], rank[by_rank], grade[by_rank], tied=bool(tied.any())
    )


def rank_in_order(
    judgments: pl.DataFrame,
    run: pl.DataFrame,
    run_blocks: QidBlocks,
    topics: pl.Series,
    order: tuple[bool, str] | None,
    *,
    trec_eval_version: int,
    depth: int | None,
) -> JudgedRanking:
    """rank_judged_documents in one of ORDERS' orders (None: trec_eval's own, the version's
    scores and docno descending)."""
    doubles, ties = order if order is not None else (False, "docno_desc")
    return rank_judged_documents(
        judgments,
        run,
        run_blocks,
        topics,
        trec_eval_version=10 if doubles else trec_eval_version,
        depth=depth,
        ties=ties,
    )


def _ranking_scores(score: pl.Series, trec_eval_version: int) -> np.ndarray:
    """The scores trec_eval compares: float32 in 9.0.8, doubles in 10.0.

    Converted a slice at a time, so a run read in pieces is never copied whole as doubles
    first. Adding +0.0 turns -0.0 into +0.0; C compares them equal, so they must tie.
    """
    dtype = np.float32 if trec_eval_version == 9 else np.float64
    ranked = np.empty(score.len(), dtype=dtype)
    with np.errstate(over="ignore"):  # doubles beyond float32's range become infinite
        for start, piece in series_slices(score):
            ranked[start : start + piece.size] = piece
    ranked += dtype(0.0)
    return ranked


def _order_keys(topic: np.ndarray, scores: np.ndarray, n_topics: int) -> np.ndarray:
    """uint64 keys that sort like (topic ascending, score descending).

    A score's IEEE bits, read as an unsigned integer, sort like the score once the bits of a
    negative are all flipped and the sign bit of a positive is set; inverting that gives
    descending order: positives xor 0111..1, negatives unchanged. A float32 score fills the
    low 32 bits under a 32-bit topic number and loses nothing; a double loses its lowest bits
    to make room for the topic, so distinct doubles may share a key, and
    `_places_among_ties` orders such lines exactly.
    """
    if scores.dtype == np.float32:
        bits, width = scores.view(np.uint32), 32
    else:
        bits, width = scores.view(np.uint64), 64
    unsigned = bits.dtype.type
    descending = (bits >> unsigned(width - 1)) - unsigned(1)  # all ones for positives, else 0
    descending >>= unsigned(1)
    descending ^= bits
    keys = np.empty(topic.size, dtype=np.uint64)
    if width == 32:
        if sys.byteorder != "little":
            return (topic.astype(np.uint64) << np.uint64(32)) | descending
        words = keys.view(np.uint32).reshape(-1, 2)  # [low word, high word]
        words[:, 0] = descending
        words[:, 1] = topic
        return keys
    topic_bits = np.uint64(max(1, (n_topics - 1).bit_length()))
    np.left_shift(topic.astype(np.uint64), np.uint64(64) - topic_bits, out=keys)
    keys |= descending >> topic_bits
    return keys


def _is_sorted(keys: np.ndarray) -> bool:
    return keys.size < 2 or bool(np.all(keys[1:] >= keys[:-1]))


class _KeyOrder:
    """The keys sorted, and where a line's key sits among them.

    Sorting is cheap in the usual cases: a run already in trec_eval's order (sorted as is),
    or one whose topics are each ranked but listed in another order (numeric qids, say),
    where putting whole blocks in order is enough; then each line's sorted position is known
    without searching. Otherwise the keys are sorted (numbers only) and searched.
    """

    def __init__(self, keys: np.ndarray, blocks: "_Blocks | None") -> None:
        self.keys = keys
        self._line_shift: np.ndarray | None = None  # sorted position - line, per block
        self._block_start: np.ndarray | None = None
        self.lines_at: np.ndarray | None = None  # line at each sorted position (None: same)
        self.known = True
        if _is_sorted(keys):
            self.sorted = keys
            return
        if blocks is not None and blocks.length.size > 1:
            start = blocks.start
            order = np.argsort(keys[start], kind="stable")
            length = blocks.length[order]
            new_start = np.cumsum(length) - length
            lines_at = np.repeat(start[order] - new_start, length)
            lines_at += np.arange(keys.size)
            candidate = keys[lines_at]
            if _is_sorted(candidate):
                self.sorted, self.lines_at = candidate, lines_at
                shift = np.empty_like(start)
                shift[order] = new_start - start[order]
                self._line_shift, self._block_start = shift, start
                return
        self.sorted = np.sort(keys)
        self.known = False

    def place(self, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each line (sorted), the first sorted position holding its key, and whether
        other lines share the key."""
        key = self.keys[lines]
        if not self.known:
            first = np.searchsorted(self.sorted, key, "left")
            return first, np.searchsorted(self.sorted, key, "right") - first > 1
        position = lines
        if self._line_shift is not None:
            block = np.searchsorted(self._block_start, lines, "right") - 1
            position = lines + self._line_shift[block]
        last = self.sorted.size - 1
        same_before = (position > 0) & (self.sorted[np.maximum(position - 1, 0)] == key)
        same_after = (position < last) & (self.sorted[np.minimum(position + 1, last)] == key)
        first = position.copy()
        first[same_before] = np.searchsorted(self.sorted, key[same_before], "left")
        return first, same_before | same_after

    def lines_between(self, first: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """The lines at sorted positions [first, stop) of each range, concatenated (only
        when `known`: after a full sort, which line sits where is not kept)."""
        length = stop - first
        offset = np.cumsum(length) - length
        position = np.arange(length.sum()) + np.repeat(first - offset, length)
        return position if self.lines_at is None else self.lines_at[position]


def _places_among_ties(
    order: _KeyOrder,
    scores: np.ndarray,
    docno: pl.Series,
    lines: np.ndarray,
    first: np.ndarray,
    ties: str,
) -> np.ndarray:
    """For lines sharing their key with others: how many of those come first in the order
    (score descending, then `ties`: docno descending or ascending in byte order, or line)."""
    group_first = np.unique(first)
    if order.known:
        stop = np.searchsorted(order.sorted, order.sorted[group_first], "right")
        members = order.lines_between(group_first, stop)
    else:
        tie_keys = pl.Series(order.sorted[group_first])
        members = np.flatnonzero(pl.Series(order.keys).is_in(tie_keys.implode()).to_numpy())
    if few(members.size):
        return _few_places_among_ties(order.keys, scores, docno, members, lines, ties)
    group = pl.DataFrame(
        {
            "key": order.keys[members],
            "score": scores[members],
            "docno": docno.gather(members),
            "line": members,
        }
    )
    tie_column = "line" if ties == "line" else "docno"
    group = group.sort(["key", "score", tie_column], descending=[False, True, ties == "docno_desc"])
    group_keys = group.get_column("key").to_numpy()
    place = np.arange(group.height) - np.searchsorted(group_keys, group_keys, "left")
    places = pl.DataFrame({"line": group.get_column("line"), "place": place})
    return (
        pl.DataFrame({"line": lines})
        .join(places, on="line", how="left", maintain_order="left")
        .get_column("place")
        .to_numpy()
    )


def _few_places_among_ties(
    keys: np.ndarray,
    scores: np.ndarray,
    docno: pl.Series,
    members: np.ndarray,
    lines: np.ndarray,
    ties: str,
) -> np.ndarray:
    """_places_among_ties for a few tied lines (`members`: every line sharing a key with one
    of `lines`), sorted in Python: by the tie column first, then stably by key and score."""
    key, score = keys[members].tolist(), scores[members].tolist()
    tie = members.tolist() if ties == "line" else docno.gather(members).to_list()
    order = sorted(range(members.size), key=tie.__getitem__, reverse=ties == "docno_desc")
    order.sort(key=lambda i: (key[i], -score[i]))
    place: dict[int, int] = {}
    first_of: dict[int, int] = {}
    for position, i in enumerate(order):
        place[int(members[i])] = position - first_of.setdefault(key[i], position)
    return np.array([place[line] for line in lines.tolist()], dtype=np.int64)
