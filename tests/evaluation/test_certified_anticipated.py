"""The certified interval's anticipated variance (evaluation.certified.estimator, means): its
vectorised sum against the definition written out pair by pair, and the interval as the
larger of it and the design's variance."""

import numpy as np
import pytest

from evaluation.certified import certify_means, sample_active, sample_stratified, sample_uniform
from evaluation.certified.estimator import _anticipated, estimate, gather_parts
from evaluation.certified.means import _covariance
from tests.evaluation.test_certified_means import make_case, noisy_machine


def test_the_anticipated_covariance_is_its_definition_summed_pair_by_pair():
    """sum over pool pairs d of (1 / pi_d - 1) sum over h of p(h | t, m) u_r(h) u_s(h), with
    u_r(h) = (W_r,d (h - E[h]) - c_r,t b(h)) / ideal_t and b(h) = sum over g of slope_t,g
    (1[h >= g] - P(h >= g)), for runs scoring the topic and topics with an ideal above 0:
    one fold's predictions made up at random, so every term is exercised."""
    pool, truth, _ = make_case(topics=3, docs=12, runs=3, seed=2)
    machine = noisy_machine(truth, np.random.default_rng(4))
    sample = sample_uniform(pool.size, 0.4, seed=1)
    parts = gather_parts(pool, machine, sample, truth[sample.chosen], True, 0)
    rng = np.random.default_rng(9)
    topics, levels = len(pool.topics), pool.top_grade + 1
    local = rng.dirichlet(np.ones(levels), size=(topics, levels))  # t x m x h
    gain = local @ np.arange(levels)
    at_least = np.cumsum(local[..., ::-1], axis=-1)[..., ::-1][..., 1:]
    slope = rng.random((topics, levels - 1))
    dcg_0 = rng.random((len(pool.runs), topics)) * 3
    safe = np.array([2.5, 1.0, 4.0])
    positive = np.array([True, False, True])  # topic 1's ideal is 0: it counts nothing
    parts.scored[1, 2] = False  # run 1 does not score topic 2

    found = _anticipated(parts, local, gain, at_least, slope, dcg_0, positive, safe)

    runs = len(pool.runs)
    expected = np.zeros((runs, runs))
    for d in range(pool.size):
        t, m, pi = pool.topic[d], machine[d], sample.probability[d]
        if not positive[t]:
            continue
        for h in range(levels):
            b = sum(slope[t, g - 1] * ((h >= g) - at_least[t, m, g - 1]) for g in range(1, levels))
            u = np.array(
                [
                    (pool.weights[r, d] * (h - gain[t, m]) - dcg_0[r, t] / safe[t] * b) / safe[t]
                    if parts.scored[r, t]
                    else 0.0
                    for r in range(runs)
                ]
            )
            expected += (1 / pi - 1) * local[t, m, h] * np.outer(u, u)
    assert found == pytest.approx(expected, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("design", ["uniform", "stratified", "active"])
def test_the_interval_takes_the_larger_of_the_designs_and_the_anticipated_variance(design):
    pool, truth, _ = make_case(topics=6, docs=30, runs=4, seed=3)
    machine = noisy_machine(truth, np.random.default_rng(7))
    if design == "uniform":
        sample = sample_uniform(pool.size, 0.15, seed=2)
    elif design == "stratified":
        sample = sample_stratified(pool, machine, 0.15, seed=2)
    else:
        sample = sample_active(np.linspace(1, 3, pool.size), 0.15, seed=2)
    human = truth[sample.chosen]
    _, contribution, anticipated = estimate(gather_parts(pool, machine, sample, human, True, 0))
    design_var = np.diag(_covariance(contribution, sample))
    assert (np.diag(anticipated) > 0).all()
    assert np.allclose(anticipated, anticipated.T)
    assert np.linalg.eigvalsh(anticipated).min() > -1e-12  # a covariance
    certified = certify_means(pool, machine, sample, human)
    se = {r.run: r.se for r in certified.runs}
    for i, run in enumerate(pool.runs):
        assert se[run] == pytest.approx(np.sqrt(max(design_var[i], anticipated[i, i])))
    # The same for each difference of two runs.
    index = {run: i for i, run in enumerate(pool.runs)}
    design_cov = _covariance(contribution, sample)
    for p in certified.pairs:
        a, b = index[p.a], index[p.b]
        var = max(c[a, a] + c[b, b] - 2 * c[a, b] for c in (design_cov, anticipated))
        assert p.high - p.difference == pytest.approx(1.959963984540054 * np.sqrt(var))


def test_pairs_sampled_with_certainty_add_nothing_anticipated():
    """A pair every sample holds has no sampling variance: with all pairs certain the
    anticipated covariance is 0, as the design's is."""
    pool, truth, _ = make_case(topics=3, docs=12, runs=3, seed=2)
    machine = noisy_machine(truth, np.random.default_rng(4))
    everything = sample_uniform(pool.size, 1.0, seed=0)
    _, _, anticipated = estimate(
        gather_parts(pool, machine, everything, truth[everything.chosen], True, 0)
    )
    assert np.abs(anticipated).max() == 0.0
