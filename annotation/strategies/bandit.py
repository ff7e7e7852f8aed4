"""A non-stationary Bayesian bandit over the runs, after Losada, Parapar and Barreiro
("Feeling lucky?", SAC 2016; "Multi-armed bandits for adjudicating documents in pooling-based
evaluation of information retrieval systems", IP&M 2017), their MM-NS method.

As published, each topic is its own bandit: the runs are its arms, and pulling a run judges
its best-ranked document of the topic not yet judged. The arm's chance of giving a relevant
document has a Beta posterior, ``Beta(1 + r, 1 + n)``, and the arm pulled is the one with the
largest posterior mean ``(1 + r) / (2 + r + n)`` (MM, "maximum mean"; no sampling, so the
order is reproducible). Non-stationary (NS): a run's precision falls as one goes down its
ranking, so older evidence counts less: before each new observation both counts are
multiplied by ``forgetting`` (0 < forgetting <= 1; 1 is the stationary MM). The reward goes to
the arm that was pulled (a grade replayed for a pair this instance did not hand out goes to
the arm that would have handed it out, see ``_learn``).

Across topics (the papers judge each topic on its own, to the same budget): the next pair
comes from the topic with the smallest share of its ranked pool taken so far, so every topic
advances at the same pace, the way the papers measure their bandits (relevant documents found
per topic after judging a given share of its pool). Ties between topics and between arms
(every arm starts at 1/2) are broken by a seeded random order.

``across_topics=True`` instead makes one bandit of every (topic, run) arm: the arm pulled is
the one with the largest posterior mean in any topic, so judgments go where runs keep
yielding relevant documents, and a topic whose runs have stopped yielding waits (the issue's
"spend judgments where they matter most"). Ties go to a seeded order that takes each topic's
first arm before any topic's second. Within a topic an arm's posterior is the same either way;
only the pace across topics differs.

Delayed grades (a campaign hands out ``POOL_REORDER_EVERY`` pairs between recomputations, and
``order()`` plans with no grades at all): a pair handed out and not yet graded counts as a
provisional non-relevant observation of its arm until its grade arrives, so the plan spreads
over the promising arms instead of draining the single best one. When each grade arrives
before the next pair is chosen (as in the papers) this changes nothing. Pure: stdlib only.
"""

import heapq
import random

from annotation.strategies.base import Strategy, next_pair_of, run_lists

DEFAULT_FORGETTING = 0.9


class Bandit(Strategy):
    name = "bandit"

    def __init__(
        self,
        pairs,
        rankings=None,
        *,
        forgetting: float = DEFAULT_FORGETTING,
        across_topics: bool = False,
        **opts,
    ):
        super().__init__(pairs, rankings, **opts)
        if not 0 < forgetting <= 1:
            raise ValueError(f"forgetting must be in (0, 1], got {forgetting}")
        self.forgetting = forgetting
        self.across_topics = across_topics
        self.arms = run_lists(self)
        self.cursor = dict.fromkeys(self.arms, 0)
        self.relevant = dict.fromkeys(self.arms, 0.0)
        self.irrelevant = dict.fromkeys(self.arms, 0.0)
        self.version = dict.fromkeys(self.arms, 0)
        self.pending = dict.fromkeys(self.arms, 0)  # handed out, grade not yet known
        self.source: dict = {}  # pair -> the arm that handed it out
        # Each topic's own seeded tie order of its runs (a topic's bandit is independent of
        # the others: alone or among many topics, it judges in the same order).
        self.tiebreak = {}
        for qid in sorted({arm[0] for arm in self.arms}):
            own = sorted(arm for arm in self.arms if arm[0] == qid)
            random.Random(str((self.seed, "bandit", qid))).shuffle(own)
            self.tiebreak.update((arm, index) for index, arm in enumerate(own))
        ranked: dict[str, set] = {}
        self.topic_arms: dict[str, list] = {}
        for arm in self.arms:
            qid = arm[0]
            self.topic_arms.setdefault(qid, []).append(arm)
            ranked.setdefault(qid, set()).update((qid, d) for d in self.arms[arm])
        self.size = {qid: len(docs) for qid, docs in ranked.items()}
        self.ranked = set().union(*ranked.values()) if ranked else set()
        self.done = dict.fromkeys(self.size, 0)  # ranked pairs of the topic taken or graded
        topics = sorted(self.size)
        random.Random(str((self.seed, "bandit-topics"))).shuffle(topics)
        self.topic_tiebreak = {qid: index for index, qid in enumerate(topics)}
        # One bandit per topic (its arms' heap), or one over every topic's arms.
        self.heaps: dict[str, list] = {}
        for arm in self.arms:
            self.heaps.setdefault(self._bandit(arm), []).append((-0.5, self._tie(arm), 0, arm))
        for heap in self.heaps.values():
            heapq.heapify(heap)
        self.topics = [(0.0, self.topic_tiebreak[q], 0, q) for q in topics]
        self.topic_version = dict.fromkeys(topics, 0)
        heapq.heapify(self.topics)
        self._counted: set = set()
        self._rest = self.unranked_pairs()

    def _bandit(self, arm):
        """The bandit the arm belongs to: its topic's, or the one over all topics."""
        return "" if self.across_topics else arm[0]

    def _tie(self, arm):
        """The arm's place among arms of equal mean (seeded)."""
        if self.across_topics:
            return (self.tiebreak[arm], self.topic_tiebreak[arm[0]])
        return self.tiebreak[arm]

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

    def _pull(self, bandit):
        """The bandit (a topic's, or "" for all topics) hands out its next pair (None when
        its arms are spent)."""
        heap = self.heaps.get(bandit, [])
        while heap:
            _, _, version, arm = heap[0]
            if version != self.version[arm]:
                heapq.heappop(heap)
                continue
            pair = self._advance(arm)
            if pair is None:
                heapq.heappop(heap)
                continue
            self.source[pair] = arm
            self.pending[arm] += 1
            self._repush(arm)
            return pair
        return None

    def _next(self):
        if self.across_topics:
            pair = self._pull("")
            if pair is not None:
                return pair
            self.topics = []
        while self.topics:
            _, _, version, qid = heapq.heappop(self.topics)
            if version != self.topic_version[qid]:
                continue
            pair = self._pull(qid)
            if pair is None:
                continue  # the topic is judged out: it leaves the schedule
            self._count(pair)
            return pair
        while self._rest:
            pair = self._rest.pop(0)
            if pair not in self.taken:
                return pair
        return None

    def _count(self, pair):
        """One more ranked pair of the topic taken: it moves back in the schedule."""
        qid = pair[0]
        self.done[qid] += 1
        self.topic_version[qid] += 1
        share = self.done[qid] / self.size[qid]
        heapq.heappush(self.topics, (share, self.topic_tiebreak[qid], self.topic_version[qid], qid))

    def _learn(self, pair, grade):
        arm = self.source.get(pair)
        if arm is None:
            # Graded without being handed out by this instance: a campaign rebuilds the
            # strategy from its grades in the order they were given (plan_order), so the
            # pair is credited to the arm that would have handed it out, the one MM pulls
            # among the topic's arms whose next pair it is. A pair no arm would give next
            # (a judge far off the plan) still counts for its topic's pace, but teaches none.
            if pair in self.ranked and pair not in self._counted:
                self._counted.add(pair)
                self._count(pair)
            arm = self._would_hand_out(pair)
            if arm is None:
                return
            self.source[pair] = arm
        else:
            self.pending[arm] -= 1
        hit = 1.0 if self.is_relevant(grade) else 0.0
        self.relevant[arm] = self.forgetting * self.relevant[arm] + hit
        self.irrelevant[arm] = self.forgetting * self.irrelevant[arm] + (1.0 - hit)
        self._repush(arm)

    def _would_hand_out(self, pair):
        candidates = [
            arm
            for arm in self.topic_arms.get(pair[0], ())
            if next_pair_of(self, self.arms, self.cursor, arm, pair)
        ]
        if not candidates:
            return None
        return min(candidates, key=lambda arm: (-self.mean(arm), self._tie(arm)))

    def _repush(self, arm):
        self.version[arm] += 1
        heapq.heappush(
            self.heaps[self._bandit(arm)], (-self.mean(arm), self._tie(arm), self.version[arm], arm)
        )
