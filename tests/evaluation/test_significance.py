"""evaluation.analysis.significance against its oracles: scipy (ttest_rel, wilcoxon, permutation_test,
bootstrap) and statsmodels (Holm), with hypothesis over 2..60 topics, ties, zeros, identical
systems and constant differences; a small example worked by hand; plain-loop references for
the vectorised code.
"""

import dataclasses
import math
import statistics
import subprocess
import sys
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evaluation.analysis.significance import (
    NO_DIFFERENCES,
    NO_SPREAD,
    TOO_FEW_TOPICS,
    TOO_SMALL,
    Comparison,
    Interval,
    PairedTest,
    adjust_holm,
    bootstrap_mean_interval,
    compare,
    compare_many,
    is_significantly_worse,
)

TOLERANCE = 1e-12
BLOCK_CELLS = 2**16  # resamples are drawn in blocks of max(1, BLOCK_CELLS // n) (docstring)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# nDCG-like values that often repeat, so differences tie and are zero; plus any float in [0, 1].
GRID = [0.0, 0.1, 0.2, 0.25, 1 / 3, 0.5, 0.6309297535714575, 2 / 3, 0.75, 0.9, 1.0]
SCORE = st.one_of(st.sampled_from(GRID), st.floats(0, 1))


@st.composite
def paired_scores(draw, min_topics=2, max_topics=60, value=SCORE):
    """(a, b) per-topic values: independent, identical, equal but for a few topics, or b = a
    shifted by a constant (differences equal exactly or up to rounding)."""
    n = draw(st.integers(min_topics, max_topics))
    a = draw(st.lists(value, min_size=n, max_size=n))
    shape = draw(st.sampled_from(["independent", "identical", "a few differ", "shifted"]))
    if shape == "independent":
        b = draw(st.lists(value, min_size=n, max_size=n))
    elif shape == "identical":
        b = list(a)
    elif shape == "a few differ":
        b = list(a)
        for i in draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3)):
            b[i] = draw(value)
    else:
        shift = draw(st.sampled_from([-0.25, 0.125, 0.1, -0.3]))
        b = [x + shift for x in a]
    return np.array(a), np.array(b)


def mean_difference(x, y, axis):
    """The randomisation statistic for scipy.stats.permutation_test. scipy hands the statistic
    Fortran-ordered blocks, over which np.mean sums sequentially, while the observed value
    (one row) is summed pairwise; the contiguous copy makes every sum use numpy's pairwise
    order, as ours does. Then both round each null value identically, and agree on patterns
    tied with the observed one in exact arithmetic (a subset of differences summing to zero),
    which rounding can put on either side of it."""
    return np.mean(np.ascontiguousarray(x - y), axis=axis)


def scipy_randomisation(a, b, n_resamples, statistic=mean_difference, rng=None):
    return stats.permutation_test(
        (b, a),
        statistic,
        permutation_type="samples",
        n_resamples=n_resamples,
        alternative="two-sided",
        vectorized=True,
        rng=rng,
    )


def floats_in(value):
    """Every float inside a comparison (dataclasses walked recursively)."""
    if dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            yield from floats_in(getattr(value, field.name))
    elif isinstance(value, float):
        yield value


# --- a small example, worked by hand ---------------------------------------------------------

# d = b - a = [1/4, 1/4, 0, -1/2, 3/8, 1/8]: dyadic values, so every sum below is exact.
HAND_A = [0.25, 0.5, 0.5, 0.75, 0.125, 0.5]
HAND_B = [0.5, 0.75, 0.5, 0.25, 0.5, 0.625]
HAND_D = [0.25, 0.25, 0.0, -0.5, 0.375, 0.125]


def test_small_example_matches_the_numbers_worked_by_hand():
    result = compare(HAND_A, HAND_B)
    assert (result.n, result.wins, result.ties, result.losses) == (6, 4, 1, 1)
    assert result.mean_a == pytest.approx(2.625 / 6, abs=TOLERANCE)
    assert result.mean_b == pytest.approx(3.125 / 6, abs=TOLERANCE)
    assert result.mean_delta == pytest.approx(0.5 / 6, abs=TOLERANCE)

    # t = mean / (s / sqrt(n)) with s the sample standard deviation; p two-sided, 5 df.
    s = statistics.stdev(HAND_D)
    t = (0.5 / 6) / (s / math.sqrt(6))
    assert result.t_test.statistic == pytest.approx(t, rel=TOLERANCE)
    assert result.t_test.p_value == pytest.approx(2 * stats.t.sf(abs(t), 5), abs=TOLERANCE)
    assert result.cohens_d == pytest.approx((0.5 / 6) / s, rel=TOLERANCE)

    # Wilcoxon: the zero is dropped; |d| ranks 1/8 -> 1, 1/4 -> 2.5, 2.5, 3/8 -> 4, 1/2 -> 5;
    # W+ = 2.5 + 2.5 + 4 + 1 = 10, W- = 5, statistic min = 5. With ties and n <= 13 scipy
    # enumerates the 32 sign patterns of the ranks: W+ >= 10 when the negated ranks sum to
    # <= 5, which 10 subsets do ({}, {1}, {2.5}x2, {4}, {5}, {1,2.5}x2, {2.5,2.5}, {1,4});
    # W+ <= 10 in 25 patterns; p = 2 * min(10, 25) / 32.
    assert result.wilcoxon.statistic == 5.0
    assert result.wilcoxon.p_value == pytest.approx(2 * 10 / 32, abs=TOLERANCE)

    # Randomisation, all 2^6 patterns: sum(±|d|) >= 1/2 when the negated |d| sum to <= 1/2:
    # 10 of the 32 patterns of the non-zero |d| (and the zero's sign changes nothing);
    # <= 1/2 in 25 of them; p = 2 * min(10, 25) / 32.
    assert result.randomisation.statistic == pytest.approx(0.5 / 6, abs=TOLERANCE)
    assert result.randomisation.p_value == pytest.approx(2 * 10 / 32, abs=TOLERANCE)

    low, high = bootstrap_mean_interval(HAND_D)
    assert result.delta_interval == Interval(low, high, 0.95)
    assert min(HAND_D) <= low <= 0.5 / 6 <= high <= max(HAND_D)


def test_tolerance_counts_near_equal_topics_as_ties():
    a, b = [0.5, 0.5, 0.5], [0.5005, 0.7, 0.3]
    exact = compare(a, b)
    assert (exact.wins, exact.ties, exact.losses) == (2, 0, 1)
    loose = compare(a, b, tolerance=0.001)
    assert (loose.wins, loose.ties, loose.losses) == (1, 1, 1)


# --- the three tests against scipy -----------------------------------------------------------


@PROPERTY
@given(paired_scores())
def test_t_test_equals_scipy_ttest_rel_or_says_why_it_is_undefined(pair):
    a, b = pair
    ours = compare(a, b, permutations=1, resamples=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reference = stats.ttest_rel(b, a)
    precision_lost = any("Precision loss" in str(w.message) for w in caught)
    if ours.t_test.p_value is None:
        # scipy: NaN when every difference is 0, an infinite or rounding-noise t (with its
        # catastrophic-cancellation warning) when all differences are equal.
        assert precision_lost or not np.isfinite(reference.statistic)
        reason = ours.t_test.reason
        if np.all(a == b):
            assert reason == NO_DIFFERENCES
        else:
            assert reason in (NO_SPREAD, TOO_SMALL)
        assert ours.t_test == PairedTest(None, None, reason)
        assert (ours.cohens_d, ours.cohens_d_reason) == (None, reason)
    else:
        assert not precision_lost, "we report a t that scipy flags as rounding noise"
        assert ours.t_test.statistic == pytest.approx(reference.statistic, rel=TOLERANCE)
        assert ours.t_test.p_value == pytest.approx(reference.pvalue, rel=0, abs=TOLERANCE)
        # Paired Cohen's d is t / sqrt(n).
        assert ours.cohens_d == pytest.approx(reference.statistic / math.sqrt(a.size), rel=1e-9)


@PROPERTY
@given(paired_scores())
def test_wilcoxon_equals_scipy_wilcoxon_or_says_why_it_is_undefined(pair):
    a, b = pair
    ours = compare(a, b, permutations=1, resamples=1).wilcoxon
    if np.all(a == b):
        assert ours == PairedTest(None, None, NO_DIFFERENCES)
        return
    reference = stats.wilcoxon(b, a, zero_method="wilcox", correction=False, method="auto")
    assert ours.statistic == pytest.approx(reference.statistic, rel=TOLERANCE)
    assert ours.p_value == pytest.approx(reference.pvalue, rel=0, abs=TOLERANCE)


def test_wilcoxon_settings_are_scipys_defaults():
    a = np.array([0.1, 0.4, 0.4, 0.9, 0.3, 0.2, 0.5])
    b = np.array([0.3, 0.4, 0.6, 0.6, 0.7, 0.25, 0.55])
    reference = stats.wilcoxon(b, a)
    ours = compare(a, b).wilcoxon
    assert (ours.statistic, ours.p_value) == (float(reference.statistic), float(reference.pvalue))


@PROPERTY
@given(paired_scores(max_topics=13))
def test_randomisation_p_equals_scipy_when_every_sign_pattern_is_enumerated(pair):
    a, b = pair  # 2^13 = 8192 <= 10,000 permutations: both enumerate every pattern
    ours = compare(a, b, resamples=1).randomisation
    reference = scipy_randomisation(a, b, 10_000)
    assert ours.statistic == reference.statistic
    assert ours.p_value == reference.pvalue


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paired_scores(max_topics=13, value=st.sampled_from([k / 8 for k in range(9)])))
def test_randomisation_p_equals_scipy_with_its_plain_statistic_when_sums_are_exact(pair):
    a, b = pair  # multiples of 1/8: every sum is exact, so summation order cannot matter

    def plain(x, y, axis):
        return np.mean(x - y, axis=axis)

    ours = compare(a, b, resamples=1).randomisation
    assert ours.p_value == scipy_randomisation(a, b, 10_000, statistic=plain).pvalue


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paired_scores(min_topics=14), st.integers(0, 2**32 - 1))
def test_randomisation_p_agrees_with_scipy_within_monte_carlo_error(pair, seed):
    a, b = pair  # 2^n > 10,000: both draw random sign patterns, each with its own stream
    draws = 10_000
    ours = compare(a, b, permutations=draws, seed=seed, resamples=1).randomisation.p_value
    theirs = scipy_randomisation(a, b, draws, rng=np.random.default_rng([seed, 1])).pvalue
    # Each p is 2 x a tail share estimated from `draws` patterns (+1 each); their difference
    # has standard deviation 2 * sqrt(2 q (1 - q) / draws) for a tail share q.
    q = min((ours + theirs) / 4, 0.5)
    spread = 2 * math.sqrt(2 * q * (1 - q) / draws)
    assert abs(ours - theirs) <= 6 * spread + 4 / (draws + 1), (
        f"Monte-Carlo p-values {ours} and {theirs} differ by more than 6 standard deviations"
    )


@PROPERTY
@given(paired_scores(min_topics=11, max_topics=40), st.sampled_from([100, 999, 1000]))
def test_monte_carlo_p_counts_the_observed_pattern_and_is_never_zero(pair, draws):
    a, b = pair
    p = compare(a, b, permutations=draws, resamples=1).randomisation.p_value
    steps = p * (draws + 1) / 2  # p = 2 * (count + 1) / (draws + 1), capped at 1
    assert p == 1.0 or abs(steps - round(steps)) < 1e-9
    assert p >= 2 / (draws + 1)


def test_randomisation_counts_null_values_within_rounding_of_the_observed_one():
    # P@10-like values: tenths are inexact in binary, so sign patterns whose mean equals the
    # observed one in exact arithmetic come out a few ulps off it; scipy's tolerance (100 eps
    # x |observed|) counts them, which gives the p of exact arithmetic (integers here).
    a = np.array([0.3, 0.8, 0.7, 0.0, 0.4, 0.9, 0.6, 0.0, 0.8, 0.8])
    b = np.array([0.9, 0.1, 0.0, 0.9, 0.0, 0.5, 0.0, 0.3, 0.5, 0.4])
    tenths = np.round(b * 10).astype(int) - np.round(a * 10).astype(int)
    signs = 1 - 2 * ((np.arange(2**10)[:, np.newaxis] >> np.arange(10)) & 1)
    sums, observed = signs @ tenths, tenths.sum()
    exact_p = 2 * min(np.sum(sums <= observed), np.sum(sums >= observed)) / 2**10
    ours = compare(a, b, resamples=1).randomisation.p_value
    assert ours == exact_p == scipy_randomisation(a, b, 10_000).pvalue
    assert exact_p == 2 * 195 / 1024


def test_randomisation_p_is_one_and_defined_when_the_systems_are_identical():
    values = [0.2, 0.5, 0.5, 1.0]
    result = compare(values, values)
    assert result.randomisation == PairedTest(0.0, 1.0)
    assert (
        result.randomisation.p_value
        == scipy_randomisation(np.array(values), np.array(values), 10_000).pvalue
    )


# --- undefined cases: None and a reason, never NaN --------------------------------------------


@PROPERTY
@given(paired_scores(min_topics=1, max_topics=30))
def test_no_number_in_a_comparison_is_nan_or_infinite(pair):
    a, b = pair
    result = compare(a, b, permutations=500, resamples=50)
    assert all(math.isfinite(x) for x in floats_in(result))
    assert result.wins + result.ties + result.losses == result.n
    for test in (result.t_test, result.wilcoxon, result.randomisation):
        assert (test.p_value is None) == (test.statistic is None) == (test.reason is not None)
        assert test.p_value is None or 0 <= test.p_value <= 1


def test_one_topic_leaves_every_test_interval_and_effect_undefined():
    result = compare([0.3], [0.7])
    assert (result.n, result.mean_delta, result.wins) == (1, pytest.approx(0.4), 1)
    undefined = PairedTest(None, None, TOO_FEW_TOPICS)
    assert result.t_test == result.wilcoxon == result.randomisation == undefined
    assert result.delta_interval == Interval(None, None, 0.95, TOO_FEW_TOPICS)
    assert (result.cohens_d, result.cohens_d_reason) == (None, TOO_FEW_TOPICS)


def test_identical_systems_leave_the_t_test_wilcoxon_and_effect_undefined():
    values = [0.0, 0.3, 0.3, 1.0, 0.6309297535714575]
    result = compare(values, values)
    assert result.t_test == result.wilcoxon == PairedTest(None, None, NO_DIFFERENCES)
    assert (result.cohens_d, result.cohens_d_reason) == (None, NO_DIFFERENCES)
    assert (result.wins, result.ties, result.losses) == (0, 5, 0)
    assert result.delta_interval == Interval(0.0, 0.0, 0.95)


def test_a_constant_difference_leaves_the_t_test_and_effect_undefined_but_not_wilcoxon():
    a = np.array([0.0, 0.125, 0.5, 0.75, 0.25])
    result = compare(a, a + 0.25)  # exactly 0.25 on every topic
    assert result.t_test == PairedTest(None, None, NO_SPREAD)
    assert (result.cohens_d, result.cohens_d_reason) == (None, NO_SPREAD)
    reference = stats.wilcoxon(a + 0.25, a)
    assert (result.wilcoxon.statistic, result.wilcoxon.p_value) == (0.0, reference.pvalue)
    assert result.randomisation.p_value == 2 / 32  # only all-plus and all-minus are as extreme


def test_differences_too_small_to_square_leave_the_t_test_undefined_not_nan():
    result = compare([0.0, 0.0, 0.0], [5e-324, 0.0, 1e-200])
    assert result.t_test == PairedTest(None, None, TOO_SMALL)
    assert (result.cohens_d, result.cohens_d_reason) == (None, TOO_SMALL)
    assert result.wilcoxon.p_value is not None and result.randomisation.p_value is not None


def test_bad_input_is_refused_with_a_message_saying_what_is_wrong():
    with pytest.raises(ValueError, match="a has 2 topics and b has 3"):
        compare([0.1, 0.2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="b holds a missing or infinite value"):
        compare([0.1, 0.2], [0.1, float("nan")])
    with pytest.raises(ValueError, match="a holds no topics"):
        compare([], [])
    with pytest.raises(ValueError, match="permutations must be at least 1"):
        compare([0.1, 0.2], [0.3, 0.4], permutations=0)
    with pytest.raises(ValueError, match="tolerance must be 0 or more"):
        compare([0.1, 0.2], [0.3, 0.4], tolerance=-0.1)
    with pytest.raises(ValueError, match="level must be between 0 and 1"):
        bootstrap_mean_interval([0.1, 0.2], level=95)
    with pytest.raises(ValueError, match="values must be 1-D"):
        bootstrap_mean_interval(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="other has 1 topics and the baseline 2"):
        compare_many([0.1, 0.2], {"other": [0.3]})


# --- bootstrap ------------------------------------------------------------------------------


def reference_intervals(values, resamples, level, seed):
    """A plain loop over the same resamples: the indices drawn block by block as documented."""
    n = values.shape[1]
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_CELLS // n)
    indices = np.concatenate(
        [rng.integers(0, n, (min(block, resamples - s), n)) for s in range(0, resamples, block)]
    )
    alpha = (1 - level) / 2
    lows, highs = [], []
    for row in values:
        means = [np.mean(row[index]) for index in indices]
        low, high = np.quantile(means, [alpha, 1 - alpha])
        lows.append(low)
        highs.append(high)
    return np.array(lows), np.array(highs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 5),
    st.integers(1, 60),
    st.integers(1, 300),
    st.sampled_from([0.5, 0.9, 0.95, 0.99]),
    st.integers(0, 2**32 - 1),
    st.data(),
)
def test_vectorised_bootstrap_equals_a_plain_loop_over_the_same_resamples(
    systems, topics, resamples, level, seed, data
):
    rows = [data.draw(st.lists(SCORE, min_size=topics, max_size=topics)) for _ in range(systems)]
    values = np.array(rows)
    low, high = bootstrap_mean_interval(values, resamples=resamples, level=level, seed=seed)
    expected_low, expected_high = reference_intervals(values, resamples, level, seed)
    np.testing.assert_allclose(low, expected_low, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(high, expected_high, rtol=0, atol=TOLERANCE)


def test_bootstrap_over_several_blocks_equals_the_loop_and_each_row_alone():
    values = np.random.default_rng(7).beta(2, 5, (3, 3000))  # blocks of 21 resamples
    low, high = bootstrap_mean_interval(values, resamples=100, seed=11)
    expected_low, expected_high = reference_intervals(values, 100, 0.95, 11)
    np.testing.assert_allclose(low, expected_low, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(high, expected_high, rtol=0, atol=TOLERANCE)
    # Every row uses the same resamples, so a row's interval is the one it gets alone.
    alone = bootstrap_mean_interval(values[1], resamples=100, seed=11)
    assert alone == pytest.approx((low[1], high[1]), abs=TOLERANCE)


@pytest.mark.parametrize(("topics", "resamples"), [(5, 1000), (60, 999), (1500, 300)])
def test_bootstrap_equals_scipy_bootstrap_drawing_the_same_indices(topics, resamples):
    x = np.random.default_rng(topics).beta(2, 3, topics)
    reference = stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=resamples,
        batch=max(1, BLOCK_CELLS // topics),
        vectorized=True,
        method="percentile",
        confidence_level=0.9,
        rng=np.random.default_rng(5),
    ).confidence_interval
    low, high = bootstrap_mean_interval(x, resamples=resamples, level=0.9, seed=5)
    assert (low, high) == pytest.approx((reference.low, reference.high), abs=TOLERANCE)


def test_bootstrap_is_close_to_scipy_bootstrap_with_independent_draws():
    x = np.random.default_rng(3).beta(0.5, 0.8, 200)  # skewed, nDCG-like
    reference = stats.bootstrap(
        (x,), np.mean, n_resamples=20_000, method="percentile", rng=np.random.default_rng(99)
    ).confidence_interval
    low, high = bootstrap_mean_interval(x, resamples=20_000, seed=1)
    width = reference.high - reference.low
    # With 20,000 resamples an end point wanders by about 0.005 of the width; allow 0.03.
    assert abs(low - reference.low) < 0.03 * width
    assert abs(high - reference.high) < 0.03 * width


def test_bootstrap_shifts_with_the_values_and_collapses_on_one_topic():
    x = np.array([0.1, 0.4, 0.35, 0.8, 0.0])
    low, high = bootstrap_mean_interval(x, seed=4)
    assert bootstrap_mean_interval(x + 0.25, seed=4) == pytest.approx((low + 0.25, high + 0.25))
    assert bootstrap_mean_interval([0.7]) == (0.7, 0.7)


def test_a_seed_reproduces_a_comparison_and_another_seed_changes_the_random_parts():
    rng = np.random.default_rng(21)
    a = rng.random(40)
    b = a + rng.normal(0.02, 0.1, 40)
    first = compare(a, b, seed=3)
    assert compare(a, b, seed=3) == first
    other = compare(a, b, seed=4)
    assert other.delta_interval != first.delta_interval
    assert other.randomisation.p_value != first.randomisation.p_value
    assert (other.t_test, other.wilcoxon) == (first.t_test, first.wilcoxon)


# --- several systems against one baseline -----------------------------------------------------


# Fewer examples: scipy's Wilcoxon enumerates 8192 sign patterns per system when ties meet
# n <= 13.
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 40).flatmap(lambda n: st.tuples(
    st.lists(SCORE, min_size=n, max_size=n),
    st.lists(st.lists(SCORE, min_size=n, max_size=n), min_size=1, max_size=4),
    st.integers(0, 5),
)))  # fmt: skip
def test_compare_many_is_compare_per_system_plus_holm_adjusted_p_values(case):
    baseline, rows, identical = case
    others = {f"system {i}": row for i, row in enumerate(rows)}
    others["copy"] = list(baseline) if identical else rows[0]
    results = compare_many(baseline, others, permutations=2000, resamples=200, seed=8)
    assert list(results) == list(others)
    for name, values in others.items():
        alone = compare(baseline, values, permutations=2000, resamples=200, seed=8)
        together = results[name]
        assert together.delta_interval.low == pytest.approx(alone.delta_interval.low, abs=TOLERANCE)
        assert together.delta_interval.high == pytest.approx(
            alone.delta_interval.high, abs=TOLERANCE
        )
        without_holm = {
            field: dataclasses.replace(getattr(together, field), p_adjusted=None)
            for field in ("t_test", "wilcoxon", "randomisation")
        }
        assert (
            dataclasses.replace(together, delta_interval=alone.delta_interval, **without_holm)
            == alone
        )
    for field in ("t_test", "wilcoxon", "randomisation"):
        tests = [getattr(c, field) for c in results.values()]
        defined = [t for t in tests if t.p_value is not None]
        assert all(t.p_adjusted is None for t in tests if t.p_value is None)
        if defined:
            expected = holm_by_statsmodels([t.p_value for t in defined])
            np.testing.assert_allclose(
                [t.p_adjusted for t in defined], expected, rtol=0, atol=TOLERANCE
            )


def holm_by_statsmodels(p_values):
    """statsmodels' Holm adjustment, the oracle. multipletests runs gc.collect() on every call
    for Holm, which returns the same either way and takes half a second late in a full test run
    (its time grows with everything the process holds): skipped here."""
    with mock.patch("gc.collect"):
        return multipletests(p_values, method="holm")[1]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.01, 0.04, 0.05, 1.0])),
        min_size=1,
        max_size=30,
    )
)
def test_holm_equals_statsmodels(p_values):
    expected = holm_by_statsmodels(p_values)
    assert adjust_holm(p_values) == pytest.approx(list(expected), abs=TOLERANCE)


def test_holm_by_hand_and_refuses_what_is_not_a_p_value():
    # sorted 0.01, 0.02, 0.04 -> 3 x 0.01, max(0.03, 2 x 0.02), max(0.04, 1 x 0.04)
    assert adjust_holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    with pytest.raises(ValueError, match="between 0 and 1"):
        adjust_holm([0.5, 1.5])


def test_compare_many_with_no_other_system_is_empty():
    assert compare_many([0.1, 0.2], {}) == {}


# --- the CI gate ---------------------------------------------------------------------------


def gate_case(shift):
    rng = np.random.default_rng(8)
    a = rng.beta(2, 2, 50)
    return compare(a, a + shift + rng.normal(0, 0.05, 50))


def test_gate_fails_a_system_that_is_significantly_worse():
    worse = gate_case(-0.1)
    assert worse.mean_b < worse.mean_a
    for test in ("t", "wilcoxon", "randomisation"):
        assert is_significantly_worse(worse, test=test)


def test_gate_passes_a_better_system_and_a_worse_one_within_noise():
    assert not is_significantly_worse(gate_case(0.1))
    noise = gate_case(-0.003)
    assert noise.mean_b < noise.mean_a and noise.randomisation.p_value > 0.05
    assert not is_significantly_worse(noise)


def test_gate_uses_the_holm_adjusted_p_and_never_fails_on_an_undefined_test():
    worse = gate_case(-0.1)
    raw_only = dataclasses.replace(worse, randomisation=PairedTest(-0.1, 0.03))
    assert is_significantly_worse(raw_only)
    adjusted = dataclasses.replace(worse, randomisation=PairedTest(-0.1, 0.03, p_adjusted=0.09))
    assert not is_significantly_worse(adjusted)
    assert is_significantly_worse(adjusted, alpha=0.1)
    undefined = dataclasses.replace(worse, t_test=PairedTest(None, None, NO_SPREAD))
    assert not is_significantly_worse(undefined, test="t")


def test_gate_refuses_an_unknown_test_or_alpha():
    worse = gate_case(-0.1)
    with pytest.raises(ValueError, match="test must be one of"):
        is_significantly_worse(worse, test="sign")
    with pytest.raises(ValueError, match="alpha must be between 0 and 1"):
        is_significantly_worse(worse, alpha=5)


def test_comparison_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        compare(HAND_A, HAND_B).n = 3  # type: ignore[misc]
    assert isinstance(compare(HAND_A, HAND_B), Comparison)


def test_module_imports_no_django():
    probe = (
        "import sys, evaluation.analysis.significance; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework'}))"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", (
        "evaluation.analysis.significance must stay free of Django"
    )
