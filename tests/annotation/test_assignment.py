from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.assignment import assign_topics, shuffled_order


def topics_of(sizes):
    return {f"q{t}": [f"q{t}-d{i}" for i in range(size)] for t, size in enumerate(sizes)}


def judges_per_pair(given_):
    counts = Counter()
    for judge, pairs in given_.items():
        assert len(pairs) == len(set(pairs)), f"{judge} got a pair twice"
        counts.update(pairs)
    return counts


def test_every_pair_gets_overlap_distinct_judges():
    topics = topics_of([5, 3, 4])
    given_ = assign_topics(topics, ["a", "b", "c"], overlap=2, seed=1)
    assert set(judges_per_pair(given_).values()) == {2}
    assert sum(len(p) for p in given_.values()) == 2 * 12


def test_a_judge_gets_whole_topics():
    given_ = assign_topics(topics_of([4, 4, 4, 4]), ["a", "b", "c", "d"], overlap=2, seed=3)
    for pairs in given_.values():
        per_topic = Counter(pair.split("-")[0] for pair in pairs)
        assert set(per_topic.values()) == {4}, (
            "a judge should get every pair of a topic they work on"
        )


def test_assignment_is_reproducible_for_a_seed():
    topics = topics_of([3, 3, 3, 3, 3])
    assert assign_topics(topics, ["a", "b", "c"], overlap=1, seed=9) == assign_topics(
        topics, ["a", "b", "c"], overlap=1, seed=9
    )


def test_pairs_already_assigned_count_toward_overlap_and_are_not_repeated():
    topics = topics_of([2])
    already = {"q0-d0": ["a"], "q0-d1": ["a", "b"]}
    given_ = assign_topics(topics, ["a", "b", "c"], overlap=2, already=already, seed=0)
    assert "a" not in given_
    assert sum(len(p) for p in given_.values()) == 1
    assert "q0-d0" in next(iter(given_.values()))


def test_overlap_larger_than_the_number_of_judges_is_refused():
    with pytest.raises(ValueError, match="overlap 3 needs at least 3 judges, the campaign has 2"):
        assign_topics(topics_of([1]), ["a", "b"], overlap=3)


def test_overlap_must_be_positive():
    with pytest.raises(ValueError, match="overlap must be at least 1"):
        assign_topics(topics_of([1]), ["a"], overlap=0)


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 20), min_size=1, max_size=12),
    judges=st.integers(1, 7),
    overlap=st.integers(1, 4),
    seed=st.integers(0, 10**6),
)
def test_assignment_is_complete_distinct_and_balanced(sizes, judges, overlap, seed):
    overlap = min(overlap, judges)
    names = [f"j{i}" for i in range(judges)]
    topics = topics_of(sizes)
    given_ = assign_topics(topics, names, overlap=overlap, seed=seed)
    counts = judges_per_pair(given_)
    assert set(counts.values()) == {overlap}
    assert len(counts) == sum(sizes)
    loads = [len(given_.get(j, [])) for j in names]
    # Greedy LPT over whole topics: no judge exceeds the mean by more than the largest topic.
    assert max(loads) <= sum(loads) / judges + max(sizes)


def test_shuffled_order_is_a_reproducible_permutation():
    items = list(range(50))
    first = shuffled_order(items, seed=("campaign-1", "judge-7", "q3"))
    assert sorted(first) == items
    assert first == shuffled_order(items, seed=("campaign-1", "judge-7", "q3"))
    assert first != shuffled_order(items, seed=("campaign-1", "judge-8", "q3"))
