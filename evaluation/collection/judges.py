"""Simulated judges for the demo: a documented noise model around the known answers and the
rankers' agreement. Pure: no Django.

Each pooled pair first gets the grade a careful judge would give it (its *latent* grade):

- the collection's known answer, where it has one (3: the FAQ's own answer; 1: a section the
  answer links to; topics.py);
- else 1 ("related") when at least QUORUM of the rankers put the passage in their top TOP for
  the topic: passages that several different rankers agree on share the question's words and
  usually its subject, without being its answer;
- else 0.

A simulated judge gives the latent grade with probability ``care``; otherwise it slips one grade
(a slip past an end of the scale keeps the grade): towards its ``lean`` three times in four when it has one (a
strict judge grades down, a lenient one up), else either way alike. Every draw is seeded by
the judge's name and the pair, so the same collection always gives the same grades.

These grades are simulated, not a person's: the demo's pages say so.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["PANEL", "QUORUM", "TOP", "SimulatedJudge", "latent_grades", "simulated_grade"]

TOP = 10
QUORUM = 4  # of the seven rankers: more than half


@dataclass(frozen=True)
class SimulatedJudge:
    name: str
    care: float  # how often the judge gives the latent grade
    lean: int = 0  # -1 strict, +1 lenient, 0 neither: where its slips go more often


# Three judges of differing care and leaning: the agreement report has real work to show.
PANEL = (
    SimulatedJudge("ann", care=0.85),
    SimulatedJudge("bob", care=0.7, lean=-1),
    SimulatedJudge("cy", care=0.55, lean=+1),
)


def latent_grades(
    pairs: Iterable[tuple[str, str]],
    *,
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    top: int = TOP,
    quorum: int = QUORUM,
) -> dict[tuple[str, str], int]:
    """(qid, docno) -> latent grade (see the module). ``rankings``: ranker -> qid -> its
    docnos, best first."""
    votes: dict[tuple[str, str], int] = {}
    for ranking in rankings.values():
        for qid, docnos in ranking.items():
            for docno in docnos[:top]:
                votes[qid, docno] = votes.get((qid, docno), 0) + 1
    grades = {}
    for qid, docno in pairs:
        known = qrels.get(qid, {}).get(docno)
        if known is not None:
            grades[qid, docno] = known
        else:
            grades[qid, docno] = 1 if votes.get((qid, docno), 0) >= quorum else 0
    return grades


def simulated_grade(
    judge: SimulatedJudge, latent: int, *, qid: str, docno: str, top_grade: int = 3
) -> int:
    """The grade ``judge`` gives a pair whose latent grade is ``latent`` (see the module)."""
    draw = random.Random(f"{judge.name}/{qid}/{docno}")
    if draw.random() < judge.care:
        return latent
    step = judge.lean if judge.lean and draw.random() < 0.75 else draw.choice((-1, 1))
    return min(top_grade, max(0, latent + step))
