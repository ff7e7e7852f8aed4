"""Each measure as a method returning one value per topic (one array per cutoff), over where
the judged documents landed in the run's ranking (ranking.JudgedRanking) and what the qrels
say about each topic (topics.TopicJudgments). The methods live by subject in binary.py
(relevant or not), graded.py (gains) and sets.py (counts, sets, strings). Pure."""

import numpy as np

from .binary import BinaryMeasures
from .catalog import _KINDS, Measure, Options
from .graded import GradedMeasures
from .ranking import JudgedRanking
from .sequences import Events
from .sets import SetMeasures
from .topics import TopicJudgments

__all__ = ["Scorer"]


class Scorer(SetMeasures, BinaryMeasures, GradedMeasures):
    def __init__(
        self,
        ranking: JudgedRanking,
        judgments: TopicJudgments,
        options: Options,
        judged_order: JudgedRanking | None = None,
    ):
        """judged_order: the ranking judged@k counts in (ir_measures' judged provider breaks
        ties its own way), when it differs from `ranking`."""
        self.options = options
        self.judgments = judgments
        self.num_ret = ranking.num_ret
        self.n = n = self.num_ret.size
        self.ranking = ranking
        level = options.relevance_level
        grade = ranking.grade
        relevant = (grade >= 0) & (grade >= level)
        self.judged = Events(ranking.topic, ranking.rank, n)
        self.judged_in_order = self.judged
        if judged_order is not None:
            self.judged_in_order = Events(judged_order.topic, judged_order.rank, n)
        self.nonnegative = Events(ranking.topic[grade >= 0], ranking.rank[grade >= 0], n)
        self.relevant = Events(ranking.topic[relevant], ranking.rank[relevant], n)
        # prec(i) at each relevant rank i; map adds them up, iprec_at_recall takes maxima.
        self.precision = self.relevant.position / self.relevant.rank
        self.relevant.set_values(self.precision)
        self._nonrel_above_relevant = self._count_above(ranking, relevant, (grade >= 0) & ~relevant)
        self._best_after: np.ndarray | None = None  # max prec(j) over j >= each relevant i

    def values(self, measure: Measure) -> list:
        method = getattr(self, f"_{measure.name}")
        if _KINDS[measure.name].params in ("int", "float"):
            return [np.asarray(method(k), dtype=np.float64) for k in measure.cutoffs]
        if _KINDS[measure.name].params in ("list", "pairs"):
            result = method(measure)
            return [result if isinstance(result, list) else np.asarray(result, np.float64)]
        return [np.asarray(method(), dtype=np.float64)]

    def _count_above(self, ranking: JudgedRanking, relevant: np.ndarray, counted: np.ndarray):
        """For each relevant document, the `counted` judged documents ranked above it."""
        running = np.cumsum(counted)  # integers: exact in any order
        before = running - counted
        topic_offset = before[self.judged.start[ranking.topic]]
        return (running - topic_offset)[relevant]
