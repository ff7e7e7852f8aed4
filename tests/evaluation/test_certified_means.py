"""Certified means (evaluation.certified): the estimator against simulation where the
all-human truth is known, and nDCG@k against the trec_eval-exact measures."""

import numpy as np
import pytest

from evaluation.certified import (
    build_pool,
    certify_means,
    ndcg_means,
    sample_active,
    sample_stratified,
    sample_uniform,
)
from evaluation.certified.sampling import Sample
from evaluation.measures import evaluate, qrels_frame, run_frame


def make_case(*, topics=8, docs=30, runs=5, seed=0):
    """A pool of ``topics`` x ``docs`` pairs with known grades and ``runs`` runs of
    different quality ranking every pool document (best first)."""
    rng = np.random.default_rng(seed)
    pairs, truth, rankings = [], {}, {f"run{r}": {} for r in range(runs)}
    for t in range(topics):
        qid = f"q{t}"
        grades = rng.choice(4, size=docs, p=[0.5, 0.25, 0.15, 0.1])
        docnos = [f"d{t}-{d:02d}" for d in range(docs)]
        for docno, grade in zip(docnos, grades, strict=True):
            pairs.append((qid, docno))
            truth[qid, docno] = int(grade)
        for r in range(runs):
            score = (0.3 + 0.4 * r) * grades + rng.standard_normal(docs)
            rankings[f"run{r}"][qid] = [docnos[i] for i in np.argsort(-score, kind="stable")]
    pool = build_pool(pairs, rankings, k=10)
    return pool, pool.grades(truth), rankings


def noisy_machine(truth, rng, flip=0.25):
    machine = truth.copy()
    flipped = rng.random(truth.size) < flip
    machine[flipped] = np.clip(truth[flipped] + rng.choice([-1, 1], flipped.sum()), 0, 3)
    return machine


def test_all_human_ndcg_matches_trec_eval_ndcg_cut():
    pool, truth, rankings = make_case(topics=4, docs=25, runs=3)
    qrels = {}
    for (qid, docno), grade in zip(pool.pairs, truth, strict=True):
        qrels.setdefault(qid, {})[docno] = int(grade)
    ours = ndcg_means(pool, truth)
    for run, by_topic in rankings.items():
        # Scores falling with rank, with a document outside the pool at rank 2.
        scored = {
            qid: {"outside": 99.5, **{d: 100.0 - i for i, d in enumerate(docnos)}}
            for qid, docnos in by_topic.items()
        }
        ranked = {q: sorted(d, key=lambda x: -d[x]) for q, d in scored.items()}
        pool_run = build_pool(pool.pairs, {run: ranked}, k=10)
        reference = evaluate(qrels_frame(qrels), run_frame(scored), ["ndcg_cut.10"])
        assert ndcg_means(pool_run, truth)[run] == pytest.approx(
            reference.means["ndcg_cut_10"], abs=1e-12
        )
        assert ours[run] != ndcg_means(pool_run, truth)[run]  # the outsider took a rank


def test_with_every_pair_sampled_the_interval_is_the_exact_value():
    pool, truth, _ = make_case()
    machine = noisy_machine(truth, np.random.default_rng(1))
    exact = ndcg_means(pool, truth)
    for sample in (
        sample_uniform(pool.size, 1.0, seed=3),
        sample_active(np.arange(pool.size, dtype=float), pool.size, seed=3),
    ):
        for calibrate in (True, False):
            certified = certify_means(
                pool, machine, sample, truth[sample.chosen], calibrate=calibrate
            )
            for run in certified.runs:
                assert run.estimate == pytest.approx(exact[run.run], abs=1e-12)
                assert run.high - run.low == pytest.approx(0.0, abs=1e-12)
            assert certified.humans == pool.size


def test_a_perfect_machine_needs_no_correction():
    pool, truth, _ = make_case()
    sample = sample_uniform(pool.size, 0.1, seed=0)
    certified = certify_means(pool, truth, sample, truth[sample.chosen])
    exact = ndcg_means(pool, truth)
    for run in certified.runs:
        assert run.estimate == pytest.approx(exact[run.run], abs=1e-12)
        assert run.se == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("design", ["uniform", "stratified", "active"])
def test_estimate_is_unbiased_and_intervals_cover_in_simulation(design):
    """Over 150 draws of the sample (one noisy machine, a fixed truth), the mean estimate
    is within a few standard errors of the truth (its bias is second order, see
    evaluation.certified.means), the estimated standard error matches the estimates' spread
    within 20% (measured: 0.91-1.06; with 150 draws a spread is known to about 6%), and the
    95% intervals cover at least 88% of the time (the chance that a correct 95% procedure
    falls below 88% over 150 draws is under 0.1%; an interval missing its width's bias
    would). The seeds are fixed, so the check is deterministic."""
    pool, truth, _ = make_case(topics=12, docs=40, runs=4, seed=5)
    machine = noisy_machine(truth, np.random.default_rng(11))
    exact = ndcg_means(pool, truth)
    draws = 150
    estimates, covered, errors = [], [], []
    for seed in range(draws):
        if design == "uniform":
            sample = sample_uniform(pool.size, 0.3, seed=seed)
        elif design == "stratified":
            sample = sample_stratified(pool, machine, 0.3, seed=seed)
        else:
            sample = sample_active(np.linspace(1, 3, pool.size), 0.3, seed=seed)
        certified = certify_means(pool, machine, sample, truth[sample.chosen])
        by_run = {r.run: r for r in certified.runs}
        estimates.append([by_run[run].estimate for run in pool.runs])
        errors.append([by_run[run].se for run in pool.runs])
        covered.append([by_run[run].low <= exact[run] <= by_run[run].high for run in pool.runs])
    estimates = np.array(estimates)
    truth_means = np.array([exact[run] for run in pool.runs])
    spread = estimates.std(axis=0) / np.sqrt(draws)
    assert (np.abs(estimates.mean(axis=0) - truth_means) < 4 * spread + 0.002).all(), (
        estimates.mean(axis=0) - truth_means,
        spread,
    )
    ratio = estimates.std(axis=0) / np.sqrt((np.array(errors) ** 2).mean(axis=0))
    assert ((ratio > 0.8) & (ratio < 1.25)).all(), ratio
    assert np.mean(covered) >= 0.88, np.mean(covered, axis=0)


def test_pairs_of_runs_far_apart_are_settled_and_a_run_with_itself_is_not():
    pool, truth, rankings = make_case(runs=2)
    twin = build_pool(pool.pairs, {**rankings, "twin": rankings["run1"]}, k=10)
    sample = sample_uniform(twin.size, 0.5, seed=0)
    machine = noisy_machine(truth, np.random.default_rng(2))
    certified = certify_means(twin, machine, sample, truth[sample.chosen])
    by_pair = {frozenset((p.a, p.b)): p for p in certified.pairs}
    assert len(by_pair) == 3
    same = by_pair[frozenset(("run1", "twin"))]
    assert same.difference == 0.0 and not same.settled and not same.settled_holm
    far = by_pair[frozenset(("run0", "run1"))]
    assert far.settled_holm and far.low > 0 and far.a == "run1"
    assert 0 < certified.settled_share() < 1


def test_missing_human_grades_are_refused():
    pool, truth, _ = make_case(topics=2)
    sample = sample_uniform(pool.size, 10, seed=0)
    with pytest.raises(ValueError, match="every chosen pair needs its human grade"):
        certify_means(pool, truth, sample, truth[sample.chosen][:-1])


def test_a_stratum_sampled_with_one_pair_is_refused():
    pool, truth, _ = make_case(topics=2)
    stratum = np.zeros(pool.size, dtype=np.int64)
    probability = np.full(pool.size, 1 / pool.size)
    sample = Sample("uniform", probability, np.array([0]), stratum)
    with pytest.raises(ValueError, match="at least two pairs"):
        certify_means(pool, truth, sample, truth[[0]])


def test_grades_outside_the_scale_are_refused():
    pool, truth, _ = make_case(topics=2)
    sample = sample_uniform(pool.size, 10, seed=0)
    with pytest.raises(ValueError, match="between 0 and the top grade 3"):
        certify_means(pool, truth + 1, sample, truth[sample.chosen])
