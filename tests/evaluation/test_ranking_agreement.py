"""evaluation.analysis.ranking_agreement: Kendall's tau-b, Spearman and Pearson against scipy (live),
tauap_b and tau_gap against autojudge-evaluate 1.1's functions on generated leaderboards
(tests/data/ranking_agreement/expected.json, made once by make_expected.py there), and the
invariants: a ranking agrees with itself, a reversed one disagrees, scores may be shifted
and scaled, swaps are exactly the discordant pairs, intervals hold the point estimate."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.analysis import ranking_agreement as ra

EXPECTED = json.loads(
    (
        Path(__file__).resolve().parents[1] / "data" / "ranking_agreement" / "expected.json"
    ).read_text()
)
CASES = EXPECTED["cases"]


def board(values) -> dict[str, float]:
    return {f"s{i:02d}": float(v) for i, v in enumerate(values)}


@pytest.mark.parametrize("case", CASES, ids=[f"seed{c['seed']}" for c in CASES])
def test_tauap_b_and_tau_gap_equal_autojudge_evaluate(case):
    for key, expected in case.items():
        name, _, k = key.partition("@")
        if name not in ("tauap_b", "tau_gap"):
            continue
        value = ra.coefficient(name, case["reference"], case["other"], k=int(k) if k else None)
        assert value == pytest.approx(expected, abs=1e-12), key


@pytest.mark.parametrize("case", CASES, ids=[f"seed{c['seed']}" for c in CASES])
def test_kendall_spearman_pearson_equal_scipy(case):
    names = sorted(case["reference"])
    x = [case["reference"][n] for n in names]
    y = [case["other"][n] for n in names]
    oracles = {
        "kendall": stats.kendalltau(x, y).statistic,  # tau-b
        "spearman": stats.spearmanr(x, y).statistic,
        "pearson": stats.pearsonr(x, y).statistic
        if len(set(x)) > 1 and len(set(y)) > 1
        else math.nan,
    }
    for name, expected in oracles.items():
        value = ra.coefficient(name, case["reference"], case["other"])
        if math.isnan(expected):
            assert math.isnan(value), name
        else:
            assert value == pytest.approx(expected, abs=1e-12), name


def test_the_worked_example_of_tau_gap():
    """Truth a=3, b=2, c=0; the other ranks b, a, c. Position 2 (a): gap mass |3-2| = 1, a
    is above b in truth, so b-before-a is wrong: 0/1. Position 3 (c): gaps 2 and 3, both
    right: 5/5. tau_GAP = 2/2 * (0 + 1) - 1 = 0."""
    assert ra.tau_gap([3, 2, 0], [2, 3, 1]) == 0.0


def test_tauap_b_weighs_a_swap_at_the_top_more_than_at_the_bottom():
    truth = [5, 4, 3, 2, 1]
    top_swap = ra.tauap_b(truth, [4, 5, 3, 2, 1])
    bottom_swap = ra.tauap_b(truth, [5, 4, 3, 1, 2])

    assert top_swap < bottom_swap < 1.0
    assert ra.kendall_tau_b(truth, [4, 5, 3, 2, 1]) == ra.kendall_tau_b(truth, [5, 4, 3, 1, 2])


# Scores on a grid of 0.01 (as leaderboards print them; ties likely), not subnormal floats
# whose differences underflow.
scores = st.lists(st.integers(0, 100).map(lambda i: i / 100), min_size=3, max_size=12)


@settings(max_examples=100, deadline=None)
@given(scores)
def test_a_ranking_agrees_with_itself_and_disagrees_with_its_reverse(values):
    reference = board(values)
    reverse = {name: -value for name, value in reference.items()}
    distinct = len(set(values)) == len(values)
    for name in ra.COEFFICIENTS:
        same = ra.coefficient(name, reference, reference)
        if name == "tau_gap" and len(set(values)) == 1:
            assert math.isnan(same)
            continue
        if name in ("kendall", "spearman", "pearson") and len(set(values)) == 1:
            assert math.isnan(same)
            continue
        if name == "tauap_b" and len(set(values)) == 1:
            assert same == 0.0  # pyircore's convention for all-tied rankings
            continue
        assert same == pytest.approx(1.0), name
        if distinct and name != "rbo":
            assert ra.coefficient(name, reference, reverse) == pytest.approx(-1.0), name
    assert ra.swapped_pairs(reference, reference) == []


@settings(max_examples=100, deadline=None)
@given(scores, scores, st.floats(0.1, 10), st.floats(-5, 5))
def test_shifting_and_scaling_the_other_scores_changes_nothing(a, b, scale, shift):
    n = min(len(a), len(b))
    reference, other = board(a[:n]), board(b[:n])
    moved = {k: v * scale + shift for k, v in other.items()}
    if any(len(set(np.round(list(d.values()), 12))) != len(set(d.values())) for d in (moved,)):
        return  # the affine map merged two scores in floating point
    for name in ("kendall", "spearman", "tauap_b", "tau_gap", "rbo"):
        before, after = (
            ra.coefficient(name, reference, other),
            ra.coefficient(name, reference, moved),
        )
        assert (math.isnan(before) and math.isnan(after)) or after == pytest.approx(before), name


@settings(max_examples=100, deadline=None)
@given(scores, scores)
def test_swaps_are_the_discordant_pairs_of_kendall(a, b):
    n = min(len(a), len(b))
    reference, other = board(a[:n]), board(b[:n])
    names = sorted(reference)
    discordant = {
        (p, q) for p in names for q in names if reference[p] > reference[q] and other[p] < other[q]
    }
    swaps = ra.swapped_pairs(reference, other)

    assert {(s.first, s.second) for s in swaps} == discordant
    assert [s.gap for s in swaps] == sorted((s.gap for s in swaps), reverse=True)


def test_at_k_keeps_the_references_top_k_and_only_common_systems_count():
    reference = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.1, "e": 0.05, "gone": 1.0}
    other = {"a": 0.5, "b": 0.6, "c": 0.4, "d": 0.9, "e": 0.8, "new": 0.0}

    assert ra.top_by_reference({k: v for k, v in reference.items() if k in other}, 3) == [
        "a",
        "b",
        "c",
    ]
    # top 3 of the common systems: a, b, c; the other ranks b > a > c: one swap of three.
    assert ra.coefficient("kendall", reference, other, k=3) == pytest.approx(1 / 3)
    assert (
        ra.coefficient("kendall", reference, other, k=2)
        != ra.coefficient("kendall", reference, other, k=2)
        or True
    )
    assert math.isnan(ra.coefficient("kendall", reference, other, k=2)), "fewer than 3 systems"


def test_bad_input_is_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match="unknown coefficient 'tau'"):
        ra.coefficient("tau", board([1, 2, 3]), board([1, 2, 3]))
    with pytest.raises(ValueError, match="k must be a whole number >= 1"):
        ra.coefficient("kendall", board([1, 2, 3]), board([1, 2, 3]), k=0)
    with pytest.raises(ValueError, match="finite"):
        ra.kendall_tau_b([1, 2, math.inf], [1, 2, 3])
    with pytest.raises(ValueError, match="samples must be"):
        ra.bootstrap({}, {}, samples=0)


def topics_of(means: dict[str, float], rng, topics=30, noise=0.05) -> dict[str, dict[str, float]]:
    return {
        name: {f"q{t}": float(mean + rng.normal(0, noise)) for t in range(topics)}
        for name, mean in means.items()
    }


def test_bootstrap_intervals_hold_the_estimate_and_are_reproducible():
    rng = np.random.default_rng(7)
    means = {f"s{i}": 0.1 * i for i in range(8)}
    reference = topics_of(means, rng)
    other = {
        s: {q: v + rng.normal(0, 0.05) for q, v in per.items()} for s, per in reference.items()
    }

    first = ra.bootstrap(reference, other, samples=200, seed=3)
    again = ra.bootstrap(reference, other, samples=200, seed=3)

    assert first == again
    ref_means = {s: float(np.mean(list(v.values()))) for s, v in reference.items()}
    other_means = {s: float(np.mean(list(v.values()))) for s, v in other.items()}
    for name in ra.COEFFICIENTS:
        estimate = ra.coefficient(name, ref_means, other_means)
        assert first[name].low <= estimate + 1e-9 and estimate - 1e-9 <= first[name].high, name


def test_agreement_and_per_topic_put_it_together():
    rng = np.random.default_rng(11)
    reference = topics_of({f"s{i}": 0.1 * i for i in range(6)}, rng, topics=10)
    other = {s: dict(per) for s, per in reference.items()}
    other["s5"] = {q: v - 0.25 for q, v in other["s5"].items()}  # s5 drops below s3 and s4
    means = {s: float(np.mean(list(v.values()))) for s, v in reference.items()}
    other_means = {s: float(np.mean(list(v.values()))) for s, v in other.items()}

    result = ra.agreement(
        means, other_means, k=3, reference_topics=reference, other_topics=other, samples=50
    )

    assert result.systems == 6 and result.samples == 50
    assert {(s.first, s.second) for s in result.swaps} >= {("s5", "s4")}
    assert set(result.values) == set(result.at_k) == set(ra.COEFFICIENTS)
    assert set(result.intervals) == set(ra.COEFFICIENTS)
    per = ra.per_topic(reference, other)
    assert sorted(per) == sorted((f"q{t}" for t in range(10)), key=str.encode)
    assert all(-1 <= v <= 1 for v in per.values())


# --- means that differ only by rounding are ties ---------------------------------------------

# Judged@10 per topic on 41 topics, 32.8 tenths in all: the mean is 0.8, but added up in topic
# order (as trec_eval does) it is stored as 0.7999999999999999.
ROUNDED_EIGHT = [
    1.0, 1.0, 1.0, 0.5, 1.0, 0.7, 0.9, 1.0, 0.7, 1.0, 0.5, 0.7, 1.0, 0.8, 0.8, 0.6, 0.4, 0.7,
    0.9, 0.8, 1.0, 0.6, 0.9, 1.0, 1.0, 0.7, 0.3, 1.0, 0.8, 1.0, 0.8, 0.7, 0.3, 0.8, 1.0, 1.0,
    1.0, 0.5, 0.9, 1.0, 0.5,
]  # fmt: skip


def test_means_equal_but_for_rounding_rank_as_ties():
    noisy = float(np.cumsum(ROUNDED_EIGHT)[-1]) / len(ROUNDED_EIGHT)
    assert noisy != 0.8 and abs(noisy - 0.8) < 1e-15  # the shape of the reported defect
    reference = {"a": noisy, "b": 0.8, "c": 0.5, "d": 0.9}
    other = {"a": 0.7, "b": 0.6, "c": 0.5, "d": 0.9}
    # a and b tie under the reference: no swap, and tau-b counts the pair as tied.
    assert ra.swapped_pairs(reference, other) == []
    exact = {"a": 0.8, "b": 0.8, "c": 0.5, "d": 0.9}
    for name in ra.COEFFICIENTS:
        value = ra.coefficient(name, reference, other)
        assert value == pytest.approx(ra.coefficient(name, exact, other), abs=1e-12), name
    names = sorted(exact)
    expected = stats.kendalltau([exact[n] for n in names], [other[n] for n in names]).statistic
    assert ra.coefficient("kendall", reference, other) == pytest.approx(expected, abs=1e-12)
    # @k: the tie at the edge is broken by name, as for exact ties.
    assert ra.top_by_reference(reference, 2) == ["d", "a"]


def test_tied_means_joins_chains_within_the_tolerance_and_keeps_real_gaps():
    values = [0.8, 0.8 * (1 - 4e-13), 0.8 * (1 - 8e-13), 0.8 * (1 - 2e-12), 0.3, -0.0, 0.0]
    tied = ra.tied_means(values)
    assert len(set(tied[:3].tolist())) == 1  # each within 1e-12 of the next
    assert tied[3] != tied[2]  # 1.2e-12 apart: a real gap
    assert tied[4] == 0.3 and tied[5] == tied[6] == 0.0
    assert ra.tied_means([]).size == 0 and ra.tied_means([2.0]).tolist() == [2.0]
    # Infinities (a leaderboard's missing mean) never absorb a finite neighbour.
    assert ra.tied_means([-math.inf, 0.5, math.inf]).tolist() == [-math.inf, 0.5, math.inf]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=0, max_size=12))
def test_tied_means_never_reorders_and_moves_values_by_at_most_the_tolerance(values):
    tied = ra.tied_means(values)
    for a, b, ta, tb in zip(values, values[1:], tied, tied[1:], strict=False):
        if a < b:
            assert ta <= tb
    for value, snapped in zip(values, tied, strict=True):
        assert abs(value - snapped) <= 1e-12 * max(abs(value), abs(snapped)) * len(values)


def test_point_estimates_use_the_topics_the_intervals_use():
    """A run missing topics: its leaderboard mean is over its own topics, but the estimate
    and its interval are both over the topics every run has (the reported tau-b fell
    outside its own interval)."""
    rng = np.random.default_rng(5)
    reference = topics_of({f"s{i}": 0.1 * i for i in range(6)}, rng, topics=20)
    other = {
        s: {q: v + rng.normal(0, 0.02) for q, v in per.items()} for s, per in reference.items()
    }
    for side in (reference, other):  # s5 lacks the four topics where it would shine
        for t in range(4):
            del side["s5"][f"q{t}"]
        for s in side:
            if s != "s5":
                for t in range(4):
                    side[s][f"q{t}"] += 3.0
    own = {s: float(np.mean(list(v.values()))) for s, v in reference.items()}
    own_other = {s: float(np.mean(list(v.values()))) for s, v in other.items()}

    result = ra.agreement(
        own, own_other, reference_topics=reference, other_topics=other, samples=300
    )

    common = [f"q{t}" for t in range(4, 20)]
    on_common = {s: float(np.mean([reference[s][q] for q in common])) for s in reference}
    on_common_other = {s: float(np.mean([other[s][q] for q in common])) for s in other}
    assert result.topics == 16 and result.topics_left_out == 4
    for name in ra.COEFFICIENTS:
        expected = ra.coefficient(name, on_common, on_common_other)
        assert result.values[name] == pytest.approx(expected, abs=1e-12), name
        interval = result.intervals[name]
        assert interval.low - 1e-9 <= result.values[name] <= interval.high + 1e-9, name
    assert result.swaps == ra.swapped_pairs(on_common, on_common_other)


def test_without_missing_topics_the_leaderboards_means_are_used_as_given():
    rng = np.random.default_rng(6)
    reference = topics_of({f"s{i}": 0.1 * i for i in range(5)}, rng, topics=8)
    means = {s: float(np.mean(list(v.values()))) for s, v in reference.items()}
    result = ra.agreement(means, means, reference_topics=reference, other_topics=reference)
    assert result.topics == 8 and result.topics_left_out == 0
    assert result.values["kendall"] == 1.0
