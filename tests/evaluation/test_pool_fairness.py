"""evaluation.analysis.pool_fairness: the leave-one-run-out test on hand-worked pools, and its
invariants on random ones (a run that contributed nothing unique does not move)."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation import measures
from evaluation.analysis import pool_fairness

QRELS = {"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": 1}, "q2": {"e1": 1, "e2": 0}}
RUNS = {
    # A alone has d2 and d3 in its top 3 (both judged, d2 relevant).
    "A": {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"e1": 1.0}},
    # B alone has d4 (judged relevant) and d5 (unjudged) in its top 3.
    "B": {"q1": {"d1": 3.0, "d4": 2.0, "d5": 1.0}, "q2": {"e2": 2.0, "e1": 1.0}},
}


def report(runs, specs=("P.3",), depth=3):
    frames = {name: measures.run_frame(run) for name, run in runs.items()}
    return pool_fairness.leave_one_run_out(
        measures.qrels_frame(QRELS), frames, list(specs), depth=depth
    )


def test_unique_contributions_are_the_documents_no_other_run_has_in_its_top_depth():
    frames = {name: measures.run_frame(run) for name, run in RUNS.items()}
    unique = pool_fairness.unique_contributions(frames, depth=3)
    assert unique["A"].rows() == [("q1", "d2"), ("q1", "d3")]
    assert unique["B"].rows() == [("q1", "d4"), ("q1", "d5"), ("q2", "e2")]


def test_a_run_without_its_unique_documents_drops_by_what_they_were_worth():
    result = report(RUNS)
    a, b = result.of("A"), result.of("B")
    # A: q1 P@3 = 2/3 (d1, d2), q2 P@3 = 1/3 (e1). Without d2, d3: q1 1/3.
    assert a.unique_judged == 2 and a.unique_relevant == 1
    assert a.full["P_3"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert a.reduced["P_3"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert a.drop("P_3") == pytest.approx(1 / 6)
    # B: q1 2/3 (d1, d4), q2 1/3 (e1). Without d4 (d5 is unjudged; e2 judged 0): q1 1/3.
    assert b.unique_judged == 2 and b.unique_relevant == 1
    assert b.reduced["P_3"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    # Both tie at 1/2 with full qrels (rank 1); each falls behind the other without its own.
    assert (a.rank_full["P_3"], a.rank_reduced["P_3"], a.rank_drop("P_3")) == (1, 2, 1)
    assert (b.rank_full["P_3"], b.rank_reduced["P_3"]) == (1, 2)
    assert result.largest_drop("P_3") == pytest.approx(1 / 6)


def test_a_run_whose_documents_another_run_also_pooled_does_not_move():
    runs = {**RUNS, "C": {"q1": dict(RUNS["B"]["q1"]), "q2": {"e1": 1.0}}}
    result = report(runs, specs=("P.3", "ndcg_cut.3", "map"))
    for name in ("B", "C"):
        row = result.of(name)
        assert row.full == row.reduced
        assert all(row.rank_drop(m) == 0 for m in result.measures)
    # B still has e2 unique in q2, but it is judged not relevant: counted, worth nothing.
    assert result.of("B").unique_judged == 1 and result.of("B").unique_relevant == 0
    assert result.of("A").drop("P_3") == pytest.approx(1 / 6)


def test_ndcg_is_worked_by_hand():
    result = report(RUNS, specs=("ndcg_cut.3",))
    a = result.of("A")
    # q1 ideal: 2, 1, 1 → 2 + 1/log2(3) + 1/2. A's list d1 (2), d2 (1), d3 (0).
    ideal = 2 + 1 / 1.584962500721156 + 1 / 2
    q1_full = (2 + 1 / 1.584962500721156) / ideal
    # Without d2, d3: the ideal is 2, 1 (d1, d4) and A's list gains only d1.
    q1_reduced = 2 / (2 + 1 / 1.584962500721156)
    q2 = 1.0  # e1 at rank 1, the only relevant document
    assert a.full["ndcg_cut_3"] == pytest.approx((q1_full + q2) / 2)
    assert a.reduced["ndcg_cut_3"] == pytest.approx((q1_reduced + q2) / 2)


def test_a_topic_judged_only_from_one_run_still_counts_as_zero():
    qrels = {"q1": {"x": 1}, "q2": {"e1": 1}}
    runs = {"A": {"q1": {"x": 1.0}, "q2": {"e1": 1.0}}, "B": {"q1": {"y": 1.0}, "q2": {"e1": 1.0}}}
    frames = {name: measures.run_frame(run) for name, run in runs.items()}
    result = pool_fairness.leave_one_run_out(measures.qrels_frame(qrels), frames, ["P.1"], depth=1)
    assert result.of("A").reduced["P_1"] == pytest.approx(0.5)  # q1 gone: 0, q2: 1


def test_bad_inputs_are_refused_with_a_reason():
    frames = {name: measures.run_frame(run) for name, run in RUNS.items()}
    qrels = measures.qrels_frame(QRELS)
    with pytest.raises(ValueError, match="depth must be a whole number"):
        pool_fairness.leave_one_run_out(qrels, frames, ["P.3"], depth=0)
    with pytest.raises(ValueError, match="at least two runs"):
        pool_fairness.leave_one_run_out(qrels, {"A": frames["A"]}, ["P.3"])


def test_report_round_trips_through_plain_json():
    result = report(RUNS)
    assert pool_fairness.FairnessReport.from_dict(result.as_dict()) == result


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 8))
def test_runs_without_unique_judged_documents_never_move_and_precision_never_rises(seed, depth):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(15)]
    qrels = {f"q{t}": {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, 8)} for t in range(3)}
    runs = {}
    for r in range(rng.randint(2, 5)):
        runs[f"r{r}"] = {
            qid: {d: round(rng.random(), 2) for d in rng.sample(docs, rng.randint(1, 10))}
            for qid in qrels
        }
    if rng.random() < 0.5:  # a copy: neither it nor its original has anything unique
        runs["copy"] = {qid: dict(ranked) for qid, ranked in runs["r0"].items()}
    frames = {name: measures.run_frame(run) for name, run in runs.items()}
    result = pool_fairness.leave_one_run_out(
        measures.qrels_frame(qrels), frames, ["P.5", "ndcg_cut.5", "map"], depth=depth
    )
    for row in result.runs:
        assert row.unique_relevant <= row.unique_judged
        if row.unique_judged == 0:
            assert row.reduced == row.full
            assert all(row.rank_drop(m) == 0 for m in result.measures)
        assert row.drop("P_5") >= -1e-12
        assert row.rank_reduced["P_5"] >= row.rank_full["P_5"]
    if "copy" in runs:
        assert result.of("copy").unique_judged == 0
