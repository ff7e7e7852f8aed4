"""Sampling designs for the human budget (evaluation.certified.sampling)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.certified import (
    budget_count,
    build_pool,
    influence_scores,
    sample_active,
    sample_stratified,
    sample_uniform,
)
from evaluation.certified.sampling import STRATA_CELLS, STRATA_GRADES


def small_pool(topics=5, docs=20, seed=0):
    rng = np.random.default_rng(seed)
    pairs = [(f"q{t}", f"d{d:02d}") for t in range(topics) for d in range(docs)]
    rankings = {
        f"r{r}": {f"q{t}": [f"d{d:02d}" for d in rng.permutation(docs)] for t in range(topics)}
        for r in range(3)
    }
    pool = build_pool(pairs, rankings, k=10)
    machine = rng.choice(4, size=pool.size, p=[0.5, 0.3, 0.15, 0.05])
    return pool, machine


def test_budget_is_a_count_or_a_share():
    assert budget_count(200, 30) == 30
    assert budget_count(200, 0.1) == 20
    assert budget_count(200, 1.0) == 200
    for bad in (0, 201, 0.0, 1.5, True, "10"):
        with pytest.raises(ValueError):
            budget_count(200, bad)


@given(budget=st.integers(1, 100), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_uniform_takes_exactly_the_budget(budget, seed):
    sample = sample_uniform(100, budget, seed=seed)
    assert sample.chosen.size == budget == len(set(sample.chosen))
    assert sample.probability.sum() == pytest.approx(budget)


@given(budget=st.integers(1, 100), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_stratified_probabilities_sum_to_the_budget_it_takes(budget, seed):
    pool, machine = small_pool()
    sample = sample_stratified(pool, machine, budget, seed=seed)
    assert sample.chosen.size == budget
    assert sample.probability.sum() == pytest.approx(budget)
    # Each stratum's probability is its share taken, and every pair of a stratum alike.
    for h in np.unique(sample.stratum):
        members = sample.stratum == h
        taken = np.isin(np.flatnonzero(members), sample.chosen).sum()
        assert np.allclose(sample.probability[members], taken / members.sum())


def test_stratified_uses_topic_and_grade_cells_when_the_budget_allows():
    pool, machine = small_pool()
    sample = sample_stratified(pool, machine, 60, seed=1)
    assert sample.strata == STRATA_CELLS
    cells = {(pool.topic[i], machine[i]) for i in sample.chosen}
    assert cells == set(zip(pool.topic, machine, strict=True))  # no cell left out
    assert sample_stratified(pool, machine, 8, seed=1).strata == STRATA_GRADES


@given(budget=st.integers(1, 100), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_active_probabilities_sum_to_the_budget_and_keep_the_floor(budget, seed):
    pool, machine = small_pool()
    scores = influence_scores(pool, machine)
    sample = sample_active(scores, budget, seed=seed, floor=0.5)
    assert sample.probability.sum() == pytest.approx(budget, rel=1e-9)
    assert (sample.probability >= 0.5 * budget / pool.size - 1e-12).all()
    assert (sample.probability <= 1).all()


def test_active_prefers_influential_pairs():
    scores = np.concatenate([np.zeros(90), np.full(10, 5.0)])
    sample = sample_active(scores, 20, seed=0)
    assert sample.probability[-1] == pytest.approx(1.0)
    assert sample.probability[0] == pytest.approx(10 / 90)


def test_pairs_no_run_ranks_have_influence_only_through_the_ideal():
    pool, machine = small_pool(docs=30)
    scores = influence_scores(pool, machine)
    unranked = ~(pool.weights > 0).any(axis=0)
    assert unranked.any()
    assert (scores >= 0).all() and scores[~unranked].mean() > scores[unranked].mean()


@pytest.mark.parametrize("design", ["uniform", "stratified", "active"])
def test_designs_are_reproducible_by_seed(design):
    pool, machine = small_pool()

    def draw(seed):
        if design == "uniform":
            return sample_uniform(pool.size, 0.2, seed=seed)
        if design == "stratified":
            return sample_stratified(pool, machine, 0.2, seed=seed)
        return sample_active(influence_scores(pool, machine), 0.2, seed=seed)

    assert np.array_equal(draw(4).chosen, draw(4).chosen)
    assert np.array_equal(draw(4).probability, draw(4).probability)
    assert not np.array_equal(draw(4).chosen, draw(5).chosen)
