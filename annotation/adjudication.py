"""Adjudication: one final grade for a pair from its judges' grades, by a campaign's rule,
and the order in which a lead works through the disagreements. Pure: stdlib only.

Callers pass a pair's grades once the pair is complete (every judge it was assigned to has
graded it); ``decide`` treats the grades it is given as all there will be, so a pair with
overlap 1 and its one grade is unanimous.

Rules (a unanimous pair is accepted under every rule):
    majority  the most common grade (a plurality: 2, 2, 1, 0 gives 2); a tie for most
              common leaves the pair undecided, for the lead
    median    the median grade; with an even number of grades the lower of the two middle
              ones (0, 1, 2, 3 gives 1), so a split never rounds up to relevant
    lead      nothing but unanimous pairs is decided automatically
"""

import numbers
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Rule(StrEnum):
    MAJORITY = "majority"
    MEDIAN = "median"
    LEAD = "lead"


UNANIMOUS = "unanimous"


@dataclass(frozen=True)
class Decision:
    """grade: the final grade, or None when the lead must decide. rule_applied:
    "unanimous", or the campaign's rule ("majority", "median", "lead"). reason: why, in
    words for the lead's page."""

    grade: int | None
    rule_applied: str
    reason: str

    @property
    def decided(self) -> bool:
        return self.grade is not None


def _check(grades: Sequence[int]) -> list[int]:
    values = list(grades)
    if not values:
        raise ValueError("a pair needs at least one grade to adjudicate")
    for grade in values:
        if not isinstance(grade, numbers.Integral) or isinstance(grade, bool):
            raise ValueError(f"grades must be integers, got {grade!r}")
    return [int(g) for g in values]


def _listed(grades: Iterable[int]) -> str:
    return ", ".join(str(g) for g in grades)


def decide(grades: Sequence[int], rule: Rule | str) -> Decision:
    """The final grade of a complete pair under ``rule`` (see the module docstring)."""
    values = _check(grades)
    try:
        rule = Rule(rule)
    except ValueError:
        raise ValueError(
            f"unknown adjudication rule {rule!r}; use one of {', '.join(Rule)}"
        ) from None
    if len(set(values)) == 1:
        judges = "the only judge" if len(values) == 1 else f"all {len(values)} judges"
        return Decision(values[0], UNANIMOUS, f"{judges} gave {values[0]}")
    shown = _listed(sorted(values))
    if rule is Rule.MEDIAN:
        grade = sorted(values)[(len(values) - 1) // 2]
        return Decision(grade, rule.value, f"the median of {shown} is {grade}")
    if rule is Rule.MAJORITY:
        tally = Counter(values).most_common()
        top = tally[0][1]
        leaders = sorted(g for g, count in tally if count == top)
        if len(leaders) == 1:
            return Decision(
                leaders[0], rule.value, f"{top} of {len(values)} judges gave {leaders[0]}"
            )
        return Decision(
            None,
            rule.value,
            f"grades {_listed(leaders)} tie with {top} judge{'s' if top > 1 else ''} each "
            f"({shown}); the lead decides",
        )
    return Decision(None, rule.value, f"the judges disagree ({shown}); the lead decides")


def spread(grades: Sequence[int]) -> int:
    """Highest grade minus lowest."""
    values = _check(grades)
    return max(values) - min(values)


def straddles(grades: Sequence[int], threshold: int) -> bool:
    """Some grades are relevant (>= threshold) and some are not."""
    values = _check(grades)
    return min(values) < threshold <= max(values)


def disagreement_order(
    pairs: Iterable[tuple[Hashable, Sequence[int]]],
    *,
    threshold: int,
    tiebreak: Callable[[Hashable], Any] | None = None,
) -> list[Hashable]:
    """Keys of the pairs whose grades differ, in the order a lead should see them: pairs
    that straddle the relevance threshold first, then by spread, widest first. Equal pairs
    keep their given order, or are ordered by ``tiebreak(key)`` when given."""
    queue = []
    for position, (key, grades) in enumerate(pairs):
        width = spread(grades)
        if width == 0:
            continue
        last = tiebreak(key) if tiebreak is not None else position
        queue.append((not straddles(grades, threshold), -width, last, position, key))
    queue.sort(key=lambda entry: entry[:4])
    return [entry[-1] for entry in queue]
