"""What every pool-ordering strategy shares: the pool seen as runs' ranked lists, and the
contract ``take`` / ``record``. Pure: stdlib only.

A strategy is built from the pool (``pairs``, each a ``(qid, docno)``) and the runs that made
it (``rankings``: run name -> qid -> docnos in the run's rank order, best first; the shape
depth-k pooling reads). ``take()`` hands out the next pair to judge (each pool pair exactly
once, then None); ``record(pair, grade)`` tells the strategy a pair's grade, whichever order
grades arrive in. Adaptive strategies use the grades to choose what ``take`` returns next.
Pairs no run retrieved (imported, added by hand) are judged after the ranked ones in a
seeded random order, except by the random strategy, for which every pair is alike.
"""

import random
from collections.abc import Hashable, Mapping, Sequence

Pair = tuple[str, str]
Rankings = Mapping[str, Mapping[str, Sequence[str]]]


class Strategy:
    """Base class: bookkeeping of taken and graded pairs, argument checks."""

    name = ""

    def __init__(
        self,
        pairs: Sequence[Pair],
        rankings: Rankings | None = None,
        *,
        seed: Hashable = 0,
        relevant_from: int = 1,
    ):
        self.pairs = list(dict.fromkeys((str(q), str(d)) for q, d in pairs))
        self.in_pool = set(self.pairs)
        if len(self.in_pool) != len(pairs):
            raise ValueError("the pool lists a (qid, docno) pair twice")
        if relevant_from < 1:
            raise ValueError(f"relevant_from must be at least 1, got {relevant_from}")
        self.rankings = rankings or {}
        self.seed = seed
        self.relevant_from = relevant_from
        self.taken: set[Pair] = set()
        self.grades: dict[Pair, int] = {}

    # -- the contract -----------------------------------------------------------------------

    def take(self) -> Pair | None:
        """The next pair to judge, or None when every pair has been handed out."""
        pair = self._next()
        if pair is not None:
            self.taken.add(pair)
        return pair

    def record(self, pair: Pair, grade: int) -> None:
        """The grade of ``pair`` (taken or not). A pair is graded once."""
        pair = (str(pair[0]), str(pair[1]))
        if pair not in self.in_pool:
            raise ValueError(f"pair {pair} is not in the pool")
        if pair in self.grades:
            raise ValueError(f"pair {pair} was already graded")
        if grade < 0:
            raise ValueError(f"grade must be at least 0, got {grade} for {pair}")
        self.grades[pair] = grade
        self.taken.add(pair)
        self._learn(pair, grade)

    def order(self) -> list[Pair]:
        """Every pair not yet taken, in the order ``take`` would hand them out if no further
        grade arrived (what a campaign stores until the next recomputation)."""
        out = []
        while (pair := self.take()) is not None:
            out.append(pair)
        return out

    # -- for subclasses ---------------------------------------------------------------------

    def _next(self) -> Pair | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _learn(self, pair: Pair, grade: int) -> None:
        """Adaptive strategies update their model here."""

    def is_relevant(self, grade: int) -> bool:
        return grade >= self.relevant_from

    def unranked_pairs(self) -> list[Pair]:
        """Pool pairs no run retrieved, in a seeded random order."""
        ranked = {
            (str(qid), str(docno))
            for by_topic in self.rankings.values()
            for qid, docnos in by_topic.items()
            for docno in docnos
        }
        rest = sorted(p for p in self.pairs if p not in ranked)
        random.Random(str((self.seed, "unranked"))).shuffle(rest)
        return rest


def run_lists(strategy: Strategy) -> dict[tuple[str, str], list[str]]:
    """Each (qid, run)'s pool documents in the run's rank order, best first (an "arm")."""
    arms: dict[tuple[str, str], list[str]] = {}
    for run in sorted(strategy.rankings):
        for qid, docnos in strategy.rankings[run].items():
            qid = str(qid)
            seen: set[str] = set()
            docs = []
            for docno in docnos:
                docno = str(docno)
                if (qid, docno) in strategy.in_pool and docno not in seen:
                    seen.add(docno)
                    docs.append(docno)
            if docs:
                arms[qid, run] = docs
    return arms


def next_pair_of(strategy: Strategy, arms, cursor, arm, pair) -> bool:
    """Whether ``pair`` is the next pair ``arm`` would hand out: the first of its list not yet
    taken, ``pair`` itself aside (record() marks a graded pair taken before the strategy
    learns from it)."""
    docs, qid = arms[arm], arm[0]
    at = cursor[arm]
    while at < len(docs) and (qid, docs[at]) in strategy.taken and (qid, docs[at]) != pair:
        at += 1
    return at < len(docs) and (qid, docs[at]) == pair
