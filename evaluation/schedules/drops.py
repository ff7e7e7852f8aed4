"""When a scheduled evaluation raises an alert (pure: no Django).

Two rules, either enough: the measure fell by more than the schedule's threshold since the
previous firing (absolute, in the measure's own units: 0.02 is two points of nDCG@10), or it
fell below the lower end of the previous firing's 95% bootstrap interval over topics (the
interval the leaderboard shows: evaluation.services.scoring.ensure_intervals, the one home of
the resamples). A rise never alerts; a first firing has nothing to compare with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

THRESHOLD = "threshold"
INTERVAL = "interval"
# A threshold is a drop of a mean over topics (nDCG, P, AP, RR, ...: all within [0, 1]).
MAX_THRESHOLD = 1.0

MESSAGES = {
    "threshold": "The threshold is a drop of the measure in its own units, above 0 and at most "
    "{high:g} (0.02 is two points of nDCG@10), or empty for none; not {value}.",
    "nothing": "An alert needs a rule: a threshold, the previous interval, or both.",
}


@dataclass(frozen=True)
class Drop:
    previous: float
    current: float
    low: float | None  # the previous firing's interval, if it had one
    high: float | None
    threshold: float | None
    reasons: tuple[str, ...]

    @property
    def delta(self) -> float:
        return self.current - self.previous


def check_threshold(value) -> float | None:
    """A threshold as a float in (0, MAX_THRESHOLD], or None for none; ValueError otherwise
    (text, NaN, infinity, zero, a negative or a huge number)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or not 0 < number <= MAX_THRESHOLD:
        raise ValueError(MESSAGES["threshold"].format(high=MAX_THRESHOLD, value=repr(value)))
    return number


def find_drop(
    *,
    previous: float | None,
    interval: tuple[float, float] | None,
    current: float,
    threshold: float | None,
    use_interval: bool,
) -> Drop | None:
    """The drop from the previous firing's mean (and interval) to ``current``, if one of the
    rules says it is one; None otherwise."""
    if previous is None or not math.isfinite(current) or not math.isfinite(previous):
        return None
    reasons = []
    # A tolerance for the float noise of a mean: an unchanged run never alerts.
    if threshold is not None and previous - current > threshold + 1e-12:
        reasons.append(THRESHOLD)
    low, high = interval if interval else (None, None)
    if use_interval and low is not None and current < low - 1e-12:
        reasons.append(INTERVAL)
    if not reasons:
        return None
    return Drop(previous, current, low, high, threshold, tuple(reasons))
