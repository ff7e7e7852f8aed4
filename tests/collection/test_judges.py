"""The demo's simulated judges (evaluation/collection/judges.py): the latent grade from the
known answers and the rankers' agreement, and each judge's seeded slips."""

from collections import Counter

from evaluation.collection import judges
from evaluation.collection.judges import SimulatedJudge, latent_grades, simulated_grade

RANKINGS = {  # seven rankers; "a" in everyone's top 10, "b" in four, "c" in three
    f"r{i}": {"1": ["a", *(["b"] if i < 4 else []), *(["c"] if i < 3 else [])]} for i in range(7)
}


def test_the_known_answer_wins_then_the_rankers_quorum():
    pairs = [("1", d) for d in "abcxk"]
    grades = latent_grades(pairs, qrels={"1": {"k": 3, "c": 1, "a": 0}}, rankings=RANKINGS)
    # a: judged 0 by the collection although all agree; b: four of seven; c: known 1
    assert grades == {("1", "a"): 0, ("1", "b"): 1, ("1", "c"): 1, ("1", "x"): 0, ("1", "k"): 3}
    assert judges.QUORUM == 4 and len(RANKINGS) == 7


def test_only_the_top_counts():
    deep = {f"r{i}": {"1": [f"d{n}" for n in range(20)]} for i in range(7)}
    grades = latent_grades([("1", "d9"), ("1", "d10")], qrels={}, rankings=deep)
    assert grades == {("1", "d9"): 1, ("1", "d10"): 0}


def test_a_judge_is_seeded_by_name_and_pair():
    judge = SimulatedJudge("bob", care=0.5, lean=-1)
    first = [simulated_grade(judge, 2, qid="1", docno=f"d{n}") for n in range(200)]
    again = [simulated_grade(judge, 2, qid="1", docno=f"d{n}") for n in range(200)]
    assert first == again
    other = [
        simulated_grade(SimulatedJudge("ann", care=0.5, lean=-1), 2, qid="1", docno=f"d{n}")
        for n in range(200)
    ]
    assert other != first


def test_care_and_lean_shape_the_slips():
    careful = SimulatedJudge("c", care=1.0)
    assert {
        simulated_grade(careful, g, qid="1", docno=str(n))
        for g in range(4)
        for n in range(50)
        if g == 2
    } == {2}
    for lean in (-1, +1):
        judge = SimulatedJudge(f"lean{lean}", care=0.0, lean=lean)
        steps = Counter(simulated_grade(judge, 1, qid="q", docno=str(n)) - 1 for n in range(4000))
        assert set(steps) == {-1, 1}  # every slip is one grade
        toward = steps[lean] / 4000
        assert 0.83 < toward < 0.92  # 3/4 + 1/4 x 1/2 = 0.875
    even = SimulatedJudge("even", care=0.0)
    steps = Counter(simulated_grade(even, 1, qid="q", docno=str(n)) - 1 for n in range(4000))
    assert 0.45 < steps[1] / 4000 < 0.55


def test_a_slip_never_leaves_the_scale():
    judge = SimulatedJudge("x", care=0.0, lean=-1)
    assert {simulated_grade(judge, 0, qid="q", docno=str(n)) for n in range(300)} == {0, 1}
    lenient = SimulatedJudge("y", care=0.0, lean=+1)
    top = {simulated_grade(lenient, 3, qid="q", docno=str(n), top_grade=3) for n in range(300)}
    assert top == {2, 3}


def test_the_panel_differs_in_care():
    cares = [judge.care for judge in judges.PANEL]
    assert cares == sorted(cares, reverse=True) and len(set(cares)) == 3
    assert {judge.lean for judge in judges.PANEL} == {-1, 0, 1}
