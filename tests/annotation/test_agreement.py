"""annotation.agreement against its oracles: scikit-learn (Cohen's kappa), statsmodels
(Fleiss' kappa, kappa's standard error) and krippendorff (alpha), to 1e-12; plain-Python
recomputations for the rest (observed agreement, leniency, the bootstrap); hand-checked
textbook examples; and the undefined cases, which must give None and a reason, never NaN.
"""

import dataclasses
import itertools
import math
import statistics
import warnings
from collections import Counter

import krippendorff
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotation.agreement import (
    Statistic,
    agreement_by_topic,
    build_ratings,
    calibrate_judge,
    cohen_kappa,
    compute_agreement,
    flag_judges,
    fleiss_kappa,
    judge_profiles,
    kappa_std_error,
    krippendorff_alpha,
    krippendorff_band,
    landis_koch,
    observed_agreement,
    resample_items,
)
from annotation.agreement import core as agreement_core
from annotation.agreement.core import Ratings, code_dtype
from annotation.scales import MAX_GRADES

TOLERANCE = 1e-12
WEIGHTINGS = [None, "linear", "quadratic"]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Scales of 101 and 300 grades: every example builds tables of k x k, so fewer of them.
LARGE_PROPERTY = settings(PROPERTY, max_examples=30)


# --- helpers and strategies ------------------------------------------------------------


def sk_kappa(a, b, scale, weights=None) -> float:
    """scikit-learn's kappa, NaN where it is undefined (it warns and returns NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohen_kappa_score(a, b, labels=scale, weights=weights)


def close(ours: float | None, oracle: float) -> bool:
    return ours is not None and abs(ours - oracle) <= TOLERANCE


def matrix_of(ratings: Ratings) -> list[list[int | None]]:
    """items x judges grades, None where not graded (the test's own view of the data)."""
    return [[ratings.scale[c] if c >= 0 else None for c in row] for row in ratings.codes.tolist()]


_SCALARS = {int, float, str, bool, type(None)}


def statistics_in(obj):
    """Every Statistic inside a report / dataclass / list, recursively."""
    if isinstance(obj, Statistic):
        yield obj
    elif dataclasses.is_dataclass(obj):
        for field in dataclasses.fields(obj):
            yield from statistics_in(getattr(obj, field.name))
    elif isinstance(obj, list | tuple):
        if set(map(type, obj)) <= _SCALARS:
            return  # numbers alone (a row of a confusion matrix, 300 on the largest scale)
        for x in obj:
            yield from statistics_in(x)


def assert_well_formed(stat: Statistic):
    for number in (stat.value, stat.low, stat.high, stat.se):
        assert number is None or (isinstance(number, float) and math.isfinite(number)), stat
    if stat.value is None:
        assert stat.reason, f"an undefined statistic must say why: {stat}"
        assert stat.low is None and stat.high is None
    else:
        assert stat.reason == "", stat
    if stat.low is not None:
        assert stat.low <= stat.high


@st.composite
def campaigns(draw, max_judges=5, max_items=20, tops=(3, 5)):
    """(triples, scale, threshold): random scale 0-3 or 0-5 (or 0..top for ``tops``), missing
    judgments, and sometimes only one or two grades in use, so the degenerate cases come up."""
    top = draw(st.sampled_from(tops))
    scale = list(range(top + 1))
    used = draw(
        st.lists(st.sampled_from(scale), min_size=1, max_size=min(top + 1, 12), unique=True)
    )
    judges = draw(st.integers(1, max_judges))
    items = draw(st.integers(1, max_items))
    cells = st.one_of(st.none(), st.sampled_from(used), st.sampled_from(used))
    grid = draw(
        st.lists(st.lists(cells, min_size=judges, max_size=judges), min_size=items, max_size=items)
    )
    triples = [
        (f"p{i:02d}", f"j{j}", g)
        for i, row in enumerate(grid)
        for j, g in enumerate(row)
        if g is not None
    ]
    return triples, scale, draw(st.integers(1, top))


def graded_pairs_on(tops) -> st.SearchStrategy:
    return st.sampled_from(tops).flatmap(
        lambda top: st.tuples(
            st.just(list(range(top + 1))),
            st.lists(st.tuples(st.integers(0, top), st.integers(0, top)), max_size=40),
        )
    )


graded_pairs = graded_pairs_on([3, 5])
# The largest scale a campaign may have (annotation.scales), and larger ones that the pure
# module must still get right (positions past 127 overflowed its int8 codes: issue 27).
LARGEST_TOP = MAX_GRADES - 1
LARGE_TOPS = (LARGEST_TOP, 299)


# --- Cohen's kappa ---------------------------------------------------------------------


@PROPERTY
@given(graded_pairs, st.sampled_from(WEIGHTINGS))
def test_cohen_kappa_equals_scikit_learn(data, weights):
    check_cohen_kappa_against_scikit_learn(data, weights)


@LARGE_PROPERTY
@given(graded_pairs_on(LARGE_TOPS), st.sampled_from(WEIGHTINGS))
def test_cohen_kappa_equals_scikit_learn_on_the_largest_scales(data, weights):
    check_cohen_kappa_against_scikit_learn(data, weights)


def check_cohen_kappa_against_scikit_learn(data, weights):
    scale, pairs = data
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours = cohen_kappa(a, b, scale=scale, weights=weights, resamples=0)
    assert_well_formed(ours)
    assert ours.n == len(pairs)
    oracle = sk_kappa(a, b, scale, weights) if len(pairs) >= 2 else math.nan
    if math.isnan(oracle):
        assert ours.value is None
    else:
        assert close(ours.value, oracle), (ours, oracle)


@PROPERTY
@given(graded_pairs)
def test_kappa_standard_error_equals_statsmodels_std_kappa(data):
    scale, pairs = data
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours = cohen_kappa(a, b, scale=scale, resamples=0)
    if ours.value is None:
        assert ours.se is None
        return
    table = confusion_matrix(a, b, labels=scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = sm_cohens_kappa(table)
    assert abs(ours.value - oracle.kappa) <= TOLERANCE
    # statsmodels takes the square root of a variance that rounding can leave at -1e-17
    # when kappa is 1; ours reports 0 there.
    expected = oracle.std_kappa if not math.isnan(oracle.std_kappa) else 0.0
    assert abs(ours.se - expected) <= TOLERANCE
    assert kappa_std_error(table) == ours.se


@pytest.mark.parametrize(
    ("grades", "dtype"),
    [(2, np.int8), (MAX_GRADES, np.int8), (128, np.int8), (129, np.int16), (32_769, np.int32)],
)
def test_codes_take_the_smallest_integer_type_that_holds_the_scale(grades, dtype):
    assert code_dtype(grades) == dtype
    ratings = build_ratings(
        [("p", "a", grades - 1), ("p", "b", 0)], scale=range(grades), threshold=1
    )
    assert ratings.codes.dtype == dtype
    assert matrix_of(ratings) == [[grades - 1, 0]]


def test_grades_past_127_no_longer_overflow_the_report():
    # Issue 27: a 200-grade scale's grade 150 was a 500 (OverflowError ... int8).
    triples = [("p1", "a", 150), ("p1", "b", 150), ("p2", "a", 3), ("p2", "b", 199)]
    triples += [("p3", "a", 7), ("p3", "b", 9)]
    ratings = build_ratings(triples, scale=range(200), threshold=100)
    report = compute_agreement(ratings, weights="linear", resamples=50, seed=1)
    (pair,) = report.pairs
    assert close(pair.kappa.value, sk_kappa([150, 3, 7], [150, 199, 9], list(range(200)), "linear"))


def test_textbook_kappa_two_judges_fifty_proposals():
    # Wikipedia's Cohen's kappa example: yes/yes 20, yes/no 5, no/yes 10, no/no 15:
    # p_o = 35/50 = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.2 / 0.5.
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    kappa = cohen_kappa(a, b, scale=[0, 1], resamples=0)
    assert kappa.value == pytest.approx((0.7 - 0.5) / (1 - 0.5), abs=TOLERANCE)
    assert landis_koch(kappa.value) == "fair"


def test_linear_weighted_kappa_by_hand():
    # O has cells (0,0), (1,2), (2,2), (2,1); margins [1, 1, 2] both ways, n = 4.
    # sum |i-j| O = 2; sum |i-j| E = (1 + 4 + 1 + 2 + 4 + 2) / 4 = 3.5; kappa = 1 - 2/3.5.
    kappa = cohen_kappa([0, 1, 2, 2], [0, 2, 2, 1], scale=[0, 1, 2], weights="linear")
    assert kappa.value == pytest.approx(1 - 2 / 3.5, abs=TOLERANCE)


@PROPERTY
@given(graded_pairs, st.sampled_from(WEIGHTINGS))
def test_kappa_is_symmetric_and_one_with_itself(data, weights):
    scale, pairs = data
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ab = cohen_kappa(a, b, scale=scale, weights=weights, resamples=0)
    ba = cohen_kappa(b, a, scale=scale, weights=weights, resamples=0)
    assert ab.value == ba.value or abs(ab.value - ba.value) <= TOLERANCE
    itself = cohen_kappa(a, a, scale=scale, weights=weights, resamples=0)
    if len(set(a)) > 1:
        assert itself.value == pytest.approx(1.0, abs=TOLERANCE)


def test_kappa_is_undefined_when_both_judges_use_one_grade():
    kappa = cohen_kappa([2, 2, 2], [2, 2, 2], scale=[0, 1, 2, 3], weights="quadratic")
    assert kappa.value is None
    assert kappa.reason.startswith("the two judges gave every shared pair the same grade (2)")
    assert kappa.se is None and kappa.low is None


def test_kappa_needs_two_shared_pairs():
    assert cohen_kappa([1], [3], scale=[0, 1, 2, 3]).reason == (
        "the two judges graded only 1 pair in common; kappa needs at least 2"
    )
    assert "no pair in common" in cohen_kappa([], [], scale=[0, 1, 2, 3]).reason


def test_kappa_is_zero_not_undefined_when_judges_use_different_single_grades():
    # p_o = 0 and p_e = 0: defined, and scikit-learn agrees.
    kappa = cohen_kappa([0, 0, 0], [3, 3, 3], scale=[0, 1, 2, 3], resamples=0)
    assert kappa.value == sk_kappa([0, 0, 0], [3, 3, 3], [0, 1, 2, 3]) == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cohen_kappa([0, 4], [0, 1], scale=[0, 1, 2, 3]), "grade 4 is not on the scale"),
        (lambda: cohen_kappa([0, 1], [0], scale=[0, 1, 2, 3]), "differ in length"),
        (lambda: cohen_kappa([0], [0], scale=[0, 1], weights="cubic"), "weights must be"),
        (lambda: cohen_kappa([0], [0], scale=[1, 0]), "increase strictly"),
        (lambda: cohen_kappa([0], [0], scale=[0, 1], resamples=-1), "resamples must be"),
        (lambda: cohen_kappa([True], [0], scale=[0, 1]), "not on the scale"),
    ],
)
def test_invalid_input_is_refused_with_the_problem_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- the campaign report against the oracles --------------------------------------------


@PROPERTY
@given(campaigns(), st.sampled_from(WEIGHTINGS))
def test_pairwise_table_equals_scikit_learn_on_each_pairs_shared_items(campaign, weights):
    check_pairwise_table_against_scikit_learn(campaign, weights)


@LARGE_PROPERTY
@given(campaigns(max_judges=4, max_items=12, tops=LARGE_TOPS), st.sampled_from(WEIGHTINGS))
def test_pairwise_table_equals_scikit_learn_on_the_largest_scales(campaign, weights):
    check_pairwise_table_against_scikit_learn(campaign, weights)


def check_pairwise_table_against_scikit_learn(campaign, weights):
    triples, scale, threshold = campaign
    ratings = build_ratings(triples, scale=scale, threshold=threshold)
    report = compute_agreement(ratings, weights=weights, resamples=0)
    grid = matrix_of(ratings)
    rows = {(p.judge_a, p.judge_b): p for p in report.pairs}
    for (a, ja), (b, jb) in itertools.combinations(enumerate(ratings.judges), 2):
        shared = [(r[a], r[b]) for r in grid if r[a] is not None and r[b] is not None]
        if not shared:
            assert (ja, jb) not in rows, "pairs of judges with nothing shared are left out"
            continue
        row = rows[(ja, jb)]
        x, y = [s for s, _ in shared], [t for _, t in shared]
        assert row.n == len(shared)
        assert np.array_equal(np.array(row.confusion), confusion_matrix(x, y, labels=scale))
        unweighted = sk_kappa(x, y, scale)
        # Without weights the two are one call of scikit-learn's (its checks cost ~5 ms).
        weighted = unweighted if weights is None else sk_kappa(x, y, scale, weights)
        for ours, oracle in [
            (row.kappa, weighted),
            (row.kappa_unweighted, unweighted),
            (
                row.kappa_at_threshold,
                sk_kappa(
                    [int(g >= threshold) for g in x], [int(g >= threshold) for g in y], [0, 1]
                ),
            ),
        ]:
            if len(shared) < 2 or math.isnan(oracle):
                assert ours.value is None and ours.reason
            else:
                assert close(ours.value, oracle), (ours, oracle)
        assert close(row.observed.value, np.mean([s == t for s, t in shared]))
        assert close(row.within_one.value, np.mean([abs(s - t) <= 1 for s, t in shared]))
    for stat in statistics_in(report):
        assert_well_formed(stat)


def modal_count(grid) -> int | None:
    """The policy restated: the most common number >= 2 of judges per item, larger on a tie."""
    tally = Counter(sum(g is not None for g in row) for row in grid)
    several = {m: c for m, c in tally.items() if m >= 2}
    if not several:
        return None
    top = max(several.values())
    return max(m for m, c in several.items() if c == top)


@PROPERTY
@given(campaigns())
def test_fleiss_kappa_equals_statsmodels_over_items_with_the_modal_number_of_judges(campaign):
    check_fleiss_kappa_against_statsmodels(campaign)


@LARGE_PROPERTY
@given(campaigns(tops=LARGE_TOPS))
def test_fleiss_kappa_equals_statsmodels_on_the_largest_scales(campaign):
    check_fleiss_kappa_against_statsmodels(campaign)


def check_fleiss_kappa_against_statsmodels(campaign):
    triples, scale, threshold = campaign
    ratings = build_ratings(triples, scale=scale, threshold=threshold)
    grid = matrix_of(ratings)
    m = modal_count(grid)
    for binary in (False, True):
        ours = fleiss_kappa(ratings, at_threshold=binary, resamples=0)
        assert_well_formed(ours)
        if m is None:
            assert ours.value is None
            continue
        categories = [0, 1] if binary else scale
        kept = [[g for g in row if g is not None] for row in grid]
        kept = [
            [int(g >= threshold) if binary else g for g in row] for row in kept if len(row) == m
        ]
        table = np.array([[row.count(c) for c in categories] for row in kept])
        with np.errstate(divide="ignore", invalid="ignore"):
            oracle = sm_fleiss_kappa(table, method="fleiss")
        assert ours.n == len(kept)
        if math.isnan(oracle):
            assert ours.value is None
            assert "every judge gave every pair the same grade" in ours.reason or (
                binary and "every judge called every pair" in ours.reason
            )
        else:
            assert close(ours.value, oracle), (ours, oracle)
            left_out = len(grid) - len(kept)
            assert (f"{left_out} pairs graded by another number" in ours.note) == (left_out > 0)


@PROPERTY
@given(campaigns(), st.sampled_from(["ordinal", "interval"]))
def test_alpha_equals_krippendorff_with_missing_judgments(campaign, level):
    check_alpha_against_krippendorff(campaign, level)


@LARGE_PROPERTY
@given(campaigns(tops=LARGE_TOPS), st.sampled_from(["ordinal", "interval"]))
def test_alpha_equals_krippendorff_on_the_largest_scales(campaign, level):
    check_alpha_against_krippendorff(campaign, level)


def check_alpha_against_krippendorff(campaign, level):
    triples, scale, threshold = campaign
    ratings = build_ratings(triples, scale=scale, threshold=threshold)
    ours = krippendorff_alpha(ratings, level=level, resamples=0)
    assert_well_formed(ours)
    reliability = np.array(
        [[np.nan if g is None else g for g in row] for row in matrix_of(ratings)], dtype=float
    ).T  # judges x items
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            oracle = krippendorff.alpha(
                reliability_data=reliability, level_of_measurement=level, value_domain=scale
            )
    except ValueError:  # no item with two or more judgments
        oracle = math.nan
    if math.isnan(oracle):
        assert ours.value is None
    else:
        assert close(ours.value, oracle), (ours, oracle)


@PROPERTY
@given(campaigns())
def test_observed_agreement_counts_every_pair_of_judgments_on_an_item(campaign):
    triples, scale, threshold = campaign
    ratings = build_ratings(triples, scale=scale, threshold=threshold)
    same = near = total = 0
    for row in matrix_of(ratings):
        grades = [g for g in row if g is not None]
        for x, y in itertools.permutations(grades, 2):
            same, near, total = same + (x == y), near + (abs(x - y) <= 1), total + 1
    exact = observed_agreement(ratings, resamples=0)
    within = observed_agreement(ratings, within=1, resamples=0)
    if total == 0:
        assert exact.value is None and within.value is None and exact.reason
    else:
        assert close(exact.value, same / total) and close(within.value, near / total)


@PROPERTY
@given(campaigns())
def test_report_agrees_with_the_single_statistic_functions(campaign):
    triples, scale, threshold = campaign
    ratings = build_ratings(triples, scale=scale, threshold=threshold)
    report = compute_agreement(ratings, resamples=30, seed=7)
    options = {"resamples": 30, "seed": 7}
    assert report.fleiss == fleiss_kappa(ratings, **options)
    assert report.fleiss_at_threshold == fleiss_kappa(ratings, at_threshold=True, **options)
    assert report.alpha_ordinal == krippendorff_alpha(ratings, level="ordinal", **options)
    assert report.alpha_interval == krippendorff_alpha(ratings, level="interval", **options)
    assert report.observed == observed_agreement(ratings, **options)
    assert report.within_one == observed_agreement(ratings, within=1, **options)
    for stat in statistics_in(report):
        assert_well_formed(stat)


def test_fleiss_textbook_example_fourteen_raters():
    # Wikipedia's Fleiss' kappa example: 10 subjects, 14 raters, 5 categories; 0.210.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    triples = []
    for subject, row in enumerate(table):
        grades = [g for g, count in enumerate(row) for _ in range(count)]
        triples += [(subject, judge, g) for judge, g in enumerate(grades)]
    ratings = build_ratings(triples, scale=range(5), threshold=2)
    p_bar = sum((sum(c * c for c in row) - 14) / (14 * 13) for row in table) / 10
    p_e = sum((sum(col) / 140) ** 2 for col in zip(*table, strict=True))
    kappa = fleiss_kappa(ratings, resamples=0)
    assert kappa.value == pytest.approx((p_bar - p_e) / (1 - p_e), abs=TOLERANCE)
    assert round(kappa.value, 3) == 0.210 and kappa.note == ""


def test_krippendorff_textbook_examples():
    nan = None
    # Krippendorff's own example (the krippendorff package's docs): interval 0.810845.
    three_coders = [
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ]
    triples = [
        (unit, coder, g)
        for coder, row in enumerate(three_coders)
        for unit, g in enumerate(row)
        if g is not None
    ]
    ratings = build_ratings(triples, scale=[1, 2, 3, 4], threshold=3)
    assert round(krippendorff_alpha(ratings, level="interval", resamples=0).value, 6) == 0.810845
    # Four coders, five grades: ordinal 0.815.
    four_coders = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    triples = [
        (unit, coder, g)
        for coder, row in enumerate(four_coders)
        for unit, g in enumerate(row)
        if g is not None
    ]
    ratings = build_ratings(triples, scale=[1, 2, 3, 4, 5], threshold=3)
    alpha = krippendorff_alpha(ratings, level="ordinal", resamples=0)
    assert round(alpha.value, 3) == 0.815
    assert krippendorff_band(alpha.value) == "reliable"


# --- undefined cases -------------------------------------------------------------------


def test_everyone_giving_one_grade_leaves_the_chance_corrected_statistics_undefined():
    triples = [(p, j, 0) for p in range(5) for j in "abc"]
    report = compute_agreement(build_ratings(triples, scale=[0, 1, 2, 3], threshold=2))
    assert report.fleiss.value is None
    assert report.fleiss.reason == (
        "every judge gave every pair the same grade (0), so Fleiss' kappa is undefined"
    )
    assert "grade 0, so alpha is undefined" in report.alpha_ordinal.reason
    assert report.alpha_interval.value is None
    assert "not relevant" in report.fleiss_at_threshold.reason
    for row in report.pairs:
        assert row.kappa.value is None and "same grade (0)" in row.kappa.reason
        assert "not relevant (grade below 2)" in row.kappa_at_threshold.reason
        assert row.observed.value == 1.0
    assert report.observed.value == 1.0  # raw agreement is still defined: all agree


def test_a_single_judge_has_nothing_to_agree_with():
    ratings = build_ratings([(p, "solo", p % 4) for p in range(8)], scale=[0, 1, 2, 3], threshold=2)
    report = compute_agreement(ratings)
    assert report.pairs == ()
    for stat in (report.fleiss, report.alpha_ordinal, report.observed, report.within_one):
        assert stat.value is None
        assert stat.reason == "only one judge has graded pairs, so there is nothing to agree on"
    [profile] = judge_profiles(ratings)
    assert profile.grade_counts == (2, 2, 2, 2)
    assert profile.leniency.reason == "no other judge graded any of this judge's pairs"


def test_no_judgments_at_all():
    report = compute_agreement(build_ratings([], scale=[0, 1, 2, 3], threshold=1))
    assert report.items == 0 and report.fleiss.reason == "there are no judgments yet"


def test_judges_who_share_one_pair_get_a_row_without_kappa():
    triples = [(1, "a", 0), (1, "b", 3), (2, "a", 1), (3, "b", 2)]
    [row] = compute_agreement(build_ratings(triples, scale=[0, 1, 2, 3], threshold=2)).pairs
    assert row.n == 1 and row.observed.value == 0.0
    assert row.kappa.reason == "the two judges graded only 1 pair in common; kappa needs at least 2"


def test_fleiss_leaves_out_pairs_with_another_number_of_judges_and_says_so():
    triples = [(p, j, (p + i) % 4) for p in range(6) for i, j in enumerate("abc")]
    triples += [(9, "a", 1), (9, "b", 2), (10, "c", 0)]  # 2 judges, 1 judge
    kappa = fleiss_kappa(build_ratings(triples, scale=[0, 1, 2, 3], threshold=2))
    assert kappa.n == 6
    assert kappa.note.startswith(
        "computed over the 6 pairs graded by 3 judges each; "
        "2 pairs graded by another number of judges were left out"
    )


@PROPERTY
@given(campaigns())
def test_no_statistic_is_ever_nan_and_undefined_ones_say_why(campaign):
    triples, scale, threshold = campaign
    ratings = build_ratings(triples, scale=scale, threshold=threshold)
    report = compute_agreement(ratings, resamples=20, seed=1)
    everything = [report, judge_profiles(ratings)]
    everything.append(agreement_by_topic(ratings, {p: p[:2] for p in ratings.items}))
    for stat in statistics_in(everything):
        assert_well_formed(stat)


# --- bootstrap -------------------------------------------------------------------------


def ordinary_triples(items=150, judges="abc", seed=3) -> list[tuple[int, str, int]]:
    """Judges who mostly agree: a true grade per pair, each judge off by one now and then."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, size=items)
    triples = []
    for p, grade in enumerate(truth):
        for j in judges:
            if rng.random() < 0.9:
                noise = rng.choice([-1, 0, 0, 0, 1])
                triples.append((p, j, int(np.clip(grade + noise, 0, 3))))
    return triples


def ordinary_campaign(**options) -> Ratings:
    return build_ratings(ordinary_triples(**options), scale=[0, 1, 2, 3], threshold=2)


def test_bootstrap_is_reproducible_by_seed():
    triples = ordinary_triples()
    ratings = build_ratings(triples, scale=[0, 1, 2, 3], threshold=2)
    first = compute_agreement(ratings, resamples=200, seed=11)
    assert compute_agreement(ratings, resamples=200, seed=11) == first
    other = compute_agreement(ratings, resamples=200, seed=12)
    assert (other.alpha_ordinal.low, other.alpha_ordinal.high) != (
        first.alpha_ordinal.low,
        first.alpha_ordinal.high,
    )
    # The triples' order does not matter: items are sorted before resampling.
    again = build_ratings(list(reversed(triples)), scale=[0, 1, 2, 3], threshold=2)
    assert compute_agreement(again, resamples=200, seed=11) == first


@pytest.mark.parametrize("budget", [1, 700])
def test_resamples_evaluated_in_small_batches_give_the_same_report(monkeypatch, budget):
    # run_blocks evaluates the resamples' sums a batch at a time so that a large scale with
    # many judges stays within memory (issue 27); the batches must not change a number.
    triples = ordinary_triples()
    ratings = build_ratings(triples, scale=[0, 1, 2, 3], threshold=2)
    whole = compute_agreement(ratings, resamples=300, seed=5)
    monkeypatch.setattr(agreement_core, "_SUMS_BUDGET", budget)
    assert compute_agreement(ratings, resamples=300, seed=5) == whole


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_intervals_contain_the_estimate_in_ordinary_campaigns(seed):
    report = compute_agreement(ordinary_campaign(seed=seed), resamples=500, seed=seed)
    stats = [report.fleiss, report.fleiss_at_threshold, report.alpha_ordinal]
    stats += [report.alpha_interval, report.observed, report.within_one]
    for row in report.pairs:
        stats += [row.kappa, row.kappa_unweighted, row.kappa_at_threshold, row.observed]
    for stat in stats:
        assert stat.low < stat.value < stat.high, stat
        assert "resamples" not in stat.note, "no resample should lack a value here"


def test_intervals_are_the_percentiles_of_the_statistic_on_resampled_pairs():
    """The vectorised bootstrap recomputed the slow way: for each resample the oracles on
    the resampled items, then numpy's percentiles."""
    ratings = ordinary_campaign(items=40, judges="abcd", seed=5)
    grid, scale, resamples = matrix_of(ratings), list(ratings.scale), 120
    report = compute_agreement(ratings, weights="linear", resamples=resamples, seed=4)
    draws = np.concatenate(list(resample_items(len(grid), resamples=resamples, seed=4)))
    assert draws.shape == (resamples, len(grid))

    def percentile(values):
        values = [v for v in values if not math.isnan(v)]
        return tuple(np.percentile(values, [2.5, 97.5]))

    row = next(r for r in report.pairs if (r.judge_a, r.judge_b) == ("a", "c"))
    kappas = []
    for draw in draws:
        shared = [(grid[i][0], grid[i][2]) for i in draw if None not in (grid[i][0], grid[i][2])]
        x, y = [s for s, _ in shared], [t for _, t in shared]
        kappas.append(sk_kappa(x, y, scale, "linear") if len(shared) >= 2 else math.nan)
    assert np.allclose((row.kappa.low, row.kappa.high), percentile(kappas), atol=1e-9)

    reliability = np.array([[np.nan if g is None else g for g in r] for r in grid]).T
    alphas = [
        krippendorff.alpha(
            reliability_data=reliability[:, draw],
            value_domain=scale,
            level_of_measurement="ordinal",
        )
        for draw in draws
    ]
    alpha = report.alpha_ordinal
    assert np.allclose((alpha.low, alpha.high), percentile(alphas), atol=1e-9)

    m = modal_count(grid)
    eligible = [i for i, r in enumerate(grid) if sum(g is not None for g in r) == m]
    table = np.array(
        [[sum(g == c for g in grid[i] if g is not None) for c in scale] for i in range(len(grid))]
    )
    fleiss = [sm_fleiss_kappa(table[[i for i in draw if i in eligible]]) for draw in draws]
    assert np.allclose((report.fleiss.low, report.fleiss.high), percentile(fleiss), atol=1e-9)


def test_resamples_where_the_statistic_is_undefined_are_left_out_and_counted():
    # One dissenting pair among many all-zero ones: resamples without it have no kappa.
    a = [0] * 30 + [1]
    b = [0] * 30 + [1]
    kappa = cohen_kappa(a, b, scale=[0, 1, 2, 3], resamples=400, seed=0)
    assert kappa.value == 1.0
    assert "undefined in" in kappa.note and "of 400 resamples" in kappa.note


# --- bands -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (-0.01, "poor"),
        (0.0, "slight"),
        (0.2, "slight"),
        (0.21, "fair"),
        (0.4, "fair"),
        (0.41, "moderate"),
        (0.6, "moderate"),
        (0.61, "substantial"),
        (0.8, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
        (None, "undefined"),
    ],
)
def test_landis_koch_bands(value, band):
    assert landis_koch(value) == band


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (0.8, "reliable"),
        (0.799, "tentative conclusions only"),
        (0.667, "tentative conclusions only"),
        (0.666, "unreliable"),
        (-0.2, "unreliable"),
        (None, "undefined"),
    ],
)
def test_krippendorff_bands(value, band):
    assert krippendorff_band(value) == band


# --- per topic, per judge, against gold ------------------------------------------------


def test_topics_come_worst_first_with_undefined_ones_last():
    triples = [
        ("good1", "a", 3),
        ("good1", "b", 3),
        ("good2", "a", 0),
        ("good2", "b", 0),
        ("bad1", "a", 0),
        ("bad1", "b", 3),
        ("bad2", "a", 3),
        ("bad2", "b", 0),
        ("flat1", "a", 1),
        ("flat1", "b", 1),
        ("flat2", "a", 1),
    ]
    topic = {p: p[:-1] for p, _, _ in triples}
    ratings = build_ratings(triples, scale=[0, 1, 2, 3], threshold=2)
    rows = agreement_by_topic(ratings, topic)
    assert [r.topic for r in rows] == ["bad", "good", "flat"]
    bad, good, flat = rows
    assert (bad.pairs, bad.multiply_judged, bad.disputed) == (2, 2, 2)
    assert good.alpha_ordinal.value == 1.0 and good.disputed == 0
    assert flat.alpha_ordinal.value is None and "grade 1" in flat.alpha_ordinal.reason
    assert (flat.pairs, flat.multiply_judged) == (2, 1)


@PROPERTY
@given(campaigns())
def test_topic_alpha_is_krippendorffs_alpha_of_the_topics_pairs(campaign):
    triples, scale, threshold = campaign
    ratings = build_ratings(triples, scale=scale, threshold=threshold)
    topic = {p: int(p[1:]) % 3 for p in ratings.items}
    grid = dict(zip(ratings.items, matrix_of(ratings), strict=True))
    rows = agreement_by_topic(ratings, topic)
    defined = [r.alpha_ordinal.value for r in rows if r.alpha_ordinal.value is not None]
    assert defined == sorted(defined)
    assert all(r.alpha_ordinal.value is None for r in rows[len(defined) :])
    for row in rows:
        mine = [grid[p] for p in ratings.items if topic[p] == row.topic]
        several = [[g for g in r if g is not None] for r in mine]
        several = [r for r in several if len(r) >= 2]
        assert row.disputed == sum(len(set(r)) > 1 for r in several)
        if row.alpha_ordinal.value is not None:
            data = np.array([[np.nan if g is None else g for g in r] for r in mine]).T
            oracle = krippendorff.alpha(
                reliability_data=data, value_domain=scale, level_of_measurement="ordinal"
            )
            assert close(row.alpha_ordinal.value, oracle)


def test_topics_must_cover_every_pair():
    ratings = build_ratings([(1, "a", 0), (2, "a", 1)], scale=[0, 1], threshold=1)
    with pytest.raises(ValueError, match=r"every pair needs a topic; 1 have none, e\.g\. 2"):
        agreement_by_topic(ratings, {1: "t"})


@PROPERTY
@given(campaigns())
def test_leniency_is_the_mean_difference_from_the_others_median(campaign):
    triples, scale, threshold = campaign
    ratings = build_ratings(triples, scale=scale, threshold=threshold)
    grid = matrix_of(ratings)
    for j, profile in enumerate(judge_profiles(ratings)):
        mine = [row[j] for row in grid if row[j] is not None]
        assert profile.grade_counts == tuple(mine.count(g) for g in scale)
        assert profile.judged == len(mine)
        diffs = [
            row[j] - statistics.median([g for k, g in enumerate(row) if k != j and g is not None])
            for row in grid
            if row[j] is not None and any(g is not None for k, g in enumerate(row) if k != j)
        ]
        if diffs:
            assert close(profile.leniency.value, statistics.fmean(diffs))
            assert profile.leniency.n == len(diffs)
        else:
            assert profile.leniency.value is None


def test_a_lenient_judge_is_positive_and_a_strict_one_negative():
    triples = []
    for p in range(10):
        triples += [(p, "fair1", 1), (p, "fair2", 1), (p, "kind", 3), (p, "harsh", 0)]
    profiles = {
        pr.judge: pr.leniency.value
        for pr in judge_profiles(build_ratings(triples, scale=[0, 1, 2, 3], threshold=2))
    }
    assert profiles["kind"] == 2.0 and profiles["harsh"] == -1.0 and profiles["fair1"] == 0.0


def test_a_judge_who_grades_like_the_two_others_is_neither_lenient_nor_strict():
    # With two other judges the lower median is the lower of their grades: every judge of
    # such pairs looked lenient. The midpoint of the two is the fair consensus.
    grades = [(0, 1, 2), (1, 2, 0), (2, 0, 1), (3, 2, 1), (1, 3, 2), (2, 1, 3)]
    triples = [
        (p, judge, g) for p, row in enumerate(grades) for judge, g in zip("abc", row, strict=True)
    ]
    profiles = judge_profiles(build_ratings(triples, scale=[0, 1, 2, 3], threshold=2))
    assert [pr.leniency.value for pr in profiles] == [0.0, 0.0, 0.0]


@PROPERTY
@given(graded_pairs, st.sampled_from(WEIGHTINGS))
def test_calibration_equals_scikit_learn_against_gold(data, weights):
    scale, pairs = data
    grades = {f"p{i}": x for i, (x, _) in enumerate(pairs)}
    gold = {f"p{i}": y for i, (_, y) in enumerate(pairs)}
    gold["only-gold"] = 0
    result = calibrate_judge(grades, gold, scale=scale, weights=weights, resamples=0)
    assert result.n == len(pairs)
    if not pairs:
        assert result.accuracy.reason == "the judge graded none of the gold pairs"
        return
    x, y = [x for x, _ in pairs], [y for _, y in pairs]
    assert close(result.accuracy.value, np.mean(np.array(x) == np.array(y)))
    assert close(result.mean_absolute_error.value, np.mean(np.abs(np.array(x) - np.array(y))))
    unweighted = sk_kappa(x, y, scale)
    weighted = unweighted if weights is None else sk_kappa(x, y, scale, weights)
    for ours, oracle in [(result.kappa, unweighted), (result.weighted_kappa, weighted)]:
        if len(pairs) < 2 or math.isnan(oracle):
            assert ours.value is None and "the judge and gold" in ours.reason
        else:
            assert close(ours.value, oracle)


def test_judges_are_flagged_by_kappa_against_gold_lowest_first():
    gold = {p: p % 4 for p in range(40)}
    judges = {
        "good": dict(gold),
        "sloppy": {p: (g + 1) % 4 if p % 3 else g for p, g in gold.items()},
        "contrary": {p: 3 - g for p, g in gold.items()},
        "absent": {"elsewhere": 2},
    }
    calibrations = {
        j: calibrate_judge(grades, gold, scale=[0, 1, 2, 3], resamples=0)
        for j, grades in judges.items()
    }
    flags = flag_judges(calibrations, min_kappa=0.6)
    assert [f.judge for f in flags] == ["contrary", "sloppy", "absent"]
    assert flags[0].reason.startswith("kappa ") and "below 0.6000" in flags[0].reason
    assert flags[-1].reason == "cannot be checked: the judge graded none of the gold pairs"


# --- building ratings ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("triples", "threshold", "message"),
    [
        ([(1, "a", 7)], 2, "grade 7 is not on the scale"),
        ([(1, "a", 1), (1, "a", 2)], 2, "judge 'a' graded pair 1 more than once"),
        ([(1, "a", 1)], 0, "relevance threshold must be above the lowest grade"),
        ([(1, "a", 1)], 4, "relevance threshold"),
        ([(1, "a", 1.0)], 2, "is not on the scale"),
    ],
)
def test_build_ratings_refuses_bad_input(triples, threshold, message):
    with pytest.raises(ValueError, match=message):
        build_ratings(triples, scale=[0, 1, 2, 3], threshold=threshold)


def test_cohen_kappa_interval_is_the_percentile_interval_of_its_resampled_pairs():
    rng = np.random.default_rng(8)
    a = rng.integers(0, 4, size=60)
    b = np.clip(a + rng.choice([-1, 0, 0, 1], size=60), 0, 3)
    kappa = cohen_kappa(a, b, scale=[0, 1, 2, 3], weights="quadratic", resamples=300, seed=2)
    draws = np.concatenate(list(resample_items(60, resamples=300, seed=2)))
    slow = [sk_kappa(a[d], b[d], [0, 1, 2, 3], "quadratic") for d in draws]
    assert np.allclose((kappa.low, kappa.high), np.percentile(slow, [2.5, 97.5]), atol=1e-9)
    assert kappa.low < kappa.value < kappa.high
