"""Which pairs a lead sends to human judges to check the machine judges: the audit. Pure:
stdlib only.

Grades are mappings ``pair -> grade`` per judge (``machines``: machine label -> grades;
``humans``: pair -> its human grades, people judging here and outside people). ``eligible``
is the set of pairs that may still be sent: pairs short of human judges that were never sent
before (the service decides it). Three kinds of audit, each a deterministic function of the
grades (the sample of its seed too), so sending the same audit twice finds nothing new:

``disagreement``
    pairs two or more machine judges graded, with different grades.

``threshold``
    pairs where a machine's grade straddles the relevance threshold T against the humans'
    grades on the same topic. With a pair *relevant* when its grade is >= T, and the
    humans' grade of a pair their consensus (the median of its human grades, the lower on
    ties), machine m *over-calls* topic t when some pair of t is relevant by m's grade and
    not by the humans', and *under-calls* it when some pair of t is not relevant by m's
    grade and relevant by the humans'. A pair p of topic t graded g by m is then selected
    when
      (i) humans graded p and g and their consensus lie on opposite sides of T; or
      (ii) no human graded p, and g is a call of the kind m got wrong on t: g >= T where m
           over-calls t, g < T where m under-calls t.
    A topic where no pair was graded by both m and the humans selects nothing by (ii):
    nothing on it says the machine errs there (the random sample covers such topics).

``sample``
    a seeded random sample of ``size`` machine-only pairs: graded by a machine, by no
    human. The order is random.Random(seed) over the pairs sorted, so one seed over one
    population gives one sample, whatever order the pairs came in.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

KINDS = ("disagreement", "threshold", "sample")

MESSAGES = {
    "unknown_kind": "Unknown audit {kind!r}; choose one of {choices}.",
    "no_machines": "This campaign has no machine judge with a grade: there is nothing to audit.",
    "one_machine": (
        "Machine judges can disagree only when two or more graded pairs; this campaign has {n}."
    ),
    "size_needed": "Say how many pairs the random sample takes (a size of at least 1).",
    "size_too_large": (
        "The sample asks for {size} pairs but only {available} machine-only pair{s} can be "
        "sent (graded by a machine, by no human, not sent before)."
    ),
    "threshold_outside": "The relevance threshold {threshold} is not a grade of the scale.",
}

Pair = Hashable
Grades = Mapping[Pair, int]


@dataclass(frozen=True)
class AuditChoice:
    """A pair chosen for the audit and why, in words a lead reads."""

    pair: Pair
    reason: str


def _sort_key(pair: Pair) -> tuple:
    return (type(pair).__name__, repr(pair)) if not isinstance(pair, int) else ("", pair)


def consensus_of(grades: Iterable[int]) -> int:
    """The median of the grades, the lower on ties (as annotation.agreement.machines)."""
    ordered = sorted(grades)
    if not ordered:
        raise ValueError("a consensus needs at least one grade")
    return ordered[(len(ordered) - 1) // 2]


def disagreement_pairs(
    machines: Mapping[str, Grades], *, eligible: Iterable[Pair]
) -> list[AuditChoice]:
    """Eligible pairs two or more machines graded differently, in pair order."""
    if not any(machines.values()):
        raise ValueError(MESSAGES["no_machines"])
    graders = [label for label, grades in machines.items() if grades]
    if len(graders) < 2:
        raise ValueError(MESSAGES["one_machine"].format(n=len(graders)))
    eligible = set(eligible)
    by_pair: dict[Pair, list[tuple[str, int]]] = defaultdict(list)
    for label in sorted(machines):
        for pair, grade in machines[label].items():
            if pair in eligible:
                by_pair[pair].append((label, grade))
    chosen = []
    for pair in sorted(by_pair, key=_sort_key):
        given = by_pair[pair]
        if len({grade for _, grade in given}) > 1:
            words = ", ".join(f"{label} {grade}" for label, grade in given)
            chosen.append(AuditChoice(pair, f"machines disagree: {words}"))
    return chosen


def threshold_pairs(
    machines: Mapping[str, Grades],
    humans: Mapping[Pair, Iterable[int]],
    *,
    topic_of: Mapping[Pair, Hashable],
    threshold: int,
    eligible: Iterable[Pair],
) -> list[AuditChoice]:
    """Eligible pairs where a machine's grade straddles the threshold against the humans'
    grades on the same topic (the module's docstring defines it), in pair order; the reason
    names the first machine (by label) that selects the pair."""
    if not any(machines.values()):
        raise ValueError(MESSAGES["no_machines"])
    consensus = {pair: consensus_of(grades) for pair, grades in humans.items() if grades}
    eligible = set(eligible)
    reasons: dict[Pair, str] = {}
    for label in sorted(machines):
        grades = machines[label]
        over: set[Hashable] = set()
        under: set[Hashable] = set()
        for pair, grade in grades.items():
            if pair not in consensus:
                continue
            mine, theirs = grade >= threshold, consensus[pair] >= threshold
            if mine and not theirs:
                over.add(topic_of[pair])
            elif theirs and not mine:
                under.add(topic_of[pair])
        for pair, grade in grades.items():
            if pair not in eligible or pair in reasons:
                continue
            relevant = grade >= threshold
            if pair in consensus:
                if relevant != (consensus[pair] >= threshold):
                    reasons[pair] = (
                        f"{label} gave {grade}, the humans {consensus[pair]}: "
                        f"opposite sides of the threshold {threshold}"
                    )
                continue
            topic = topic_of[pair]
            if relevant and topic in over:
                reasons[pair] = (
                    f"{label} gave {grade} (relevant) on a topic where it called relevant "
                    "a pair the humans did not"
                )
            elif not relevant and topic in under:
                reasons[pair] = (
                    f"{label} gave {grade} (not relevant) on a topic where it called not "
                    "relevant a pair the humans did"
                )
    return [AuditChoice(pair, reasons[pair]) for pair in sorted(reasons, key=_sort_key)]


def machine_only_pairs(
    machines: Mapping[str, Grades], humans: Mapping[Pair, Iterable[int]]
) -> set[Pair]:
    """Pairs some machine graded and no human did."""
    graded_by_humans = {pair for pair, grades in humans.items() if list(grades)}
    return {pair for grades in machines.values() for pair in grades} - graded_by_humans


def sample_pairs(
    machines: Mapping[str, Grades],
    humans: Mapping[Pair, Iterable[int]],
    *,
    size: int | None,
    seed: int,
    eligible: Iterable[Pair],
) -> list[AuditChoice]:
    """A seeded random sample of ``size`` eligible machine-only pairs, in the sample's
    order. ValueError when the size is missing, below 1, or larger than what can be sent."""
    if not any(machines.values()):
        raise ValueError(MESSAGES["no_machines"])
    if size is None or size < 1:
        raise ValueError(MESSAGES["size_needed"])
    population = sorted(machine_only_pairs(machines, humans) & set(eligible), key=_sort_key)
    if size > len(population):
        raise ValueError(
            MESSAGES["size_too_large"].format(
                size=size, available=len(population), s="" if len(population) == 1 else "s"
            )
        )
    chosen = random.Random(seed).sample(population, size)
    return [
        AuditChoice(pair, f"random sample (seed {seed}) of {len(population)} machine-only pairs")
        for pair in chosen
    ]


def select_audit(
    kind: str,
    machines: Mapping[str, Grades],
    humans: Mapping[Pair, Iterable[int]],
    *,
    topic_of: Mapping[Pair, Hashable],
    threshold: int,
    eligible: Iterable[Pair],
    size: int | None = None,
    seed: int = 0,
) -> list[AuditChoice]:
    """The pairs an audit of ``kind`` sends (see the module's docstring)."""
    if kind == "disagreement":
        return disagreement_pairs(machines, eligible=eligible)
    if kind == "threshold":
        return threshold_pairs(
            machines, humans, topic_of=topic_of, threshold=threshold, eligible=eligible
        )
    if kind == "sample":
        return sample_pairs(machines, humans, size=size, seed=seed, eligible=eligible)
    raise ValueError(MESSAGES["unknown_kind"].format(kind=kind, choices=", ".join(KINDS)))
