"""Post-editing with a control group: does showing judges a machine's grade move theirs?

A campaign may show its judges a machine judge's grade beside each pair (a suggestion). A
seeded share of each judge's pairs stays blind: the judge sees no suggestion there. Which
pairs are blind is decided by :func:`is_blind` from the campaign's seed, the judge and the
pair alone, so it is the same on every visit, on the page and in the API, and the report
can tell afterwards which grades were made with a suggestion in view.

:func:`anchoring` compares the two conditions over the human judgments:

- agreement with the machine: the share of grades equal to the machine's grade of the pair
  (pairs the machine graded);
- agreement with other humans: for each grade, the share of the other humans' grades of the
  same pair *in the same condition* that are equal (a suggested grade against other
  suggested grades, a blind one against blind ones), so it answers whether suggestions make
  humans agree with one another, not only with the machine;
- seconds per judgment: the median active time.

Each comes with a percentile bootstrap interval over pairs (every judgment of a drawn pair
comes along, so grades of one pair stay together), and so does the difference suggested
minus blind: the anchoring effect, measured. Pure: numpy only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

from .core import RESAMPLES, Statistic, check_bootstrap, finish, resample_items, undefined

CONDITIONS = ("suggested", "blind")
MEASURES = ("with_machine", "with_humans", "seconds")
# The share of a judge's pairs left blind: enough for both conditions to be measured.
MIN_BLIND_SHARE = 0.05
MAX_BLIND_SHARE = 0.95

REASONS = {
    "with_machine": "no {condition} grade of a pair the machine graded",
    "with_humans": "no pair with two {condition} human grades (raise the overlap or the blind share)",
    "seconds": "no {condition} judgment",
}


def is_blind(seed: int, judge: Hashable, pair: Hashable, share: float) -> bool:
    """Whether ``judge`` sees ``pair`` without the suggestion: true for a ``share`` of
    (judge, pair) combinations, chosen by a hash of the campaign's seed, the judge and the
    pair (SHA-256: the same answer in every process, unlike Python's hash)."""
    digest = hashlib.sha256(f"qrelsmith-blind:{seed}:{judge}:{pair}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


@dataclass(frozen=True)
class Judged:
    """One human grade: the pair, the judge, the grade, the active seconds, whether the
    suggestion was in view, and the machine's grade of the pair (None if it has none)."""

    pair: Hashable
    judge: Hashable
    grade: int
    seconds: float
    suggested: bool
    machine: int | None


@dataclass(frozen=True)
class Condition:
    name: str  # "suggested" or "blind"
    judgments: int
    with_machine: Statistic
    with_humans: Statistic
    seconds: Statistic


@dataclass(frozen=True)
class Anchoring:
    suggested: Condition
    blind: Condition
    difference: dict[str, Statistic]  # suggested minus blind, by MEASURES

    @property
    def conditions(self) -> tuple[Condition, Condition]:
        return self.suggested, self.blind


@dataclass
class _Rows:
    """The judgments as arrays: each row's pair index, condition, and per measure its value
    (NaN where it does not count)."""

    pair: np.ndarray
    suggested: np.ndarray
    with_machine: np.ndarray
    with_humans: np.ndarray
    seconds: np.ndarray
    pairs: int


def _rows(judged: list[Judged]) -> _Rows:
    index: dict[Hashable, int] = {}
    pair = np.array([index.setdefault(j.pair, len(index)) for j in judged], dtype=np.int64)
    suggested = np.array([j.suggested for j in judged], dtype=bool)
    with_machine = np.array(
        [np.nan if j.machine is None else float(j.grade == j.machine) for j in judged]
    )
    # Grades of each (pair, condition), to compare each grade with the others' in its cell.
    cells: dict[tuple[int, bool], list[int]] = {}
    for row, j in enumerate(judged):
        cells.setdefault((int(pair[row]), j.suggested), []).append(row)
    with_humans = np.full(len(judged), np.nan)
    for rows in cells.values():
        if len(rows) < 2:
            continue
        for row in rows:
            others = [judged[o].grade for o in rows if o != row]
            with_humans[row] = sum(g == judged[row].grade for g in others) / len(others)
    seconds = np.array([float(j.seconds) for j in judged])
    return _Rows(pair, suggested, with_machine, with_humans, seconds, len(index))


def _means(weights: np.ndarray, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Weighted means of ``values`` over the rows in ``mask`` (NaN values left out), one per
    row of ``weights``; NaN where no weight falls on them."""
    keep = mask & ~np.isnan(values)
    w = weights[:, keep]
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, w @ values[keep] / total, np.nan)


def _medians(weights: np.ndarray, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Weighted (lower) medians of ``values`` over the rows in ``mask``, per weights row."""
    order = np.flatnonzero(mask)[np.argsort(values[mask], kind="stable")]
    if not len(order):
        return np.full(len(weights), np.nan)
    w = weights[:, order]
    cumulative = np.cumsum(w, axis=1)
    total = cumulative[:, -1]
    at = np.minimum((cumulative < total[:, None] / 2).sum(axis=1), len(order) - 1)
    return np.where(total > 0, values[order][at], np.nan)


def _measure(name: str, weights: np.ndarray, rows: _Rows, mask: np.ndarray) -> np.ndarray:
    if name == "seconds":
        return _medians(weights, rows.seconds, mask)
    return _means(weights, getattr(rows, name), mask)


def anchoring(
    judged: Iterable[Judged],
    *,
    resamples: int = RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> Anchoring:
    """Agreement with the machine, with other humans, and seconds per judgment, for
    suggested and blind grades and their difference, each with a bootstrap interval over
    pairs (``resamples`` 0: no intervals)."""
    check_bootstrap(resamples, confidence)
    judged = list(judged)
    rows = _rows(judged)
    masks = {"suggested": rows.suggested, "blind": ~rows.suggested}
    ones = np.ones((1, len(judged)))
    points = {
        (c, m): float(_measure(m, ones, rows, masks[c])[0]) if judged else float("nan")
        for c in CONDITIONS
        for m in MEASURES
    }
    samples: dict[tuple[str, str], list[np.ndarray]] = {key: [] for key in points}
    if resamples and judged:
        for drawn in resample_items(rows.pairs, resamples=resamples, seed=seed):
            b = len(drawn)
            flat = (drawn + np.arange(b)[:, None] * rows.pairs).ravel()
            counts = np.bincount(flat, minlength=b * rows.pairs).reshape(b, rows.pairs)
            weights = counts[:, rows.pair].astype(np.float64)
            for c, m in points:
                samples[(c, m)].append(_measure(m, weights, rows, masks[c]))
    drawn_values = {key: np.concatenate(parts) if parts else None for key, parts in samples.items()}

    def statistic(value: float, values, reason: str, n: int) -> Statistic:
        if not judged:
            return undefined(reason, n)
        return finish(value, n=n, reason=lambda: reason, samples=values, confidence=confidence)

    def condition(name: str) -> Condition:
        mask = masks[name]
        counted = {
            "with_machine": mask & ~np.isnan(rows.with_machine),
            "with_humans": mask & ~np.isnan(rows.with_humans),
            "seconds": mask,
        }
        stats = {
            m: statistic(
                points[(name, m)],
                drawn_values[(name, m)],
                REASONS[m].format(condition=name),
                int(counted[m].sum()),
            )
            for m in MEASURES
        }
        return Condition(name=name, judgments=int(mask.sum()), **stats)

    difference = {}
    for m in MEASURES:
        value = points[("suggested", m)] - points[("blind", m)]
        values = None
        if drawn_values[("suggested", m)] is not None:
            values = drawn_values[("suggested", m)] - drawn_values[("blind", m)]
        difference[m] = statistic(
            value, values, "one of the two conditions has no value", len(judged)
        )
    return Anchoring(
        suggested=condition("suggested"), blind=condition("blind"), difference=difference
    )
