"""Move-to-front pooling (Cormack, Palmer and Clarke, SIGIR 1998).

Each run's list for a topic is an "arm" holding its pool documents in rank order. Judging
takes the next unjudged document of the arm at the front of a queue; while that arm yields
relevant documents it stays at the front; a non-relevant document lowers its priority by one
and sends it behind every arm of equal or higher priority. All arms start at priority 0 in a
seeded random order, so topics are interleaved rather than finished one by one.

When ``take`` is called again before the last pair's grade is known (planning the order a
campaign stores, or judges grading behind the plan), the front arm is rotated behind its
equals without a penalty: with no feedback the order is a round robin over the best arms. A
grade that arrives late still moves its arm (relevant: to the front; not relevant: one
priority down). Pure: stdlib only.
"""

import heapq
import itertools
import random

from annotation.strategies.base import Strategy, next_pair_of, run_lists


class MoveToFront(Strategy):
    name = "move_to_front"

    def __init__(self, pairs, rankings=None, **options):
        super().__init__(pairs, rankings, **options)
        self.arms = run_lists(self)
        self.by_topic: dict[str, list] = {}
        for arm in self.arms:
            self.by_topic.setdefault(arm[0], []).append(arm)
        self.cursor = dict.fromkeys(self.arms, 0)
        self.priority = dict.fromkeys(self.arms, 0)
        self.source: dict = {}  # pair -> the arm it was taken from
        self.last_taken: dict = {}  # arm -> its last pair taken
        self._seq = itertools.count(1)
        self._front = itertools.count(-1, -1)
        self._entry: dict = {}
        self.heap: list = []
        order = sorted(self.arms)
        random.Random(str((self.seed, "mtf"))).shuffle(order)
        for arm in order:
            self._push(arm, next(self._seq))
        self.current = None
        self.current_ok = False  # the current arm's last pair was graded relevant
        self._rest = self.unranked_pairs()

    def _push(self, arm, seq):
        self._entry[arm] = seq
        heapq.heappush(self.heap, (-self.priority[arm], seq, arm))

    def _advance(self, arm):
        """The arm's next pair not yet taken (skipping pairs taken through other arms)."""
        docs, qid = self.arms[arm], arm[0]
        at = self.cursor[arm]
        while at < len(docs) and (qid, docs[at]) in self.taken:
            at += 1
        self.cursor[arm] = at
        return (qid, docs[at]) if at < len(docs) else None

    def _next(self):
        if self.current is not None:
            pair = self._advance(self.current) if self.current_ok else None
            if pair is not None:
                return self._from(self.current, pair)
            self._push(self.current, next(self._seq))  # rotate behind its equals
            self.current = None
        while self.heap:
            _, seq, arm = heapq.heappop(self.heap)
            if self._entry.get(arm) != seq:
                continue  # a stale entry: the arm was pushed again since
            del self._entry[arm]
            pair = self._advance(arm)
            if pair is not None:
                self.current, self.current_ok = arm, False
                return self._from(arm, pair)
        while self._rest:
            pair = self._rest.pop(0)
            if pair not in self.taken:
                return pair
        return None

    def _would_hand_out(self, pair):
        """Among the arms whose next pair is ``pair``: the current arm, else the one the
        queue would give first (highest priority, then earliest in line)."""
        candidates = [
            arm
            for arm in self.by_topic.get(pair[0], ())
            if next_pair_of(self, self.arms, self.cursor, arm, pair)
        ]
        if not candidates:
            return None
        if self.current in candidates:
            return self.current
        return min(
            candidates,
            key=lambda arm: (-self.priority[arm], self._entry.get(arm, float("inf"))),
        )

    def _from(self, arm, pair):
        self.source[pair] = arm
        self.last_taken[arm] = pair
        self.current_ok = False
        return pair

    def _learn(self, pair, grade):
        arm = self.source.get(pair)
        if arm is None:
            # Graded without being handed out by this instance (a campaign rebuilds the
            # strategy from its grades in the order they were given): credit the arm that
            # would have handed it out, as if it had, so the order adapts to those grades.
            arm = self._would_hand_out(pair)
            if arm is None:
                return  # no arm gives it next: a judge far off the plan teaches nothing
            if self.current is not None and self.current != arm:
                self._push(self.current, next(self._seq))  # as _next rotates it
            self._entry.pop(arm, None)  # its queue entry goes stale: it is the current arm
            self.current = arm
            self._from(arm, pair)
        relevant = self.is_relevant(grade)
        if arm == self.current and self.last_taken.get(arm) == pair:
            if relevant:
                self.current_ok = True
            else:
                self.priority[arm] -= 1
            return
        if arm == self.current:
            return  # an older pair of the arm we are on: its latest pair decides
        if relevant:
            self._push(arm, next(self._front))
        else:
            self.priority[arm] -= 1
            self._push(arm, next(self._seq))
