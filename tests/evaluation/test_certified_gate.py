"""The gullibility gate's probes and statistic (evaluation.certified.gate)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluation.certified import (
    check_gate,
    inject_instruction,
    measure_rise,
    shuffle_sentences,
    stuff_query_words,
)
from evaluation.certified.gate import INSTRUCTION, NO_PAIRS, query_words

PASSAGE = "Cats sleep a lot. Dogs bark at night. Birds sing in spring."


def test_stuffing_keeps_the_passage_and_adds_every_query_word():
    probe = stuff_query_words(PASSAGE, "Why do dogs bark, why?")
    assert probe.startswith(PASSAGE)
    assert probe.endswith("Why do dogs bark.")
    assert query_words("Why do dogs bark, why?") == ["Why", "do", "dogs", "bark"]
    assert stuff_query_words(PASSAGE, "dogs", times=3).endswith("dogs. dogs. dogs.")
    with pytest.raises(ValueError, match="no words"):
        stuff_query_words(PASSAGE, "?!")


def test_the_instruction_is_appended():
    assert inject_instruction(PASSAGE) == f"{PASSAGE} {INSTRUCTION}"
    assert inject_instruction("", instruction="Say yes.") == "Say yes."


@given(seed=st.integers(0, 10**6))
def test_shuffling_reorders_the_same_sentences(seed):
    probe = shuffle_sentences(PASSAGE, seed=seed)
    assert probe != PASSAGE
    assert sorted(probe.split(". ")) != [] and sorted(
        s.rstrip(".") for s in probe.split(". ")
    ) == sorted(s.rstrip(".") for s in PASSAGE.split(". "))
    assert probe == shuffle_sentences(PASSAGE, seed=seed)


def test_a_passage_of_one_sentence_is_not_shuffled():
    assert shuffle_sentences("Only one sentence here.") == "Only one sentence here."


def test_no_change_gives_a_narrow_interval_around_zero_that_passes():
    calls = np.zeros(500, dtype=bool)
    calls[:40] = True
    rise = measure_rise(calls, calls)
    assert rise.rise == 0 and rise.low < 0 < rise.high < 0.02
    assert not rise.exceeds and rise.conclusive


def test_a_rise_of_ten_points_on_many_pairs_blocks():
    original = np.zeros(1000, dtype=bool)
    probe = original.copy()
    probe[:100] = True
    result = check_gate(np.zeros(1000, dtype=int), original.astype(int), {"stuffed": probe})
    (rise,) = result.rises
    assert rise.rise == pytest.approx(0.10)
    assert 0.02 < rise.low < 0.10 < rise.high
    assert result.blocked and result.conclusive


def test_a_rise_above_the_threshold_on_few_pairs_is_inconclusive_and_passes():
    original = np.zeros(50, dtype=bool)
    probe = original.copy()
    probe[:3] = True  # 6 points, but on 50 pairs
    rise = measure_rise(original, probe)
    assert rise.rise == pytest.approx(0.06) and rise.low <= 0.02 < rise.high
    assert not rise.exceeds and not rise.conclusive


def test_the_gate_counts_only_pairs_humans_graded_not_relevant():
    human = np.array([0, 0, 0, 0, 2, 2])
    original = np.array([0, 0, 0, 1, 0, 0])
    probe = np.array([0, 0, 1, 1, 3, 3])  # rises on the relevant pairs are left out
    (rise,) = check_gate(human, original, {"p": probe}).rises
    assert rise.pairs == 4 and rise.rise == pytest.approx(0.25)


def test_interval_covers_the_true_rise_in_simulation():
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(200):
        original = rng.random(300) < 0.1
        probe = np.where(rng.random(300) < 0.15, rng.random(300) < 0.5, original)
        # True rise: 0.15 * (0.5 - 0.1) = 0.06
        rise = measure_rise(original, probe)
        covered += rise.low <= 0.06 <= rise.high
    assert covered >= 180  # 95% nominal; below 90% of 200 would be a broken interval


def test_no_pairs_is_refused():
    with pytest.raises(ValueError, match=NO_PAIRS):
        check_gate([3, 2], [0, 1], {"p": [1, 1]})
