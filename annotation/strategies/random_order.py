"""Today's order: topic by topic, the documents of each topic in a seeded random order.

This is the order ``annotation.assignment.shuffled_order`` gives a judge (campaigns keep it
as their default). ``across_topics=True`` instead shuffles the whole pool at once (random-order
depth pooling without the topic-by-topic habit), a second baseline for the benchmark.
Grades change nothing. Pure: stdlib only.
"""

import random

from annotation.assignment import shuffled_order
from annotation.strategies.base import Strategy


class RandomOrder(Strategy):
    name = "random"

    def __init__(self, pairs, rankings=None, *, across_topics: bool = False, **options):
        super().__init__(pairs, rankings, **options)
        if across_topics:
            plan = sorted(self.pairs)
            random.Random(str((self.seed, "pool"))).shuffle(plan)
        else:
            topics: dict[str, list[str]] = {}
            for qid, docno in self.pairs:  # topics in the order the pool lists them
                topics.setdefault(qid, []).append(docno)
            plan = [
                (qid, docno)
                for qid, docnos in topics.items()
                for docno in shuffled_order(sorted(docnos), seed=(self.seed, qid))
            ]
        self._plan = plan
        self._at = 0

    def _next(self):
        while self._at < len(self._plan):
            pair = self._plan[self._at]
            self._at += 1
            if pair not in self.taken:
                return pair
        return None
