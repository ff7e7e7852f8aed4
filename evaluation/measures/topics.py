"""What the qrels say about each scored topic: R, the judged non-relevant count, the grades'
gains and the ideal ordering of them. Pure."""

import numpy as np
import polars as pl

from .catalog import Measure, Options
from .sequences import Events, log2

__all__ = ["GainScheme", "TopicJudgments"]


class GainScheme:
    """The gain of each grade for one measure, as trec_eval's setup_gains gives it: the grade
    itself (2^grade - 1 with Options.gain "exp"), unless a `level=gain` pair names the grade.
    Negative grades and unjudged documents gain 0."""

    def __init__(self, measure: Measure | None, options: Options) -> None:
        self.pairs = measure.level_gains if measure is not None else {}
        self.exp = options.gain == "exp"
        self.key = (tuple(sorted(self.pairs.items())), self.exp)

    def of(self, grade: np.ndarray) -> np.ndarray:
        grade = np.asarray(grade, dtype=np.int64)
        if self.exp:
            base = (np.left_shift(np.int64(1), np.maximum(grade, 0)) - 1).astype(np.float64)
        else:
            base = grade.astype(np.float64)
        gain = np.where(grade >= 0, base, 0.0)
        for level, value in self.pairs.items():
            gain = np.where(grade == level, value, gain)
        return gain


class TopicJudgments:
    def __init__(self, judgments: pl.DataFrame, n: int, options: Options) -> None:
        self.n = n
        self.options = options
        topic = judgments.get_column("topic").to_numpy()
        grade = judgments.get_column("grade").to_numpy()
        level = options.relevance_level
        self.num_rel = np.bincount(topic[(grade >= 0) & (grade >= level)], minlength=n)
        self.num_nonrel = np.bincount(topic[(grade >= 0) & (grade < level)], minlength=n)
        judged = grade >= 0
        self.topic, self.grade = topic[judged], grade[judged]
        self.max_grade = np.full(n, -1, dtype=np.int64)
        np.maximum.at(self.max_grade, self.topic, self.grade)
        self._ideals: dict = {}

    def ideal(self, scheme: GainScheme) -> tuple[Events, np.ndarray]:
        """The ideal ranking's positive gains, per topic in descending order, as events at
        positions 1, 2, ... with running sums of gain / log2(position + 1); and the gains."""
        if scheme.key not in self._ideals:
            gain = scheme.of(self.grade)
            positive = gain > 0
            topic, gain = self.topic[positive], gain[positive]
            order = np.lexsort((-gain, topic))
            topic, gain = topic[order], gain[order]
            events = Events(topic, None, self.n)
            events.rank = events.position
            events.set_values(gain / log2(events.position + 1))
            self._ideals[scheme.key] = (events, gain)
        return self._ideals[scheme.key]

    def idcg(self, k: int | None, scheme: GainScheme) -> np.ndarray:
        """IDCG@k per topic (k=None: over every positive gain)."""
        events, _ = self.ideal(scheme)
        return events.sum_first(None if k is None else np.full(self.n, k))
