"""A non-stationary Bayesian bandit over the runs, after Losada, Parapar and Barreiro
("Feeling lucky?", SAC 2016; "Multi-armed bandits for adjudicating documents in pooling-based
evaluation of information retrieval systems", IP&M 2017), their MM-NS method.

Each run's list for a topic is an arm; pulling it judges its best-ranked document not yet
taken. The arm's chance of giving a relevant document has a Beta posterior,
``Beta(1 + r, 1 + n)``, and the arm pulled is the one with the largest posterior mean
``(1 + r) / (2 + r + n)`` (MM, "maximum mean"; no sampling, so the order is reproducible).
Non-stationary (NS): a run's precision falls as one goes down its ranking, so older evidence
counts less: before each new observation both counts are multiplied by ``forgetting``
(0 < forgetting <= 1; 1 is the stationary MM).

Our reading, where the papers leave room: the reward goes to the arm that was pulled (a
document taken through one run teaches that run only; crediting every run that retrieved it
found fewer relevant documents in the benchmark); arms of all topics compete in one pool, so
judging goes where relevant documents are likeliest instead of topic by topic; ties (every
arm starts at 1/2) are broken by a seeded random order. A grade for a pair no arm handed out
teaches nothing.

Delayed grades (a campaign hands out ``POOL_REORDER_EVERY`` pairs between recomputations, and
``order()`` plans with no grades at all): a pair handed out and not yet graded counts as a
provisional non-relevant observation of its arm until its grade arrives, so the plan spreads
over the promising arms instead of draining the single best one. When each grade arrives
before the next pair is chosen (as in the papers) this changes nothing. Pure: stdlib only.
"""

import heapq
import random

from annotation.strategies.base import Strategy, run_lists

DEFAULT_FORGETTING = 0.9


class Bandit(Strategy):
    name = "bandit"

    def __init__(self, pairs, rankings=None, *, forgetting: float = DEFAULT_FORGETTING, **opts):
        super().__init__(pairs, rankings, **opts)
        if not 0 < forgetting <= 1:
            raise ValueError(f"forgetting must be in (0, 1], got {forgetting}")
        self.forgetting = forgetting
        self.arms = run_lists(self)
        self.cursor = dict.fromkeys(self.arms, 0)
        self.relevant = dict.fromkeys(self.arms, 0.0)
        self.irrelevant = dict.fromkeys(self.arms, 0.0)
        self.version = dict.fromkeys(self.arms, 0)
        self.pending = dict.fromkeys(self.arms, 0)  # handed out, grade not yet known
        self.source: dict = {}  # pair -> the arm that handed it out
        order = sorted(self.arms)
        random.Random(str((self.seed, "bandit"))).shuffle(order)
        self.tiebreak = {arm: index for index, arm in enumerate(order)}
        self.heap = [(-0.5, self.tiebreak[arm], 0, arm) for arm in self.arms]
        heapq.heapify(self.heap)
        self._rest = self.unranked_pairs()

    def mean(self, arm) -> float:
        """The posterior mean of the arm's chance of relevance."""
        r, n = self.relevant[arm], self.irrelevant[arm] + self.pending[arm]
        return (1 + r) / (2 + r + n)

    def _advance(self, arm):
        docs, qid = self.arms[arm], arm[0]
        at = self.cursor[arm]
        while at < len(docs) and (qid, docs[at]) in self.taken:
            at += 1
        self.cursor[arm] = at
        return (qid, docs[at]) if at < len(docs) else None

    def _next(self):
        while self.heap:
            _, _, version, arm = self.heap[0]
            if version != self.version[arm]:
                heapq.heappop(self.heap)
                continue
            pair = self._advance(arm)
            if pair is None:
                heapq.heappop(self.heap)
                continue
            self.source[pair] = arm
            self.pending[arm] += 1
            self._repush(arm)
            return pair
        while self._rest:
            pair = self._rest.pop(0)
            if pair not in self.taken:
                return pair
        return None

    def _learn(self, pair, grade):
        arm = self.source.get(pair)
        if arm is None:
            return
        self.pending[arm] -= 1
        hit = 1.0 if self.is_relevant(grade) else 0.0
        self.relevant[arm] = self.forgetting * self.relevant[arm] + hit
        self.irrelevant[arm] = self.forgetting * self.irrelevant[arm] + (1.0 - hit)
        self._repush(arm)

    def _repush(self, arm):
        self.version[arm] += 1
        heapq.heappush(self.heap, (-self.mean(arm), self.tiebreak[arm], self.version[arm], arm))
