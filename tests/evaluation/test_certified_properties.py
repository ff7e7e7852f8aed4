"""Certified means (evaluation.certified) on the hard shapes, as properties: every pair
sampled, ties between runs, topics with no relevant pair, the empty sample, a large pool;
and the leaderboard's ranking score (evaluation.certified.ranking)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.certified import (
    build_pool,
    certify_means,
    ndcg_means,
    sample_active,
    sample_stratified,
    sample_uniform,
)
from evaluation.certified.means import NO_HUMANS
from evaluation.certified.ranking import shared_documents, shrink_corrections
from evaluation.certified.sampling import Sample


@st.composite
def cases(draw, max_topics=5, max_docs=12):
    """A pool with random grades (some topics all 0), runs ranking random subsets (two of
    them identical: a tie), and a machine that agrees with the humans on a random share."""
    topics = draw(st.integers(1, max_topics))
    docs = draw(st.integers(1, max_docs))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    pairs = [(f"q{t}", f"d{d:02d}") for t in range(topics) for d in range(docs)]
    empty = rng.random(topics) < 0.3  # topics with no relevant pair
    truth = np.where(
        np.repeat(empty, docs), 0, rng.choice(4, size=topics * docs, p=[0.6, 0.2, 0.1, 0.1])
    )
    rankings = {}
    for r in range(draw(st.integers(1, 4))):
        rankings[f"r{r}"] = {
            f"q{t}": [f"d{d:02d}" for d in rng.permutation(docs)[: rng.integers(1, docs + 1)]]
            for t in range(topics)
            if rng.random() < 0.9
        }
    rankings["twin"] = rankings["r0"]
    pool = build_pool(pairs, rankings, k=draw(st.sampled_from([1, 3, 10])))
    machine = np.where(rng.random(truth.size) < 0.7, truth, rng.integers(0, 4, truth.size))
    return pool, truth, machine, seed


@given(case=cases(), calibrate=st.booleans())
@settings(max_examples=60, deadline=None)
def test_every_pair_sampled_gives_the_exact_all_human_value(case, calibrate):
    pool, truth, machine, seed = case
    exact = ndcg_means(pool, truth)
    for sample in (
        sample_uniform(pool.size, 1.0, seed=seed),
        sample_stratified(pool, machine, pool.size, seed=seed),
        sample_active(np.ones(pool.size), pool.size, seed=seed),
    ):
        certified = certify_means(pool, machine, sample, truth[sample.chosen], calibrate=calibrate)
        for run in certified.runs:
            assert run.estimate == pytest.approx(exact[run.run], abs=1e-12)
            assert run.low == pytest.approx(run.high, abs=1e-12)
            assert run.score == pytest.approx(exact[run.run], abs=1e-12)


@given(case=cases(), share=st.floats(0.05, 0.9), design=st.sampled_from(["u", "s", "a"]))
@settings(max_examples=80, deadline=None)
def test_any_sample_gives_finite_estimates_inside_their_intervals_and_twins_tie(
    case, share, design
):
    pool, truth, machine, seed = case
    if design == "u":
        sample = sample_uniform(pool.size, share, seed=seed)
    elif design == "s":
        sample = sample_stratified(pool, machine, share, seed=seed)
    else:
        sample = sample_active(np.linspace(1, 2, pool.size), share, seed=seed)
    if not sample.chosen.size:
        return  # a Poisson draw can be empty: refused, see below
    if sample.stratum is not None:
        sizes = np.bincount(sample.stratum)
        taken = np.bincount(sample.stratum[sample.chosen], minlength=sizes.size)
        if ((taken == 1) & (sizes > 1)).any():
            # One pair cannot show its stratum's spread (a budget of 1 pair, say).
            with pytest.raises(ValueError, match="at least two pairs"):
                certify_means(pool, machine, sample, truth[sample.chosen])
            return
    certified = certify_means(pool, machine, sample, truth[sample.chosen])
    by_run = {r.run: r for r in certified.runs}
    for run in certified.runs:
        assert np.isfinite([run.estimate, run.low, run.high, run.se, run.score]).all()
        assert run.low <= run.estimate <= run.high
    twin, first = by_run["twin"], by_run["r0"]
    assert (twin.estimate, twin.se) == (first.estimate, first.se)
    assert twin.score == pytest.approx(first.score, abs=1e-12)  # a linear solve: rounding
    tie = next(p for p in certified.pairs if {p.a, p.b} == {"twin", "r0"})
    assert tie.difference == 0.0 and not tie.settled and not tie.settled_holm
    scores = [r.score for r in certified.runs]
    assert scores == sorted(scores, reverse=True)  # the leaderboard is in score order


def test_a_topic_with_no_relevant_pair_counts_zero_when_the_humans_saw_it_whole():
    """q1 has no relevant pair though the machine calls all of them relevant; the humans
    judged q1 whole and half of q2, where the machine is right. q1 then counts 0 for every
    run (trec_eval's value for an empty ideal), whatever the order the runs put it in."""
    pairs = [("q1", f"d{i}") for i in range(6)] + [("q2", f"d{i}") for i in range(6)]
    ranked = {"q1": [f"d{i}" for i in range(6)], "q2": [f"d{i}" for i in range(6)]}
    pool = build_pool(pairs, {"a": ranked, "b": {**ranked, "q1": ranked["q1"][::-1]}}, k=3)
    truth = np.array([0] * 6 + [3, 0, 2, 0, 1, 0])
    machine = np.array([1] * 6 + [3, 0, 2, 0, 1, 0])
    chosen = np.array([0, 1, 2, 3, 4, 5, 6, 8, 10])
    probability = np.repeat([1.0, 0.5], 6)
    sample = Sample("stratified", probability, chosen, np.repeat([0, 1], 6))
    certified = certify_means(pool, machine, sample, truth[chosen], calibrate=False)
    # q2: DCG@3 = 3 + 0 + 2 / log2(4), ideal 3 + 2 / log2(3) + 1 / log2(4); q1: 0.
    q2 = (3 + 2 / 2) / (3 + 2 / np.log2(3) + 1 / 2)
    for run in certified.runs:
        assert run.estimate == pytest.approx((0 + q2) / 2, abs=1e-12)
        assert run.se == pytest.approx(0.0, abs=1e-12)


def test_the_empty_sample_is_refused_with_the_reason():
    pairs = [("q1", f"d{i}") for i in range(4)]
    pool = build_pool(pairs, {"a": {"q1": ["d0", "d1"]}}, k=2)
    empty = Sample("active", np.full(4, 0.1), np.zeros(0, dtype=np.int64), None)
    with pytest.raises(ValueError, match=NO_HUMANS):
        certify_means(pool, np.zeros(4, dtype=np.int64), empty, np.zeros(0, dtype=np.int64))


def test_chosen_pairs_out_of_order_or_twice_are_refused():
    pairs = [("q1", f"d{i}") for i in range(4)]
    pool = build_pool(pairs, {"a": {"q1": ["d0", "d1"]}}, k=2)
    machine = np.zeros(4, dtype=np.int64)
    for chosen in ([2, 1], [1, 1]):
        sample = Sample("active", np.full(4, 0.5), np.array(chosen), None)
        with pytest.raises(ValueError, match="ascending and each chosen once"):
            certify_means(pool, machine, sample, np.zeros(2, dtype=np.int64))


def test_a_large_pool_is_certified():
    """400 topics x 60 pairs (24,000) and 40 runs, 10% judged: the arrays stay per topic and
    per run (no pairs x pairs matrix), and every estimate is finite."""
    rng = np.random.default_rng(0)
    topics, docs, runs = 400, 60, 40
    pairs = [(f"q{t:03d}", f"d{d:02d}") for t in range(topics) for d in range(docs)]
    truth = rng.choice(4, size=len(pairs), p=[0.7, 0.15, 0.1, 0.05])
    rankings = {
        f"r{r:02d}": {
            f"q{t:03d}": [f"d{d:02d}" for d in rng.permutation(docs)[:10]] for t in range(topics)
        }
        for r in range(runs)
    }
    pool = build_pool(pairs, rankings, k=10)
    machine = np.where(rng.random(truth.size) < 0.8, truth, rng.integers(0, 4, truth.size))
    sample = sample_uniform(pool.size, 0.1, seed=1)
    certified = certify_means(pool, machine, sample, truth[sample.chosen])
    assert len(certified.runs) == runs and certified.humans == 2400
    assert all(np.isfinite([r.estimate, r.se, r.score]).all() for r in certified.runs)


def test_shrinking_keeps_exact_corrections_and_pools_pure_noise():
    corrections = np.array([0.01, 0.05, -0.02, 0.03])
    assert np.array_equal(shrink_corrections(corrections, np.zeros((4, 4))), corrections)
    # Noise far larger than the spread: every run gets (nearly) the shared correction.
    noisy = shrink_corrections(corrections, np.eye(4) * 1.0)
    assert np.ptp(noisy) < 1e-3 * np.ptp(corrections)
    assert noisy.mean() == pytest.approx(corrections.mean(), abs=1e-6)
    # Noise far smaller than the spread: the corrections stand (the grid's largest tau^2 is
    # 1e4 times the noise, so they shrink by at most 1e-4 of their distance to the mean).
    assert shrink_corrections(corrections, np.eye(4) * 1e-10) == pytest.approx(
        corrections, rel=2e-4
    )


def test_runs_that_share_unjudged_documents_share_their_corrections():
    """With K (ranking.shared_documents) a run's own correction borrows from the runs that
    rank the same unjudged documents: run 2 found nothing its group-mates did not, so the
    sample's evidence on them is evidence on it. With K = I it is pulled only to the mean."""
    corrections = np.array([0.1, 0.1, 0.0, -0.1, -0.1, -0.1])
    noise = np.eye(6) * 0.05**2
    groups = np.kron(np.eye(2), np.ones((3, 3)))
    alone = shrink_corrections(corrections, noise)
    shared = shrink_corrections(corrections, noise, groups)
    assert np.array_equal(alone, shrink_corrections(corrections, noise, np.eye(6)))
    assert shared[0] == pytest.approx(shared[2]) and shared[3] == pytest.approx(shared[5])
    assert shared[2] > 0.05 > abs(alone[2])
    # Still exact without noise, and the prior's shape is checked.
    assert np.array_equal(shrink_corrections(corrections, np.zeros((6, 6)), groups), corrections)
    with pytest.raises(ValueError, match="the prior must be 6 x 6"):
        shrink_corrections(corrections, noise, np.eye(5))


def test_the_shared_documents_prior_follows_the_unjudged_documents_runs_rank():
    pairs = [("q1", f"d{d}") for d in range(6)]
    rankings = {
        "a": {"q1": ["d0", "d1", "d2"]},
        "twin": {"q1": ["d0", "d1", "d2"]},
        "other": {"q1": ["d3", "d4", "d5"]},
    }
    pool = build_pool(pairs, rankings, k=3)
    grades = np.array([3, 2, 0, 1, 0, 0])
    kernel = shared_documents(pool, grades, np.array([], dtype=np.int64))
    a, twin, other = (pool.runs.index(name) for name in ("a", "twin", "other"))
    assert np.trace(kernel) == pytest.approx(3.0)  # a mean variance of 1
    assert kernel[a, twin] == pytest.approx(kernel[a, a]) == pytest.approx(kernel[twin, twin])
    assert kernel[a, other] == 0.0  # no document in common: unrelated errors
    # Judged pairs carry no machine error: judging what "other" ranks leaves it no bias.
    judged = np.array([pool.index()["q1", f"d{d}"] for d in (3, 4, 5)])
    kernel = shared_documents(pool, grades, judged)
    assert kernel[other, other] == 0.0 and kernel[a, twin] == pytest.approx(kernel[a, a])
    assert shared_documents(pool, grades, np.arange(pool.size)) is None  # all judged


def test_the_ranking_score_beats_the_machine_when_the_machine_favours_some_runs():
    """A machine that calls relevant the not-relevant pairs only run0 and run1 retrieve (as an
    LLM judge may favour rankers built on the same model). Over 10 fixed seeds, the ranking
    score's Kendall tau against the all-human order is on average above the machine-only
    leaderboard's; fixed seeds make it a deterministic check, and the margin measured (0.84 against
    0.17; 0.85 before ranking.shared_documents) is far above the 0.05 asked."""
    from evaluation.analysis.ranking_agreement import kendall_tau_b

    taus = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        topics, docs, runs = 10, 40, 6
        pairs = [(f"q{t}", f"d{d:02d}") for t in range(topics) for d in range(docs)]
        truth = rng.choice(4, size=len(pairs), p=[0.6, 0.2, 0.12, 0.08])
        rankings = {}
        for r in range(runs):
            quality = 0.3 + 0.25 * r
            rankings[f"run{r}"] = {
                f"q{t}": [
                    f"d{d:02d}"
                    for d in np.argsort(
                        -(quality * truth[t * docs : (t + 1) * docs] + rng.standard_normal(docs))
                    )[:10]
                ]
                for t in range(topics)
            }
        pool = build_pool(pairs, rankings, k=10)
        favoured = (pool.weights[:2] > 0).any(axis=0) & ~(pool.weights[2:] > 0).any(axis=0)
        machine = np.where(favoured & (truth == 0), 3, truth)
        sample = sample_uniform(pool.size, 0.2, seed=seed)
        certified = certify_means(pool, machine, sample, truth[sample.chosen])
        exact = ndcg_means(pool, truth)
        names = sorted(exact)

        def tau(scores, names=names, exact=exact):
            return kendall_tau_b([exact[n] for n in names], [scores[n] for n in names])

        taus.append((tau(certified.ranking_scores()), tau(ndcg_means(pool, machine))))
    ours, machine_only = np.mean(taus, axis=0)
    assert ours > machine_only + 0.05, taus
