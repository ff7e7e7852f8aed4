"""Post-editing with a control group (annotation/agreement/anchoring.py): which pairs stay
blind, and the suggested-versus-blind comparison, against hand counts, an explicit
bootstrap resample, and simulations where the truth is known."""

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.agreement.anchoring import Judged, _medians, anchoring, is_blind


def test_the_blind_share_is_kept_and_the_choice_is_the_same_on_every_call():
    chosen = [is_blind(7, judge, pair, 0.2) for judge in range(20) for pair in range(500)]
    assert 0.18 < sum(chosen) / len(chosen) < 0.22
    assert chosen == [is_blind(7, judge, pair, 0.2) for judge in range(20) for pair in range(500)]
    # Another campaign (seed) blinds other pairs; each judge has their own blind pairs.
    assert chosen != [is_blind(8, judge, pair, 0.2) for judge in range(20) for pair in range(500)]
    assert [is_blind(7, 1, p, 0.2) for p in range(500)] != [
        is_blind(7, 2, p, 0.2) for p in range(500)
    ]
    assert not any(is_blind(7, 1, p, 0.0) for p in range(100))
    assert all(is_blind(7, 1, p, 1.0) for p in range(100))


def test_hand_counted_example():
    rows = [
        # pair p1: two suggested judges agree with each other and the machine (2)
        Judged("p1", "ann", 2, 10.0, True, 2),
        Judged("p1", "bob", 2, 20.0, True, 2),
        # pair p2: two blind judges disagree; the machine said 1
        Judged("p2", "ann", 1, 30.0, False, 1),
        Judged("p2", "bob", 0, 50.0, False, 1),
        # pair p3: one suggested grade, no machine grade
        Judged("p3", "cy", 3, 40.0, True, None),
    ]
    report = anchoring(rows, resamples=0)
    s, b = report.suggested, report.blind
    assert (s.judgments, b.judgments) == (3, 2)
    assert s.with_machine.value == 1.0 and s.with_machine.n == 2
    assert b.with_machine.value == 0.5 and b.with_machine.n == 2
    assert s.with_humans.value == 1.0 and s.with_humans.n == 2  # p3 has no second grade
    assert b.with_humans.value == 0.0
    assert s.seconds.value == 20.0  # lower median of 10, 20, 40
    assert b.seconds.value == 30.0  # lower median of 30, 50
    assert report.difference["with_machine"].value == pytest.approx(0.5)
    assert report.difference["seconds"].value == pytest.approx(-10.0)


def test_nothing_to_compare_says_why():
    empty = anchoring([], resamples=50)
    assert not empty.suggested.with_machine.defined
    assert "no suggested grade" in empty.suggested.with_machine.reason
    blind_only = anchoring([Judged("p", "ann", 1, 3.0, False, None)], resamples=50)
    assert blind_only.suggested.judgments == 0
    assert not blind_only.suggested.seconds.defined
    assert not blind_only.blind.with_machine.defined
    assert "raise the overlap" in blind_only.blind.with_humans.reason
    assert not blind_only.difference["seconds"].defined


@given(st.lists(st.floats(0, 1000, allow_nan=False), min_size=1, max_size=30))
def test_the_median_with_equal_weights_is_the_lower_median(values):
    x = np.array(values)
    got = _medians(np.ones((1, len(x))), x, np.ones(len(x), dtype=bool))[0]
    assert got == np.sort(x)[(len(x) - 1) // 2]


def _simulated(seed, *, copy_machine, pairs=300, judges=("ann", "bob", "cy")):
    rng = random.Random(seed)
    rows = []
    for pair in range(pairs):
        truth = rng.randrange(4)
        machine = truth if rng.random() < 0.7 else rng.randrange(4)
        for judge in judges:
            suggested = not is_blind(seed, judge, pair, 0.5)
            if suggested and rng.random() < copy_machine:
                grade = machine
            else:
                grade = truth if rng.random() < 0.75 else rng.randrange(4)
            seconds = rng.uniform(5, 15) if suggested else rng.uniform(10, 20)
            rows.append(Judged(pair, judge, grade, seconds, suggested, machine))
    return rows


def test_an_anchored_panel_is_caught_and_an_unmoved_one_is_not():
    anchored = anchoring(_simulated(1, copy_machine=0.6), resamples=400, seed=1)
    effect = anchored.difference["with_machine"]
    assert effect.low > 0.1  # judges who copy the machine agree with it far more
    assert anchored.difference["with_humans"].low > 0  # and so with one another
    assert anchored.difference["seconds"].high < 0  # and are faster
    unmoved = anchoring(_simulated(2, copy_machine=0.0), resamples=400, seed=2)
    null = unmoved.difference["with_machine"]
    assert null.low < 0 < null.high


def test_a_bootstrap_resample_is_the_statistic_of_the_duplicated_pairs():
    """The weights a resample gives each pair are what drawing the pairs again as distinct
    copies would give (checked through the point estimate of the copied data)."""
    rows = _simulated(3, copy_machine=0.3, pairs=40)
    rng = np.random.default_rng(0)
    drawn = rng.integers(0, 40, 40)
    copies = [
        Judged((copy, j.pair), j.judge, j.grade, j.seconds, j.suggested, j.machine)
        for copy, pair in enumerate(drawn)
        for j in rows
        if j.pair == pair
    ]
    explicit = anchoring(copies, resamples=0)
    from annotation.agreement.anchoring import _measure, _rows

    parsed = _rows(rows)
    counts = np.bincount(drawn, minlength=parsed.pairs)
    # _rows numbers pairs in order of first appearance: 0..39 here.
    weights = counts[parsed.pair][None, :].astype(float)
    for name in ("with_machine", "with_humans", "seconds"):
        got = _measure(name, weights, parsed, parsed.suggested)[0]
        assert got == pytest.approx(getattr(explicit.suggested, name).value)


def test_the_same_seed_gives_the_same_intervals():
    rows = _simulated(4, copy_machine=0.3, pairs=60)
    first = anchoring(rows, resamples=100, seed=5)
    assert first == anchoring(rows, resamples=100, seed=5)
    assert first.suggested.with_machine.low is not None
