"""A machine judge against humans (annotation/agreement/machines.py): kappas equal
scikit-learn's, the confusion matrix, the lean, per-topic kappas worst first."""

import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.agreement.machines import compare_machine, human_consensus, lean_of

SCALE = [0, 1, 2, 3]
MACHINE = {("1", "a"): 3, ("1", "b"): 2, ("1", "c"): 0, ("2", "a"): 1, ("2", "b"): 3, ("2", "c"): 2}
HUMAN = {("1", "a"): 2, ("1", "b"): 2, ("1", "c"): 0, ("2", "a"): 0, ("2", "b"): 1, ("2", "c"): 3}


def test_kappas_are_scikit_learns_on_the_shared_pairs():
    other = {**HUMAN, ("3", "z"): 1}  # a pair the machine did not grade counts for nothing
    result = compare_machine(MACHINE, other, against="judge ann", scale=SCALE, resamples=200)
    pairs = sorted(MACHINE)
    a, b = [MACHINE[p] for p in pairs], [HUMAN[p] for p in pairs]
    assert result.n == 6
    for name, weights in (("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")):
        expected = cohen_kappa_score(a, b, labels=SCALE, weights=weights)
        assert result.kappa[name].value == pytest.approx(expected)
        assert result.kappa[name].low <= result.kappa[name].value <= result.kappa[name].high


def test_confusion_rows_are_the_machines_grades():
    result = compare_machine(MACHINE, HUMAN, against="x", scale=SCALE, resamples=0)
    assert result.confusion == [[1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 1, 1], [0, 1, 1, 0]]
    assert sum(map(sum, result.confusion)) == 6


def test_the_machine_leans_higher_when_it_grades_higher():
    lean = compare_machine(MACHINE, HUMAN, against="x", scale=SCALE, resamples=0).lean
    assert lean.mean_difference == pytest.approx((1 + 0 + 0 + 1 + 2 - 1) / 6)
    assert (lean.higher, lean.same, lean.lower) == pytest.approx((3 / 6, 2 / 6, 1 / 6))
    assert lean.words == "grades higher by 0.50 on average"
    assert lean_of([], []).words == "no pair in common"
    assert lean_of([1, 2], [1, 2]).words == "no lean"


def test_a_machine_against_itself_has_kappa_one():
    result = compare_machine(MACHINE, MACHINE, against="itself", scale=SCALE, resamples=0)
    assert all(k.value == pytest.approx(1.0) for k in result.kappa.values())


def test_topics_worst_first_and_undefined_last():
    topic_of = {pair: pair[0] for pair in [*MACHINE, ("3", "z")]}
    machine = {**MACHINE, ("3", "z"): 1}
    human = {**HUMAN, ("3", "z"): 1}
    result = compare_machine(
        machine, human, against="x", scale=SCALE, topic_of=topic_of, resamples=0
    )
    assert [t.topic for t in result.topics] == ["2", "1", "3"]
    assert result.topics[0].kappa.value < result.topics[1].kappa.value
    assert result.topics[-1].kappa.value is None and result.topics[-1].n == 1


def test_no_shared_pair_is_undefined_not_an_error():
    result = compare_machine({("1", "a"): 1}, {("2", "b"): 1}, against="x", scale=SCALE)
    assert result.n == 0 and result.kappa["linear"].value is None
    assert "no pair in common" in result.kappa["linear"].reason


def test_consensus_is_the_lower_median_of_the_human_grades():
    consensus = human_consensus({"ann": {"p": 1, "q": 3}, "bob": {"p": 2, "q": 3}, "cy": {"p": 0}})
    assert consensus == {"p": 1, "q": 3}
