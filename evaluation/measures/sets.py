"""Counts, set measures and the relevance string (trec_eval's m_num_*.c, m_set_*.c,
m_utility.c, m_relstring.c, m_unjudged.c): they look at how many documents were retrieved
and judged, not at where. Pure.

For one topic: ret = num_ret, R = num_rel (grade >= l), rr = num_rel_ret.
    set_P = rr / ret     set_recall = rr / R     set_relative_P = rr / min(ret, R)
    set_map = rr^2 / (ret R)     set_F(b) = (b + 1) P R / (b P + R), P = rr/ret, R = rr/R
    utility(a,b,c,d) = a rr + b (ret - rr) + c (R - rr) + d (N + rr - ret - R), N = 0
    num_nonrel_judged_ret = judged documents retrieved with 0 <= grade < l
    unj@k = the share of the first k ranks (k even past ret) unjudged or judged negative
    relstring.N = one character per rank up to N: the grade (0-9, '>' above 9), '-' for an
        unjudged document, '.' for a negative grade (trec_eval's "in the pool, unjudged")
"""

import numpy as np

from .sequences import divide

__all__ = ["SetMeasures"]


class SetMeasures:
    def _num_q(self):
        return np.ones(self.n)

    def _num_ret(self):
        return self.num_ret

    def _num_rel(self):
        return self.judgments.num_rel

    def _num_rel_ret(self):
        return self.relevant.count

    def _num_nonrel_judged_ret(self):
        return self.nonnegative.count - self.relevant.count

    def _set_P(self):
        return divide(self.relevant.count, self.num_ret)

    def _set_recall(self):
        return divide(self.relevant.count, self.judgments.num_rel)

    def _set_relative_P(self):
        return divide(self.relevant.count, np.minimum(self.num_ret, self.judgments.num_rel))

    def _set_map(self):
        rr = self.relevant.count.astype(np.float64)
        return divide(rr * rr, self.num_ret.astype(np.float64) * self.judgments.num_rel)

    def _set_F(self, measure):
        (beta,) = measure.cutoffs
        precision = divide(self.relevant.count, self.num_ret)
        recall = divide(self.relevant.count, self.judgments.num_rel)
        return divide((beta + 1.0) * precision * recall, beta * precision + recall)

    def _utility(self, measure):
        a, b, c, d = measure.cutoffs
        rr = self.relevant.count.astype(np.float64)
        ret = self.num_ret.astype(np.float64)
        rel = self.judgments.num_rel.astype(np.float64)
        docs = float(self.options.num_docs_in_coll)  # -N (trec_eval's num_docs_in_coll)
        return a * rr + b * (ret - rr) + c * (rel - rr) + d * (docs + rr - ret - rel)

    def _unj(self, k):
        return (np.minimum(self.num_ret, k) - self.nonnegative.count_within(k)) / k

    def _judged(self, k):
        return divide(self.judged_in_order.count_within(k), np.minimum(self.num_ret, k))

    def _relstring(self, measure) -> list[str]:
        """One string per topic (trec_eval prints it on per-topic lines only)."""
        length = max(int(measure.cutoffs[0]), 0)
        width = np.minimum(self.num_ret, length)
        chars = np.full((self.n, max(length, 1)), ord("-"), dtype=np.uint8)
        ranking = self.ranking
        shown = ranking.rank <= length
        topic, rank, grade = ranking.topic[shown], ranking.rank[shown], ranking.grade[shown]
        code = np.where(
            grade > 9, ord(">"), np.where(grade >= 0, ord("0") + np.clip(grade, 0, 9), ord("."))
        )
        chars[topic, rank - 1] = code
        return [chars[i, : width[i]].tobytes().decode() for i in range(self.n)]
