"""annotation.adjudication: the rules on hand cases, against the statistics module's
median_low and multimode as oracles, and the order of the disagreement queue."""

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.adjudication import Decision, Rule, decide, disagreement_order, spread, straddles

grades_lists = st.lists(st.integers(0, 5), min_size=1, max_size=9)


# --- decide ----------------------------------------------------------------------------


@pytest.mark.parametrize("rule", list(Rule))
def test_unanimous_pairs_are_accepted_under_every_rule(rule):
    assert decide([2, 2, 2], rule) == Decision(2, "unanimous", "all 3 judges gave 2")


@pytest.mark.parametrize("rule", ["majority", "median", "lead"])
def test_a_complete_pair_with_one_grade_is_unanimous(rule):
    # With overlap 1 the caller passes the pair's one grade: nothing to dispute.
    assert decide([3], rule) == Decision(3, "unanimous", "the only judge gave 3")


def test_majority_takes_the_most_common_grade_even_without_half_the_votes():
    assert decide([2, 2, 1], "majority") == Decision(2, "majority", "2 of 3 judges gave 2")
    assert decide([0, 1, 2, 2, 3], "majority").grade == 2


def test_a_majority_tie_goes_to_the_lead():
    decision = decide([1, 2, 2, 1], "majority")
    assert decision == Decision(
        None, "majority", "grades 1, 2 tie with 2 judges each (1, 1, 2, 2); the lead decides"
    )
    assert not decision.decided
    assert decide([0, 3], "majority").grade is None


def test_median_takes_the_lower_middle_grade_of_an_even_count():
    assert decide([3, 0, 2, 1], "median") == Decision(1, "median", "the median of 0, 1, 2, 3 is 1")
    assert decide([0, 3], "median").grade == 0
    assert decide([0, 3, 3], "median").grade == 3


def test_lead_rule_decides_only_unanimous_pairs():
    assert decide([1, 2], Rule.LEAD) == Decision(
        None, "lead", "the judges disagree (1, 2); the lead decides"
    )


@pytest.mark.parametrize(
    ("grades", "rule", "message"),
    [
        ([], "median", "at least one grade"),
        ([1, 2], "mean", "unknown adjudication rule 'mean'; use one of majority, median, lead"),
        ([1, 2.0], "median", "grades must be integers"),
        ([True, 1], "median", "grades must be integers"),
    ],
)
def test_bad_input_is_refused(grades, rule, message):
    with pytest.raises(ValueError, match=message):
        decide(grades, rule)


@settings(max_examples=300, deadline=None)
@given(grades_lists, st.sampled_from(list(Rule)), st.randoms())
def test_decisions_follow_the_oracles_and_ignore_the_order_of_grades(grades, rule, rng):
    decision = decide(grades, rule)
    shuffled = list(grades)
    rng.shuffle(shuffled)
    assert decide(shuffled, rule).grade == decision.grade
    assert decision.reason
    if len(set(grades)) == 1:
        assert (decision.grade, decision.rule_applied) == (grades[0], "unanimous")
        return
    assert decision.rule_applied == rule.value
    if rule is Rule.MEDIAN:
        assert decision.grade == statistics.median_low(grades)
    elif rule is Rule.MAJORITY:
        modes = statistics.multimode(grades)
        assert decision.grade == (modes[0] if len(modes) == 1 else None)
    else:
        assert decision.grade is None


# --- the disagreement queue ------------------------------------------------------------


def test_spread_and_straddles():
    assert spread([1, 3, 2]) == 2 and spread([2]) == 0
    assert straddles([1, 2], threshold=2) and not straddles([2, 3], threshold=2)
    assert not straddles([0, 1], threshold=2)
    with pytest.raises(ValueError, match="at least one grade"):
        spread([])


def test_queue_puts_threshold_straddlers_first_then_the_widest_spread():
    pairs = [
        ("agreed", [2, 2, 2]),
        ("low-wide", [0, 1, 1]),  # spread 1, below the threshold on both sides
        ("high-wide", [2, 3, 3]),  # spread 1, relevant either way
        ("straddle-1", [1, 2]),  # spread 1 across the threshold
        ("straddle-3", [0, 3, 3]),  # spread 3 across the threshold
        ("straddle-1b", [2, 1, 1]),
    ]
    assert disagreement_order(pairs, threshold=2) == [
        "straddle-3",
        "straddle-1",
        "straddle-1b",
        "low-wide",
        "high-wide",
    ]


def test_queue_ties_follow_the_given_key_when_one_is_given():
    pairs = [(("q2", "d1"), [0, 2]), (("q1", "d9"), [0, 2]), (("q1", "d3"), [2, 0])]
    assert disagreement_order(pairs, threshold=1) == [("q2", "d1"), ("q1", "d9"), ("q1", "d3")]
    assert disagreement_order(pairs, threshold=1, tiebreak=lambda key: key) == [
        ("q1", "d3"),
        ("q1", "d9"),
        ("q2", "d1"),
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(grades_lists, max_size=30), st.integers(1, 5))
def test_queue_holds_exactly_the_disputed_pairs_in_order(grade_lists, threshold):
    pairs = list(enumerate(grade_lists))
    order = disagreement_order(pairs, threshold=threshold)
    assert sorted(order) == [k for k, g in pairs if len(set(g)) > 1]
    keys = [(not straddles(grade_lists[k], threshold), -spread(grade_lists[k]), k) for k in order]
    assert keys == sorted(keys)
