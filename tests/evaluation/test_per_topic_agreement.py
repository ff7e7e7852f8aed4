"""evaluation.analysis.ranking_agreement.per_topic_coefficients: on each topic, Kendall's tau-b,
Spearman and Pearson of the two system orderings equal scipy's (the live oracle); tauap_b
equals autojudge-evaluate 1.1's on its generated leaderboards (each used as one topic);
a topic whose ranking has no spread under either side is undefined (NaN) for every
coefficient, as scipy's correlations are."""

import json
import math
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from evaluation.analysis import ranking_agreement as ra

EXPECTED = json.loads(
    (
        Path(__file__).resolve().parents[1] / "data" / "ranking_agreement" / "expected.json"
    ).read_text()
)["cases"]

SCIPY = {
    "kendall": lambda x, y: stats.kendalltau(x, y).statistic,
    "spearman": lambda x, y: stats.spearmanr(x, y).statistic,
    "pearson": lambda x, y: stats.pearsonr(x, y).statistic,
}


def scipy_value(name, x, y) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant input, then returns NaN
        return float(SCIPY[name](x, y))


def noisy_topics(rng, systems=7, topics=25, ties=False):
    """Per-topic values of two qrels versions; with ``ties`` values are rounded to 0.1 so
    systems tie within topics (as P@10 does)."""
    quality = rng.random(systems)
    reference = rng.random((systems, topics)) * 0.5 + quality[:, None] * 0.5
    other = reference + rng.normal(0, 0.15, reference.shape)
    if ties:
        reference, other = np.round(reference, 1), np.round(other, 1)
    names = [f"sys{i}" for i in range(systems)]
    qids = [f"t{j}" for j in range(topics)]

    def as_dict(m):
        return {n: {q: float(m[i, j]) for j, q in enumerate(qids)} for i, n in enumerate(names)}

    return as_dict(reference), as_dict(other), names, qids


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("ties", [False, True])
def test_each_topics_correlations_equal_scipy(seed, ties):
    rng = np.random.default_rng(seed)
    reference, other, names, qids = noisy_topics(rng, systems=3 + seed, ties=ties)

    result = ra.per_topic_coefficients(reference, other)

    assert sorted(result) == sorted(qids, key=str.encode)
    for qid in qids:
        x = [reference[n][qid] for n in names]
        y = [other[n][qid] for n in names]
        spread = np.ptp(x) > 0 and np.ptp(y) > 0
        for name in SCIPY:
            expected = scipy_value(name, x, y)
            if spread:
                assert result[qid][name] == pytest.approx(expected, abs=1e-12), (qid, name)
            else:
                assert math.isnan(result[qid][name]) and math.isnan(expected), (qid, name)


def test_a_topic_where_every_system_ties_is_undefined_like_scipy():
    reference = {
        "a": {"flat": 0.0, "half": 0.2, "ok": 0.1},
        "b": {"flat": 0.0, "half": 0.5, "ok": 0.5},
        "c": {"flat": 0.0, "half": 0.7, "ok": 0.9},
    }
    other = {
        "a": {"flat": 0.3, "half": 0.4, "ok": 0.2},
        "b": {"flat": 0.1, "half": 0.4, "ok": 0.4},
        "c": {"flat": 0.2, "half": 0.4, "ok": 0.6},
    }

    result = ra.per_topic_coefficients(reference, other)

    for qid in ("flat", "half"):  # all tied under the reference, then under the other
        x = [reference[s][qid] for s in "abc"]
        y = [other[s][qid] for s in "abc"]
        for name in SCIPY:
            assert math.isnan(scipy_value(name, x, y))
        assert all(math.isnan(v) for v in result[qid].values()), qid
        assert set(result[qid]) == set(ra.TOPIC_COEFFICIENTS)
    assert result["ok"]["kendall"] == pytest.approx(1.0)
    assert result["ok"]["pearson"] == pytest.approx(
        scipy_value("pearson", [0.1, 0.5, 0.9], [0.2, 0.4, 0.6])
    )


def test_fewer_than_three_systems_is_undefined_and_no_common_topic_is_empty():
    two = {"a": {"q": 0.1}, "b": {"q": 0.9}}
    assert all(math.isnan(v) for v in ra.per_topic_coefficients(two, two)["q"].values())
    assert ra.per_topic_coefficients({"a": {"q": 0.1}}, {"a": {"r": 0.1}}) == {}
    with pytest.raises(ValueError, match="unknown per-topic coefficient 'rbo'"):
        ra.per_topic_coefficients(two, two, names=["rbo"])


def test_per_topic_tauap_b_equals_autojudge_evaluate_on_its_leaderboards():
    """Cases over the same systems become topics of one leaderboard pair: each topic's
    tauap_b must be the fixture's (made by autojudge-evaluate 1.1, make_expected.py)."""
    groups = defaultdict(list)
    for case in EXPECTED:
        groups[tuple(sorted(case["reference"]))].append(case)
    checked = 0
    for names, cases in groups.items():
        if len(cases) < 2 or len(names) < ra.MIN_SYSTEMS:
            continue
        reference = {n: {f"c{i}": c["reference"][n] for i, c in enumerate(cases)} for n in names}
        other = {n: {f"c{i}": c["other"][n] for i, c in enumerate(cases)} for n in names}

        result = ra.per_topic_coefficients(reference, other)

        for i, case in enumerate(cases):
            spread = np.ptp(list(case["reference"].values())) and np.ptp(
                list(case["other"].values())
            )
            if spread:
                assert result[f"c{i}"]["tauap_b"] == pytest.approx(case["tauap_b"], abs=1e-12)
                checked += 1
    assert checked >= 20, "the fixtures should give many multi-topic leaderboards"


def test_per_topic_kendall_is_the_one_coefficient_per_topic_gives():
    rng = np.random.default_rng(3)
    reference, other, _, _ = noisy_topics(rng, systems=6)
    single = ra.per_topic(reference, other, "kendall")
    every = ra.per_topic_coefficients(reference, other)
    assert single.keys() == every.keys()
    for qid, value in single.items():
        assert every[qid]["kendall"] == pytest.approx(value, abs=1e-12)
