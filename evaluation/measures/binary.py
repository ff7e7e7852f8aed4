"""Measures of where the relevant documents (grade >= l) are ranked (trec_eval's m_map.c,
m_P.c, m_recall.c, m_Rprec*.c, m_bpref.c, m_infap.c, m_iprec_at_recall.c, m_11pt_avg.c,
m_binG.c, m_rel_P.c, m_yaap.c, ...). Pure.

For one topic: rel(i) when the document at rank i has grade >= l; R = num_rel; prec(i) =
|{j <= i : rel(j)}| / i; rel@k = |{i <= k : rel(i)}|.
    P@k = rel@k / k     recall@k = rel@k / R     success@k = [rel@k > 0]
    relative_P@k = rel@k / min(k, R)     Rprec = rel@R / R
    Rprec_mult(m) = rel@c / c, c = (long)(m R + 0.9) (0 when c = 0)
    map = sum of prec(i) over relevant i, / R; map_cut@k over relevant i <= k
    gm_map, gm_bpref: per topic log(max(value, 0.00001)), the mean is exp(mean of those)
    recip_rank = 1 / the first relevant rank
    bpref = (1/R) sum over relevant i of (1 - min(n(i), R) / min(N, R)), n(i) the judged
        non-relevant (0 <= grade < l) documents above i, N all of the topic's (1 while n = 0)
    infAP = (1/R) sum over relevant i (0-based j = i - 1) of 1 when j = 0, else
        1/(j+1) + (j/(j+1)) ((r + n + u) / j) ((r + e) / (r + n + 2e)), with r, n, u the
        relevant, judged non-relevant and negative-graded documents above i, e = 0.00001
    iprec_at_recall(p) = max prec(i) over relevant i at or after the m-th relevant one,
        m = (long)(p R + 0.9) in 9.0.8, lround(p R) in 10.0 (m = 0 reads as 1); 0 when m
        exceeds the relevant documents retrieved
    11pt_avg(p1..pn) = the mean of iprec_at_recall(p1..pn)
    binG = (1/R) sum over relevant i of 1 / log2(2 + documents above i not relevant)
    yaap = log((1 + S) / (1 + R - S)), S = sum of prec(i) over relevant i
"""

import math

import numpy as np

from .sequences import Events, divide, log, log2, suffix_maxima

__all__ = ["MIN_GEO_MEAN", "BinaryMeasures"]

MIN_GEO_MEAN = 0.00001  # trec_eval.h: the floor under map before gm_map takes its log
INFAP_EPSILON = 0.00001


class BinaryMeasures:
    def _map(self):
        return divide(self.relevant.sum_first(None), self.judgments.num_rel)

    def _gm_map(self):
        return log(np.maximum(self._map(), MIN_GEO_MEAN))

    def _map_cut(self, k):
        return divide(self.relevant.sum_within(k), self.judgments.num_rel)

    def _P(self, k):
        return self.relevant.count_within(k) / k

    def _recall(self, k):
        return divide(self.relevant.count_within(k), self.judgments.num_rel)

    def _success(self, k):
        return (self.relevant.count_within(k) > 0).astype(np.float64)

    def _relative_P(self, k):
        return divide(self.relevant.count_within(k), np.minimum(k, self.judgments.num_rel))

    def _Rprec(self):
        num_rel = self.judgments.num_rel
        return divide(self.relevant.count_within(num_rel), num_rel)

    def _Rprec_mult(self, multiple):
        cutoff = np.floor(multiple * self.judgments.num_rel + 0.9).astype(np.int64)
        return divide(self.relevant.count_within(cutoff), cutoff)

    def _recip_rank(self):
        first_rank = self.relevant.first(self.relevant.rank, np.ones(self.n, int))
        return divide(np.ones(self.n), first_rank)

    def _bpref(self):
        topic = self.relevant.topic
        num_rel = self.judgments.num_rel[topic]
        num_nonrel = self.judgments.num_nonrel[topic]
        above = self._nonrel_above_relevant
        with np.errstate(divide="ignore", invalid="ignore"):
            penalty = np.minimum(above, num_rel) / np.minimum(num_nonrel, num_rel)
        terms = np.where(above > 0, 1.0 - penalty, 1.0)
        return divide(self._sum_over_relevant(terms), self.judgments.num_rel)

    def _gm_bpref(self):
        return log(np.maximum(self._bpref(), MIN_GEO_MEAN))

    def _infAP(self):
        rel_above = (self.relevant.position - 1).astype(np.int64)
        nonrel = self._nonrel_above_relevant.astype(np.int64)
        pooled = (self.ranking.grade < 0).astype(np.int64)
        unjudged = self._count_above(self.ranking, self._relevant_mask(), pooled)
        j = (self.relevant.rank - 1).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_above + nonrel + unjudged) / j) * (
                (rel_above + INFAP_EPSILON) / (rel_above + nonrel + 2 * INFAP_EPSILON)
            )
        terms = np.where(j == 0, 1.0, terms)
        return divide(self._sum_over_relevant(terms), self.judgments.num_rel)

    def _binG(self):
        not_relevant_above = self.relevant.rank - self.relevant.position
        terms = 1.0 / log2(2 + not_relevant_above)
        return divide(self._sum_over_relevant(terms), self.judgments.num_rel)

    def _yaap(self):
        total = self.relevant.sum_first(None)
        num_rel = self.judgments.num_rel
        return np.array(
            [math.log((1.0 + s) / (1.0 + r - s)) for s, r in zip(total, num_rel, strict=True)]
        )

    def _iprec_at_recall(self, point):
        needed = self._relevant_needed(point)
        if self._best_after is None:
            self._best_after = suffix_maxima(self.precision, self.relevant.position)
        value = self.relevant.first(self._best_after, np.maximum(needed, 1))
        value = np.where(needed <= self.relevant.count, value, 0.0)
        if not self.options.judged_only:
            return value
        # -J can leave nothing retrieved; trec_eval's interpolated precision then starts at
        # 0/0, so the points needing no relevant document get NaN.
        return np.where((self.num_ret == 0) & (needed == 0), np.nan, value)

    def _11pt_avg(self, measure):
        # m_11pt_avg.c adds the points from the last one given to the first.
        total = np.zeros(self.n)
        for point in reversed(measure.cutoffs):
            total = total + self._iprec_at_recall(point)
        return total / len(measure.cutoffs)

    def _relevant_needed(self, point):
        wanted = point * self.judgments.num_rel
        if self.options.trec_eval_version == 9:
            return np.floor(wanted + 0.9).astype(np.int64)
        floor = np.floor(wanted)  # lround: halves away from zero
        return (floor + (wanted - floor >= 0.5)).astype(np.int64)

    def _relevant_mask(self):
        grade = self.ranking.grade
        return (grade >= 0) & (grade >= self.options.relevance_level)

    def _sum_over_relevant(self, terms: np.ndarray) -> np.ndarray:
        """Per topic, terms (one per relevant document retrieved) added in rank order."""
        sums = Events(self.relevant.topic, self.relevant.rank, self.n)
        sums.set_values(terms)
        return sums.sum_first(None)
