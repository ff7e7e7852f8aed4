"""Judge what tells the systems apart, after Minimal Test Collections (Carterette, Allan and
Sitaraman, SIGIR 2006), for nDCG@k.

With linear gains (trec_eval's ``ndcg_cut``), the difference in nDCG@k between runs a and b
on topic t is a sum over documents: ``sum_d g_d (v_da - v_db) / IDCG_t``, where ``g_d`` is the
document's grade and ``v_da = 1 / log2(rank + 1)`` when run a ranks d within the top k (else
0). A document's grade can move the comparison of a and b by ``|v_da - v_db| / IDCG_t`` per
unit of grade; the document judged next is the one with the largest such weight summed over
the pairs of runs whose order is still open. MTC's second idea decides which pairs are open:
with every unjudged document set to 0 or to the top grade, the bounds on each pair's
difference in mean nDCG@k; a pair whose bounds exclude 0 is decided and stops attracting
judgments. Bounds are recomputed after every ``recheck`` grades (1% of the pool by default).

Where the paper leaves room: ``IDCG_t`` is not known until the topic is judged; we use the
ideal DCG of the grades so far, at least 1 (one relevant document of grade 1 at rank 1),
which makes a topic with few relevant documents found so far weigh more, as it does in the
mean of nDCG. Ties between equal weights are broken by a seeded random order. ``rankings``
must list each run's documents in trec_eval's order (score descending, ties by docno
descending). Pure: numpy only.
"""

import math
import random

import numpy as np

from annotation.strategies.base import Strategy

CHUNK = 2048


def discounts(rankings, systems, index, *, k):
    """N x S matrix: 1/log2(rank+1) where the run ranks the pool document within the top k."""
    v = np.zeros((len(index), len(systems)), dtype=np.float64)
    for column, run in enumerate(systems):
        for qid, docnos in rankings[run].items():
            for rank, docno in enumerate(docnos[:k], start=1):
                row = index.get((str(qid), str(docno)))
                if row is not None:
                    v[row, column] = 1.0 / math.log2(rank + 1)
    return v


def ideal_dcg(grades, *, k) -> float:
    """Ideal DCG@k of a topic's grades (linear gains, as trec_eval)."""
    top = sorted((g for g in grades if g > 0), reverse=True)[:k]
    return sum(g / math.log2(i + 2) for i, g in enumerate(top))


def pair_bounds(v, weight, known, unjudged, *, top_grade):
    """Bounds on each pair's difference of mean nDCG, (lower, upper), both S x S.

    ``v``: N x S discounts; ``weight``: per document 1 / (IDCG_t * T); ``known``: per
    document the grade, 0 where unjudged; ``unjudged``: boolean mask. Entry (a, b) bounds
    mean nDCG(a) - mean nDCG(b) over every grading of the unjudged documents in
    [0, top_grade].
    """
    scaled = v * weight[:, None]
    diff = (scaled * known[:, None]).sum(axis=0)
    middle = diff[:, None] - diff[None, :]
    up = np.zeros_like(middle)
    down = np.zeros_like(middle)
    rows = np.flatnonzero(unjudged & v.any(axis=1))
    for start in range(0, len(rows), CHUNK):
        block = (scaled[rows[start : start + CHUNK]] * top_grade).astype(np.float32)
        delta = block[:, :, None] - block[:, None, :]
        positive = np.maximum(delta, 0).sum(axis=0, dtype=np.float64)
        up += positive
        down += positive.T  # max(-delta_ab, 0) = max(delta_ba, 0)
    return middle - down, middle + up


def open_weight(v, open_pairs, rows=None):
    """Per document (of ``rows``, default all): sum over open pairs (a < b) of
    |v_da - v_db|; 0 for the other documents."""
    out = np.zeros(len(v))
    mask = np.triu(open_pairs, 1).astype(np.float32)
    rows = np.flatnonzero(v.any(axis=1)) if rows is None else rows[v[rows].any(axis=1)]
    if not mask.any():
        return out
    for start in range(0, len(rows), CHUNK):
        at = rows[start : start + CHUNK]
        block = v[at].astype(np.float32)
        delta = np.abs(block[:, :, None] - block[:, None, :])
        out[at] = np.einsum("nab,ab->n", delta, mask)
    return out


class Discriminative(Strategy):
    name = "discriminative"

    def __init__(
        self,
        pairs,
        rankings=None,
        *,
        k: int = 10,
        top_grade: int = 3,
        recheck: int | None = None,
        **options,
    ):
        super().__init__(pairs, rankings, **options)
        if k < 1:
            raise ValueError(f"the measure's cutoff k must be at least 1, got {k}")
        if top_grade < 1:
            raise ValueError(f"top_grade must be at least 1, got {top_grade}")
        self.k, self.top_grade = k, top_grade
        rng = random.Random(str((self.seed, "mtc")))
        topics = sorted({qid for qid, _ in self.pairs})
        rng.shuffle(topics)  # seeded tie-break between topics
        by_topic: dict[str, list[str]] = {qid: [] for qid in topics}
        for qid, docno in sorted(self.pairs):
            by_topic[qid].append(docno)
        order = []
        for qid in topics:
            docnos = by_topic[qid]
            rng.shuffle(docnos)  # seeded tie-break inside a topic
            order.extend((qid, docno) for docno in docnos)
        self.order_pairs = order
        self.index = {pair: row for row, pair in enumerate(order)}
        self.topic_of = np.repeat(np.arange(len(topics)), [len(by_topic[q]) for q in topics])
        self.starts = np.concatenate([[0], np.cumsum([len(by_topic[q]) for q in topics])])
        self.topics = topics
        self.topic_index = {qid: t for t, qid in enumerate(topics)}
        self.systems = sorted(self.rankings)
        self.v = discounts(self.rankings, self.systems, self.index, k=k)
        n, s = self.v.shape
        self.known = np.zeros(n)
        self.unjudged = np.ones(n, dtype=bool)
        self.available = np.ones(n, dtype=bool)
        self.topic_grades: list[list[int]] = [[] for _ in topics]
        self.idcg = np.ones(len(topics))
        self.open_pairs = ~np.eye(s, dtype=bool)
        self.recheck = recheck or max(1, n // 100)
        self._since = 0
        self._rescore()

    # -- model ------------------------------------------------------------------------------

    def doc_weight(self):
        """Per document 1 / (IDCG_t * T): its share of the mean over topics."""
        return 1.0 / (self.idcg[self.topic_of] * max(1, len(self.topics)))

    def bounds(self):
        """(lower, upper): S x S bounds on mean nDCG@k(a) - mean nDCG@k(b)."""
        return pair_bounds(
            self.v, self.doc_weight(), self.known, self.unjudged, top_grade=self.top_grade
        )

    def _rescore(self):
        if len(self.systems) > 1 and hasattr(self, "base"):
            lower, upper = self.bounds()
            decided = (lower > 0) | (upper < 0)
            still_open = ~decided & ~np.eye(len(self.systems), dtype=bool)
            if (still_open == self.open_pairs).all():
                return  # nothing decided since: the weights stand
            self.open_pairs = still_open
        self.base = open_weight(self.v, self.open_pairs, np.flatnonzero(self.available))
        self.best = np.full(len(self.topics), -np.inf)
        self.best_row = np.zeros(len(self.topics), dtype=np.int64)
        for t in range(len(self.topics)):
            self._topic_best(t)

    def _topic_best(self, t):
        lo, hi = self.starts[t], self.starts[t + 1]
        values = np.where(self.available[lo:hi], self.base[lo:hi], -np.inf)
        if hi > lo:
            at = int(np.argmax(values))
            self.best[t], self.best_row[t] = values[at], lo + at
        else:
            self.best[t] = -np.inf

    # -- contract ---------------------------------------------------------------------------

    def _next(self):
        if not len(self.topics):
            return None
        score = self.best / self.idcg
        t = int(np.argmax(score))
        if score[t] == -np.inf:
            return None
        row = int(self.best_row[t])
        self.available[row] = False
        self._topic_best(t)
        return self.order_pairs[row]

    def _learn(self, pair, grade):
        row = self.index[pair]
        t = int(self.topic_of[row])
        if self.available[row]:
            self.available[row] = False
            self._topic_best(t)
        self.unjudged[row] = False
        self.known[row] = grade
        if grade > 0:
            self.topic_grades[t].append(grade)
            self.idcg[t] = max(1.0, ideal_dcg(self.topic_grades[t], k=self.k))
        self._since += 1
        if self._since >= self.recheck:
            self._since = 0
            self._rescore()
