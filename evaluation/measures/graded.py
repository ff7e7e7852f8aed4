"""Measures of graded relevance (trec_eval's m_ndcg.c, m_ndcg_cut.c, m_ndcg_rel.c,
m_Rndcg.c, m_G.c, m_rbp.c, m_rbp_resid.c). Pure.

gain(d) is the grade of document d (2^grade - 1 with exponential gain) unless `level=gain`
pairs say otherwise (`ndcg.1=3,2=9`); negative grades and unjudged documents gain 0. The ideal
ranking lists the topic's judged documents with a positive gain, highest first.
    dcg = sum over ranks i of gain(i) / log2(i + 1); ideal_dcg the same over the ideal
    ndcg = dcg / ideal_dcg; ndcg_cut@k = dcg@k / ideal_dcg@k (0 when the ideal is 0)
    ndcg_rel = the mean, over the L ideal documents, of ndcg at each retrieved document with
        a positive gain (ndcg@i) and of the final ndcg for each one not retrieved
    Rndcg = the mean of ndcg@b over the ranks b where the ideal gain changes (its last one
        included), plus ndcg at num_ret when the run goes on past the ideal (0 when R = 0)
    G = (1 / sum of ideal gains) sum over ranks i with gain(i) != 0 of
        gain(i) / log2(2 + C(i) - S(i)), S(i) the gain retrieved up to i, C(i) the sum of
        max(ideal gain at j, 1) over j <= i
    rbp(p) = (1 - p) sum over ranks i of gain'(i) p^(i-1), gain' the gains rescaled to
        [0, 1] by (g - min) / (max - min) when some gain is outside [0, 1], min and max
        taken with 0 over the gains of the topic's levels 0..max grade and of the pairs
    rbp_resid(p) = p^ret + (1 - p) sum over unjudged ranks i of p^(i-1) (0 if none)
"""

import numpy as np

from .sequences import Events, divide, log2, log2_any
from .topics import GainScheme

__all__ = ["GradedMeasures"]


class GradedMeasures:
    def _gained(self, scheme: GainScheme) -> Events:
        """The retrieved judged documents with a gain other than 0, with running sums of
        gain / log2(rank + 1) (DCG)."""
        key = ("gained", scheme.key)
        cache = self.__dict__.setdefault("_graded_cache", {})
        if key not in cache:
            ranking = self.ranking
            gain = scheme.of(ranking.grade)
            kept = gain != 0
            events = Events(ranking.topic[kept], ranking.rank[kept], self.n)
            events.gain = gain[kept]
            events.set_values(events.gain / log2(events.rank + 1))
            cache[key] = events
        return cache[key]

    def _scheme(self, measure=None) -> GainScheme:
        return GainScheme(measure, self.options)

    def _dcg(self, measure):
        return self._gained(self._scheme(measure)).sum_first(None)

    def _ideal_dcg(self, measure):
        return self.judgments.idcg(None, self._scheme(measure))

    def _ndcg(self, measure):
        scheme = self._scheme(measure)
        return divide(self._gained(scheme).sum_first(None), self.judgments.idcg(None, scheme))

    def _ndcg_cut(self, k):
        scheme = self._scheme()
        return divide(self._gained(scheme).sum_within(k), self.judgments.idcg(k, scheme))

    def _ndcg_rel(self, measure):
        scheme = self._scheme(measure)
        gained = self._gained(scheme)
        ideal, _ = self.judgments.ideal(scheme)
        length = ideal.count  # L: ideal documents with a positive gain
        positive = gained.gain > 0
        topic, rank = gained.topic[positive], gained.rank[positive]
        dcg_here = gained.running[positive]
        idcg_here = ideal.at_rank(topic, np.minimum(rank, length[topic]))
        with np.errstate(divide="ignore", invalid="ignore"):
            points = dcg_here / idcg_here
        sums = Events(topic, rank, self.n)
        sums.set_values(points)
        total = sums.sum_first(None)
        dcg, idcg = gained.sum_first(None), ideal.sum_first(None)
        with np.errstate(divide="ignore", invalid="ignore"):
            total = total + (length - sums.count) * dcg / idcg
        total = np.nan_to_num(total, nan=0.0)
        return np.where(total > 0, divide(total, length), 0.0)

    def _Rndcg(self, measure):
        scheme = self._scheme(measure)
        gained = self._gained(scheme)
        ideal, gains = self.judgments.ideal(scheme)
        length = ideal.count
        # Boundaries b: the ideal gain at position b + 1 differs from the one at b (after
        # the last ideal document, the gain is 0).
        last_of_topic = ideal.position == length[ideal.topic]
        following = np.append(gains[1:], 0.0)
        following = np.where(last_of_topic, 0.0, following)
        boundary = following != gains
        topic, b = ideal.topic[boundary], ideal.position[boundary]
        with np.errstate(divide="ignore", invalid="ignore"):
            points = gained.at_rank(topic, b) / ideal.at_rank(topic, b)
        # ndcg at num_ret when the run goes on past the ideal ranking (and one rank more).
        tail = (length + 1 < self.num_ret) & (length > 0)
        tail_topic = np.flatnonzero(tail)
        tail_points = gained.sum_first(None)[tail] / ideal.sum_first(None)[tail]
        topic = np.concatenate([topic, tail_topic])
        rank = np.concatenate([b, self.num_ret[tail] + 1]).astype(np.int64)
        points = np.concatenate([points, tail_points])
        order = np.lexsort((rank, topic))
        sums = Events(topic[order], rank[order], self.n)
        sums.set_values(points[order])
        value = divide(sums.sum_first(None), sums.count)
        return np.where(self.judgments.num_rel > 0, value, 0.0)

    def _G(self, measure):
        scheme = self._scheme(measure)
        gained = self._gained(scheme)
        ideal, gains = self.judgments.ideal(scheme)
        # C(i) = i + sum over ideal positions j <= i of (max(gain, 1) - 1).
        extra = Events(ideal.topic, ideal.position, self.n)
        extra.set_whole_values(np.maximum(gains, 1.0) - 1.0)
        cost = gained.rank + extra.at_rank(gained.topic, gained.rank)
        retrieved = Events(gained.topic, gained.rank, self.n)
        retrieved.set_whole_values(gained.gain)
        terms = gained.gain / log2_any(2.0 + cost - retrieved.running)
        sums = Events(gained.topic, gained.rank, self.n)
        sums.set_values(terms)
        total_ideal = Events(ideal.topic, ideal.position, self.n)
        total_ideal.set_whole_values(gains)
        return divide(sums.sum_first(None), total_ideal.sum_first(None))

    def _rbp(self, measure):
        p = measure.pair("p", 0.9)
        scheme = self._scheme(measure)
        ranking = self.ranking
        gain = scheme.of(ranking.grade)
        # Rescaled per topic over the gains of its levels 0..max grade and of the pairs.
        top = self.judgments.max_grade
        levels = np.arange(int(top.max(initial=-1)) + 1)
        level_gain = scheme.of(levels)
        present = levels[None, :] <= top[:, None]
        paired = np.array([g for g in scheme.pairs.values()], dtype=np.float64)
        pair_low = min(paired.min(initial=0.0), 0.0)
        pair_high = max(paired.max(initial=0.0), 0.0)
        low = np.minimum(np.where(present, level_gain, 0.0).min(axis=1, initial=0.0), pair_low)
        high = np.maximum(np.where(present, level_gain, 0.0).max(axis=1, initial=0.0), pair_high)
        rescale = (low < 0) | (high > 1)
        topic = ranking.topic
        with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 only where not rescaled
            scaled = (gain - low[topic]) / (high - low)[topic]
        gain = np.where(rescale[topic] & (ranking.grade >= 0), scaled, gain)
        powers = self._powers(p, int(ranking.rank.max(initial=0)))
        kept = gain != 0
        sums = Events(topic[kept], ranking.rank[kept], self.n)
        sums.set_values(gain[kept] * powers[ranking.rank[kept] - 1])
        return (1.0 - p) * sums.sum_first(None)

    def _rbp_resid(self, measure):
        p = measure.pair("p", 0.9)
        powers = self._powers(p, int(self.num_ret.max(initial=0)))
        judged = self.nonnegative
        total = unjudged_sums(powers, self.num_ret, judged)
        value = powers[self.num_ret] + (1 - p) * total
        return np.where(self.num_ret > judged.count, value, 0.0)

    @staticmethod
    def _powers(p: float, length: int) -> np.ndarray:
        """p^0, p^1, ..., p^length, each the previous one times p (as trec_eval's loop)."""
        factors = np.full(length + 1, p)
        factors[0] = 1.0
        return np.cumprod(factors)


# Matrix cells unjudged_sums fills at once (8 bytes each, and as many for the sums).
_CELLS = 1 << 21


def unjudged_sums(powers: np.ndarray, num_ret: np.ndarray, judged: Events) -> np.ndarray:
    """Per topic, ``powers[r - 1]`` added up in rank order over its unjudged ranks r <= its
    num_ret, as m_rbp_resid.c adds them (0 where every rank is judged).

    The topics are the rows of a matrix, a block of topics of about the same length at a
    time (at most ``_CELLS`` cells, longest topics first): each row holds the powers of its
    topic's ranks with -0.0 at judged ranks and after its last rank, and np.add.accumulate
    adds along the rows strictly in order (numpy's sums add pairwise). Adding -0.0 leaves
    every double as it is, so each row ends at the sum trec_eval's loop makes, bit for bit,
    with no Python loop over topics.
    """
    total = np.zeros(num_ret.size)
    topics = np.flatnonzero(num_ret > judged.count)
    topics = topics[np.argsort(-num_ret[topics], kind="stable")]
    start = 0
    while start < topics.size:
        width = int(num_ret[topics[start]])
        rows = topics[start : start + max(1, _CELLS // width)]
        start += rows.size
        cells = np.empty((rows.size, width))
        cells[:] = powers[:width]
        cells[np.arange(width) >= num_ret[rows][:, None]] = -0.0
        count = judged.count[rows]
        first = np.cumsum(count) - count
        events = np.arange(count.sum()) + np.repeat(judged.start[rows] - first, count)
        cells[np.repeat(np.arange(rows.size), count), judged.rank[events] - 1] = -0.0
        total[rows] = np.add.accumulate(cells, axis=1)[:, -1]
    return total
