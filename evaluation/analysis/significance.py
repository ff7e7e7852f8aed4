"""Is system B really better (or worse) than system A? Paired significance on per-topic values.

Engineers compare IR systems on the per-topic values of one measure (e.g. nDCG@10), paired by
topic. For a baseline A and a candidate B, with d = b - a per topic (positive: B is better),
this module computes what the comparison pages and the CI gate show:

- a percentile bootstrap interval over topics for a mean, vectorised over many systems;
- the paired t-test, the Wilcoxon signed-rank test and a paired randomisation (sign-flip)
  test, with Cohen's d for paired samples and wins/ties/losses;
- Holm's step-down correction when one baseline is compared with several systems.

Undefined statistics are never NaN: the field is None and a `reason` says why in plain words.
Every random draw comes from ``numpy.random.default_rng(seed)``, so a seed reproduces a result.
Pure: numpy and scipy only.
"""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from scipy import special

__all__ = [
    "RESAMPLES",
    "Comparison",
    "Interval",
    "PairedTest",
    "adjust_holm",
    "bootstrap_mean_interval",
    "compare",
    "compare_many",
    "is_significantly_worse",
]

# Bootstrap resamples of every interval shown unless a caller asks for others: means and
# differences here, the rankings' coefficients (ranking_agreement), the settling board and
# judges' agreement (annotation.agreement). Defined once, so that every interval is made alike.
RESAMPLES = 1000
TOO_FEW_TOPICS = "needs at least two topics"
NO_DIFFERENCES = "the two systems score the same on every topic, so there is no difference to test"
NO_SPREAD = (
    "every topic changes by the same amount, so the differences have no spread "
    "and the t statistic is infinite"
)
TOO_SMALL = "the differences are too small for their spread to be computed in double precision"

TestName = Literal["t", "wilcoxon", "randomisation"]

_BLOCK_CELLS = 1 << 16  # resample or sign cells per block: bounds memory, fits a core's cache
_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Interval:
    """A two-sided percentile bootstrap interval; low and high are None (with the reason)
    when it is not defined."""

    low: float | None
    high: float | None
    level: float
    reason: str | None = None


@dataclass(frozen=True)
class PairedTest:
    """A two-sided test of "no difference between the systems".

    statistic and p_value are None when the test is not defined; reason says why.
    p_adjusted is the Holm-adjusted p-value across the systems of one `compare_many` call
    (None from `compare`, or when the test is not defined).
    """

    statistic: float | None
    p_value: float | None
    reason: str | None = None
    p_adjusted: float | None = None


@dataclass(frozen=True)
class Comparison:
    """Candidate B against baseline A on the same n topics; delta = b - a per topic.

    wins/ties/losses count topics where B is above, level with (|b - a| <= tolerance) or below
    A. cohens_d is None when undefined, with cohens_d_reason saying why.
    """

    n: int
    mean_a: float
    mean_b: float
    mean_delta: float
    delta_interval: Interval
    wins: int
    ties: int
    losses: int
    t_test: PairedTest
    wilcoxon: PairedTest
    randomisation: PairedTest
    cohens_d: float | None
    cohens_d_reason: str | None = None


def bootstrap_mean_interval(
    values: Any, *, resamples: int = RESAMPLES, level: float = 0.95, seed: int = 0
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval over topics for the mean.

    values: one system's per-topic values (1-D), or systems × topics (2-D). Every row is
    resampled with the same topic indices, so the intervals of different systems are
    comparable. Each resample draws n topics with replacement; the interval is the
    alpha and 1 - alpha quantiles, alpha = (1 - level) / 2, of the resampled means (numpy's
    default linear interpolation, as scipy). The indices are ``rng.integers(0, n, (rows, n))`` drawn block by block from
    ``default_rng(seed)`` (blocks of ``max(1, 2**16 // n)`` resamples), which is what
    ``scipy.stats.bootstrap(..., method="percentile", batch=rows)`` draws too.

    Returns (low, high): floats for 1-D input, arrays with one entry per row for 2-D.
    With one topic the interval is that value (every resample is the same).
    """
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim not in (1, 2):
        raise ValueError(
            f"values must be 1-D (topics) or 2-D (systems × topics), got {matrix.ndim}-D"
        )
    rows = np.atleast_2d(matrix)
    _check_finite(rows, "values")
    if rows.shape[1] == 0:
        raise ValueError("values hold no topics")
    _check_settings(resamples=resamples, level=level)
    low, high = _bootstrap_quantiles(rows, resamples, level, np.random.default_rng(seed))
    if matrix.ndim == 1:
        return float(low[0]), float(high[0])
    return low, high


def compare(
    a: Any,
    b: Any,
    *,
    permutations: int = 10_000,
    seed: int = 0,
    resamples: int = RESAMPLES,
    level: float = 0.95,
    tolerance: float = 0.0,
) -> Comparison:
    """Compare candidate b with baseline a: per-topic values in the same topic order.

    - delta_interval: `bootstrap_mean_interval` of the differences (resamples, level, seed).
    - t_test: paired t-test, as ``scipy.stats.ttest_rel(b, a)``: t = mean(d) / (s / sqrt(n))
      with s the sample standard deviation (ddof=1), p two-sided from Student's t, n - 1 df.
    - wilcoxon: ``scipy.stats.wilcoxon(b, a, zero_method="wilcox", correction=False,
      method="auto")``: zero differences are dropped; the statistic is min(W+, W-); p is
      exact for n <= 50 without ties or zeros, enumerated over all sign patterns for n <= 13
      with them, and from the normal approximation (tie-corrected variance) otherwise.
    - randomisation: paired sign-flip test of the mean difference, two-sided, exactly as
      ``scipy.stats.permutation_test((b, a), mean difference, permutation_type="samples",
      n_resamples=permutations)`` defines it: with null values T and observed t, and
      g = 100 * machine epsilon * |t| absorbing rounding,
      p = 2 * min(#(T <= t + g) + k, #(T >= t - g) + k) / (N + k), capped at 1.
      When 2^n <= permutations all N = 2^n sign patterns are enumerated (k = 0, exact p);
      otherwise N = permutations random patterns from default_rng(seed) and k = 1 (the
      observed pattern counts once), so p >= 2 / (N + 1) and never 0.
      Null means are summed in numpy's pairwise order, as np.mean(d) sums the observed one.
    - cohens_d: mean(d) / s, the paired (d_z) effect size, s with ddof=1.
    - wins/ties/losses: b - a > tolerance, |b - a| <= tolerance, b - a < -tolerance; with
      the default tolerance 0 a tie is exactly equal values.

    Undefined cases (never NaN): fewer than two topics (every test, the interval and d;
    scipy raises or returns NaN); all differences zero (t-test, Wilcoxon and d; scipy gives
    NaN for t, and a Wilcoxon p of 1 with at most 13 topics, NaN above; our randomisation p
    is 1, as scipy's); all differences equal up to rounding, max |d - mean(d)| <=
    10 eps |mean(d)| (t-test and d; scipy warns of catastrophic cancellation and returns an
    infinite or rounding-noise t); differences whose squares underflow (t-test and d).
    """
    baseline = _scores(a, "a")
    candidate = _scores(b, "b")
    if candidate.size != baseline.size:
        raise ValueError(f"a has {baseline.size} topics and b has {candidate.size}; they must pair")
    rows = candidate[np.newaxis, :]
    return _compare_rows(baseline, rows, permutations, seed, resamples, level, tolerance)[0]


def compare_many(
    baseline: Any,
    others: Mapping[str, Any],
    *,
    permutations: int = 10_000,
    seed: int = 0,
    resamples: int = RESAMPLES,
    level: float = 0.95,
    tolerance: float = 0.0,
) -> dict[str, Comparison]:
    """Compare each system of ``others`` (name -> per-topic values) with ``baseline``.

    Each Comparison equals ``compare(baseline, values, ...)`` with the same settings, plus
    ``p_adjusted`` on its three tests: Holm's correction (`adjust_holm`) over the systems
    whose test is defined (an undefined test neither gets nor uses an adjusted p).
    """
    a = _scores(baseline, "baseline")
    names = list(others)
    if not names:
        return {}
    rows = []
    for name in names:
        values = _scores(others[name], name)
        if values.size != a.size:
            raise ValueError(f"{name} has {values.size} topics and the baseline {a.size}")
        rows.append(values)
    comparisons = _compare_rows(a, np.stack(rows), permutations, seed, resamples, level, tolerance)
    for field in ("t_test", "wilcoxon", "randomisation"):
        tests = [getattr(c, field) for c in comparisons]
        defined = [i for i, test in enumerate(tests) if test.p_value is not None]
        adjusted = adjust_holm([tests[i].p_value for i in defined])
        for i, p in zip(defined, adjusted, strict=True):
            comparisons[i] = replace(comparisons[i], **{field: replace(tests[i], p_adjusted=p)})
    return dict(zip(names, comparisons, strict=True))


def adjust_holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p-values, in the given order.

    With the m p-values sorted ascending, p_(i) becomes max over j <= i of (m - j + 1) p_(j),
    capped at 1 (as ``statsmodels.stats.multitest.multipletests(p, method="holm")``).
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must be a flat list of numbers between 0 and 1")
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(p[order] * np.arange(p.size, 0, -1))
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(stepped, 1.0)
    return [float(x) for x in adjusted]


def is_significantly_worse(
    comparison: Comparison, alpha: float = 0.05, test: TestName = "randomisation"
) -> bool:
    """The CI gate: True when B's mean is below A's and the chosen test's p < alpha.

    Uses the Holm-adjusted p when the comparison came from `compare_many`. An undefined
    test never fails the gate.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    fields = {"t": "t_test", "wilcoxon": "wilcoxon", "randomisation": "randomisation"}
    if test not in fields:
        raise ValueError(f"test must be one of {sorted(fields)}, got {test!r}")
    chosen: PairedTest = getattr(comparison, fields[test])
    p = chosen.p_adjusted if chosen.p_adjusted is not None else chosen.p_value
    return comparison.mean_b < comparison.mean_a and p is not None and p < alpha


# --- the work, over rows of systems --------------------------------------------------------


def _compare_rows(
    a: np.ndarray,
    b_rows: np.ndarray,
    permutations: int,
    seed: int,
    resamples: int,
    level: float,
    tolerance: float,
) -> list[Comparison]:
    _check_settings(resamples=resamples, level=level, permutations=permutations)
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be 0 or more, got {tolerance}")
    n = a.size
    diffs = b_rows - a  # rows × topics, C-contiguous
    if n >= 2:
        lows, highs = _bootstrap_quantiles(diffs, resamples, level, np.random.default_rng(seed))
        p_flip = _sign_flip_p_values(diffs, permutations, np.random.default_rng(seed))
    comparisons = []
    for row, d in enumerate(diffs):
        mean_delta = float(np.mean(d))
        if n >= 2:
            interval = Interval(float(lows[row]), float(highs[row]), level)
            randomisation = PairedTest(mean_delta, float(p_flip[row]))
            t_test, cohens_d, d_reason = _t_test(d)
            wilcoxon = _wilcoxon(d)
        else:
            interval = Interval(None, None, level, TOO_FEW_TOPICS)
            randomisation = t_test = wilcoxon = PairedTest(None, None, TOO_FEW_TOPICS)
            cohens_d, d_reason = None, TOO_FEW_TOPICS
        comparisons.append(
            Comparison(
                n=n,
                mean_a=float(np.mean(a)),
                mean_b=float(np.mean(b_rows[row])),
                mean_delta=mean_delta,
                delta_interval=interval,
                wins=int(np.count_nonzero(d > tolerance)),
                ties=int(np.count_nonzero(np.abs(d) <= tolerance)),
                losses=int(np.count_nonzero(d < -tolerance)),
                t_test=t_test,
                wilcoxon=wilcoxon,
                randomisation=randomisation,
                cohens_d=cohens_d,
                cohens_d_reason=d_reason,
            )
        )
    return comparisons


def _bootstrap_quantiles(
    rows: np.ndarray, resamples: int, level: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the percentile interval of the resampled means (shared resamples)."""
    n = rows.shape[1]
    means = np.empty((rows.shape[0], resamples))
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        index = rng.integers(0, n, (size, n))
        # A resample's mean is (counts of each topic) · values / n: one matrix product for
        # all rows instead of gathering rows × resamples × topics values.
        flat = (index + np.arange(size)[:, np.newaxis] * n).ravel()
        counts = np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)
        means[:, start : start + size] = rows @ counts.T / n
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha], axis=1)
    return low, high


def _sign_flips(n: int, permutations: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Blocks of flip indicators (uint8, 1 = swap the topic's pair; one row per pattern):
    all 2^n patterns when 2^n <= permutations, else ``permutations`` random ones."""
    total, exact = _pattern_count(n, permutations)
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, total, block):
        size = min(block, total - start)
        if exact:
            codes = np.arange(start, start + size, dtype=np.int64)[:, np.newaxis]
            yield ((codes >> np.arange(n)) & 1).astype(np.uint8)
        else:
            random_bytes = rng.integers(0, 256, (size, (n + 7) // 8), dtype=np.uint8)
            yield np.unpackbits(random_bytes, axis=1, count=n)


def _pattern_count(n: int, permutations: int) -> tuple[int, bool]:
    """How many sign patterns the test uses, and whether that is all of them."""
    if n < 63 and 2**n <= permutations:
        return 2**n, True
    return permutations, False


def _sign_flip_p_values(
    diffs: np.ndarray, permutations: int, rng: np.random.Generator
) -> np.ndarray:
    """Two-sided sign-flip p-value of the mean difference per row, scipy's definition."""
    n = diffs.shape[1]
    total, exact = _pattern_count(n, permutations)
    observed = diffs.mean(axis=1)
    slack = np.abs(observed) * _EPS * 100  # permutation_test's tolerance for rounding
    at_most = np.zeros(diffs.shape[0], dtype=np.int64)
    at_least = np.zeros(diffs.shape[0], dtype=np.int64)
    rows = max(1, _BLOCK_CELLS // n)
    signs, flipped = np.empty((rows, n)), np.empty((rows, n))
    for flips in _sign_flips(n, permutations, rng):
        size = flips.shape[0]
        block = signs[:size]
        np.copyto(block, flips)  # 0/1 -> ±1.0, in place (faster than a lookup)
        np.multiply(block, -2.0, out=block)
        np.add(block, 1.0, out=block)
        for row, d in enumerate(diffs):
            # Row means of a contiguous block sum in numpy's pairwise order, as np.mean(d)
            # does for the observed value, so patterns tied with it in exact arithmetic
            # (flipping only zeros, say) give the same double.
            null = np.multiply(block, d, out=flipped[:size]).mean(axis=1)
            at_most[row] += np.count_nonzero(null <= observed[row] + slack[row])
            at_least[row] += np.count_nonzero(null >= observed[row] - slack[row])
    plus_one = 0 if exact else 1
    less = (at_most + plus_one) / (total + plus_one)
    greater = (at_least + plus_one) / (total + plus_one)
    return np.clip(np.minimum(less, greater) * 2, 0.0, 1.0)


def _t_test(d: np.ndarray) -> tuple[PairedTest, float | None, str | None]:
    """Paired t-test and Cohen's d from the differences, computed as scipy.stats.ttest_rel."""
    n = d.size
    mean = np.mean(d)
    centred = d - mean
    variance = np.mean(centred**2) * (n / (n - 1))
    reason = None
    if not np.any(d):
        reason = NO_DIFFERENCES
    elif np.max(np.abs(centred)) <= 10 * _EPS * abs(mean):
        reason = NO_SPREAD  # scipy warns of catastrophic cancellation here
    elif variance == 0:
        reason = TOO_SMALL  # the squares underflow
    if reason is not None:
        return PairedTest(None, None, reason), None, reason
    t = mean / np.sqrt(variance / n)
    p = 2 * special.stdtr(n - 1, -abs(t))
    return PairedTest(float(t), float(p)), float(mean / np.sqrt(variance)), None


def _wilcoxon(d: np.ndarray) -> PairedTest:
    if not np.any(d):
        return PairedTest(None, None, NO_DIFFERENCES)
    # scipy.stats is imported here, not with the module: it costs about a second of every
    # process's start (the agreement package, which the models import, imports this module).
    from scipy import stats

    result = stats.wilcoxon(
        d, zero_method="wilcox", correction=False, alternative="two-sided", method="auto"
    )
    return PairedTest(float(result.statistic), float(result.pvalue))


# --- input checks --------------------------------------------------------------------------


def _scores(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat list of per-topic values, got {array.ndim}-D")
    if array.size == 0:
        raise ValueError(f"{name} holds no topics")
    _check_finite(array, name)
    return array


def _check_finite(array: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds a missing or infinite value (NaN or inf)")


def _check_settings(*, resamples: int, level: float, permutations: int = 1) -> None:
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
