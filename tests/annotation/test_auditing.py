"""Which pairs an audit sends (annotation/auditing.py): examples of each kind, and properties
that hold for any grades (hypothesis)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.auditing import (
    MESSAGES,
    consensus_of,
    disagreement_pairs,
    machine_only_pairs,
    sample_pairs,
    select_audit,
    threshold_pairs,
)

# pairs are (topic, doc); topic_of reads the topic
TOPIC_OF = {(t, d): t for t in "AB" for d in range(6)}
ALL = set(TOPIC_OF)


def test_disagreement_needs_two_machines_and_different_grades():
    machines = {
        "machine:a": {("A", 0): 1, ("A", 1): 2, ("A", 2): 0},
        "machine:b": {("A", 0): 1, ("A", 1): 3},
    }
    chosen = disagreement_pairs(machines, eligible=ALL)
    assert [c.pair for c in chosen] == [("A", 1)]
    assert chosen[0].reason == "machines disagree: machine:a 2, machine:b 3"
    with pytest.raises(ValueError, match="two or more"):
        disagreement_pairs({"machine:a": {("A", 0): 1}}, eligible=ALL)
    with pytest.raises(ValueError, match="no machine judge"):
        disagreement_pairs({}, eligible=ALL)


def test_only_eligible_pairs_are_chosen():
    machines = {"machine:a": {("A", 0): 0, ("A", 1): 0}, "machine:b": {("A", 0): 3, ("A", 1): 3}}
    assert [c.pair for c in disagreement_pairs(machines, eligible={("A", 1)})] == [("A", 1)]


def test_threshold_pairs_with_human_grades_straddle_directly():
    # threshold 2: the machine says 2 (relevant) where the humans' consensus is 1
    machines = {"machine:a": {("A", 0): 2, ("A", 1): 3, ("A", 2): 1}}
    humans = {("A", 0): [1, 1, 3], ("A", 1): [2], ("A", 2): [1]}
    chosen = threshold_pairs(machines, humans, topic_of=TOPIC_OF, threshold=2, eligible=ALL)
    assert [c.pair for c in chosen] == [("A", 0)]
    assert "opposite sides of the threshold 2" in chosen[0].reason


def test_threshold_pairs_without_human_grades_follow_the_topics_mistakes():
    machines = {
        "machine:a": {
            # topic A: it over-calls (3 where the humans say 0)
            ("A", 0): 3,
            ("A", 1): 2,  # machine-only, relevant: chosen
            ("A", 2): 0,  # machine-only, not relevant: not chosen (it never under-called A)
            # topic B: it under-calls (1 where the humans say 3)
            ("B", 0): 1,
            ("B", 1): 2,  # machine-only, relevant: not chosen
            ("B", 2): 0,  # machine-only, not relevant: chosen
        }
    }
    humans = {("A", 0): [0], ("B", 0): [3]}
    chosen = threshold_pairs(machines, humans, topic_of=TOPIC_OF, threshold=2, eligible=ALL)
    assert [c.pair for c in chosen] == [("A", 0), ("A", 1), ("B", 0), ("B", 2)]


def test_a_topic_without_shared_pairs_selects_nothing_by_the_topic_rule():
    machines = {"machine:a": {("A", 1): 3, ("A", 2): 0}}
    assert threshold_pairs(machines, {}, topic_of=TOPIC_OF, threshold=1, eligible=ALL) == []


def test_the_sample_is_seeded_sized_and_machine_only():
    machines = {"machine:a": {pair: 1 for pair in ALL}}
    humans = {("A", 0): [1], ("A", 1): []}
    one = sample_pairs(machines, humans, size=5, seed=7, eligible=ALL)
    again = sample_pairs(machines, humans, size=5, seed=7, eligible=set(reversed(sorted(ALL))))
    assert [c.pair for c in one] == [c.pair for c in again]
    assert len(one) == 5 and ("A", 0) not in {c.pair for c in one}
    assert "of 11 machine-only pairs" in one[0].reason


def test_a_sample_larger_than_the_population_says_how_many_there_are():
    machines = {"machine:a": {("A", 0): 1, ("A", 1): 2}}
    with pytest.raises(ValueError) as error:
        sample_pairs(machines, {}, size=3, seed=0, eligible=ALL)
    assert str(error.value) == MESSAGES["size_too_large"].format(size=3, available=2, s="s")
    with pytest.raises(ValueError, match="how many pairs"):
        sample_pairs(machines, {}, size=0, seed=0, eligible=ALL)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="Unknown audit 'all'"):
        select_audit(
            "all", {"machine:a": {("A", 0): 1}}, {}, topic_of=TOPIC_OF, threshold=1, eligible=ALL
        )


def test_consensus_is_the_lower_median():
    assert consensus_of([3, 0]) == 0 and consensus_of([1, 2, 3]) == 2
    with pytest.raises(ValueError):
        consensus_of([])


# --- properties ------------------------------------------------------------------------------

pairs = st.sampled_from(sorted(ALL))
grades = st.dictionaries(pairs, st.integers(0, 3), max_size=12)
machine_sets = st.dictionaries(
    st.sampled_from(["machine:a", "machine:b", "machine:c"]), grades, min_size=1
)
human_sets = st.dictionaries(
    pairs, st.lists(st.integers(0, 3), min_size=1, max_size=3), max_size=12
)
eligible_sets = st.sets(pairs)


@settings(max_examples=200, deadline=None)
@given(machine_sets, human_sets, eligible_sets, st.integers(0, 3))
def test_every_kind_chooses_only_eligible_pairs_once(machines, humans, eligible, threshold):
    for kind in ("disagreement", "threshold"):
        try:
            chosen = select_audit(
                kind, machines, humans, topic_of=TOPIC_OF, threshold=threshold, eligible=eligible
            )
        except ValueError:
            continue
        picked = [c.pair for c in chosen]
        assert set(picked) <= eligible and len(picked) == len(set(picked))


@settings(max_examples=200, deadline=None)
@given(machine_sets, eligible_sets)
def test_disagreement_pairs_are_exactly_those_with_two_grades(machines, eligible):
    if sum(1 for g in machines.values() if g) < 2:
        return
    chosen = {c.pair for c in disagreement_pairs(machines, eligible=eligible)}
    expected = {
        pair for pair in eligible if len({g[pair] for g in machines.values() if pair in g}) > 1
    }
    assert chosen == expected


@settings(max_examples=200, deadline=None)
@given(machine_sets, human_sets, st.integers(0, 3))
def test_a_threshold_pair_with_human_grades_is_one_the_machine_calls_differently(
    machines, humans, threshold
):
    if not any(machines.values()) or not humans:
        return
    chosen = threshold_pairs(machines, humans, topic_of=TOPIC_OF, threshold=threshold, eligible=ALL)
    for choice in chosen:
        if choice.pair in humans:
            human = consensus_of(humans[choice.pair]) >= threshold
            assert any(
                (g[choice.pair] >= threshold) != human
                for g in machines.values()
                if choice.pair in g
            )
    # a machine that agrees with the humans at the threshold everywhere selects nothing
    agreeing = {"machine:x": {pair: consensus_of(gs) for pair, gs in humans.items()}}
    assert (
        threshold_pairs(agreeing, humans, topic_of=TOPIC_OF, threshold=threshold, eligible=ALL)
        == []
    )


@settings(max_examples=200, deadline=None)
@given(machine_sets, human_sets, eligible_sets, st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_a_sample_is_a_deterministic_subset_of_the_machine_only_pairs(
    machines, humans, eligible, size, seed
):
    population = machine_only_pairs(machines, humans) & eligible
    if not any(machines.values()) or size > len(population):
        with pytest.raises(ValueError):
            sample_pairs(machines, humans, size=size, seed=seed, eligible=eligible)
        return
    chosen = [
        c.pair for c in sample_pairs(machines, humans, size=size, seed=seed, eligible=eligible)
    ]
    assert len(chosen) == size == len(set(chosen)) and set(chosen) <= population
    again = sample_pairs(machines, humans, size=size, seed=seed, eligible=set(eligible))
    assert chosen == [c.pair for c in again]
