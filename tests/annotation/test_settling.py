"""annotation.live_board: the live board's bounds, pairs and estimate on hand-worked pools,
and its invariants on random ones."""

import random

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation import live_board as settling
from evaluation import measures

RUNS = {
    "A": measures.run_frame({"q1": {"d1": 2.0, "d2": 1.0}}),
    "B": measures.run_frame({"q1": {"d3": 2.0, "d4": 1.0}}),  # d4 is not in the pool
}


def unknown(*pairs):
    return pl.DataFrame(list(pairs), schema={"qid": pl.String, "docno": pl.String}, orient="row")


def test_precision_bounds_and_a_pair_that_one_grade_settles():
    board = settling.settle(
        measures.qrels_frame({"q1": {"d1": 1}}),
        unknown(("q1", "d2"), ("q1", "d3")),
        RUNS,
        "P@2",
        top_grade=3,
    )
    a, b = board.runs
    assert (a.name, a.mean, a.low, a.high) == ("A", 0.5, 0.5, 1.0)
    assert (b.name, b.mean, b.low, b.high) == ("B", 0.0, 0.0, 0.5)
    (pair,) = board.pairs
    assert (pair.better, pair.worse, pair.settled) == ("A", "B", False)
    assert board.to_settle == 2 and not board.settled  # d2 and d3
    # d3 judged not relevant: B can reach 0 at best, A has 0.5 whatever d2 is.
    board = settling.settle(
        measures.qrels_frame({"q1": {"d1": 1, "d3": 0}}),
        unknown(("q1", "d2")),
        RUNS,
        "P.2",
        top_grade=3,
    )
    assert board.settled and board.pairs[0].margin == pytest.approx(0.5)
    assert board.to_settle == 0 and board.known == 2 and board.unknown == 1


def test_ndcg_low_bound_puts_the_other_undecided_documents_at_the_top_grade():
    board = settling.settle(
        measures.qrels_frame({"q1": {"d1": 1}}),
        unknown(("q1", "d3")),
        {"A": RUNS["A"], "B": RUNS["B"]},
        "nDCG@2",
        top_grade=1,
    )
    a = next(r for r in board.runs if r.name == "A")
    # A: d1 (1) at rank 1. Known only: ideal d1 → 1. Low: d3 relevant too (ideal 1 + 1/log2 3).
    assert a.mean == pytest.approx(1.0) and a.high == pytest.approx(1.0)
    assert a.low == pytest.approx(1 / (1 + 1 / 1.584962500721156))
    # Not own-top-k: the undecided pairs of the open pair's moving topics all count.
    assert board.to_settle == 1


def test_bad_choices_are_refused():
    known = measures.qrels_frame({"q1": {"d1": 1}})
    with pytest.raises(ValueError, match="top grade"):
        settling.settle(known, unknown(), RUNS, "P@2", top_grade=0)
    with pytest.raises(ValueError, match="one measure"):
        settling.settle(known, unknown(), RUNS, "P.5,10", top_grade=1)


def test_the_board_round_trips_through_plain_json():
    board = settling.settle(
        measures.qrels_frame({"q1": {"d1": 1}}), unknown(("q1", "d2")), RUNS, "P@2", top_grade=1
    )
    assert settling.LiveBoard.from_dict(board.as_dict()) == board


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), share=st.floats(0, 1))
def test_the_mean_lies_in_its_bounds_and_a_complete_pool_has_none(seed, share):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(12)]
    runs = {
        f"r{r}": measures.run_frame(
            {f"q{t}": {d: rng.random() for d in rng.sample(docs, 6)} for t in range(3)}
        )
        for r in range(3)
    }
    truth = {f"q{t}": {d: rng.choice([0, 0, 1, 2]) for d in docs} for t in range(3)}
    known = {
        q: {d: g for d, g in grades.items() if rng.random() < share} for q, grades in truth.items()
    }
    missing = [(q, d) for q, grades in truth.items() for d in grades if d not in known[q]]
    for spec in ("P@5", "nDCG@5"):
        board = settling.settle(
            measures.qrels_frame(known), unknown(*missing), runs, spec, top_grade=2
        )
        for run in board.runs:
            assert run.low - 1e-12 <= run.mean <= run.high + 1e-12
        for pair in board.pairs:
            if pair.settled:
                better = next(r for r in board.runs if r.name == pair.better)
                worse = next(r for r in board.runs if r.name == pair.worse)
                assert better.low > worse.high
        full = settling.settle(measures.qrels_frame(truth), unknown(), runs, spec, top_grade=2)
        assert all(r.low == r.mean == r.high for r in full.runs) and full.to_settle == 0
        if spec == "P@5":  # exact extremes: a settled pair holds once everything is judged
            final = {r.name: r.mean for r in full.runs}
            for pair in board.pairs:
                if pair.settled:
                    assert final[pair.better] > final[pair.worse]


# --- the probability of an open pair and the stop rule ---------------------------------------


def test_an_open_pairs_probability_under_the_model_by_hand():
    from math import erf, sqrt

    runs = {
        "A": measures.run_frame({"q1": {"d1": 2.0}}),
        "B": measures.run_frame({"q1": {"d3": 2.0}}),
    }
    board = settling.settle(
        measures.qrels_frame({"q1": {"d1": 1}}), unknown(("q1", "d3")), runs, "nDCG@1", top_grade=1
    )
    (pair,) = board.pairs
    assert (pair.better, pair.worse, pair.settled) == ("A", "B", False)
    # Topic grades so far [1] plus one pseudo-grade uniform over {0, 1}: mean (1 + 1/2) / 2,
    # E[g²] (1 + 1/2) / 2. IDCG 1, one topic: A is worth 1, B the mean of d3.
    mean = (1 + 0.5) / 2
    var = (1 + 0.5) / 2 - mean**2
    expected = 0.5 * (1 + erf((1 - mean) / sqrt(var) / sqrt(2)))
    assert pair.probability == pytest.approx(expected)  # 0.7181…
    # No grade at all: both documents are alike, a coin toss.
    board = settling.settle(
        measures.qrels_frame({}), unknown(("q1", "d1"), ("q1", "d3")), runs, "nDCG@1", top_grade=1
    )
    assert board.pairs[0].probability == pytest.approx(0.5)


def test_settled_pairs_and_measures_without_a_model_have_no_probability():
    board = settling.settle(
        measures.qrels_frame({"q1": {"d1": 1, "d3": 0}}),
        unknown(("q1", "d2")),
        RUNS,
        "nDCG@2",
        top_grade=3,
    )
    assert board.settled and board.pairs[0].probability is None
    board = settling.settle(
        measures.qrels_frame({"q1": {"d1": 1}}),
        unknown(("q1", "d2"), ("q1", "d3")),
        RUNS,
        "P@2",
        top_grade=3,
    )
    assert not board.pairs[0].settled and board.pairs[0].probability is None


def _board(means, bounds, probabilities):
    """A hand-made board: runs r0, r1, … in the order given (best first)."""
    runs = [
        settling.LiveRun(f"r{i}", m, lo, hi, lo, hi)
        for i, (m, (lo, hi)) in enumerate(zip(means, bounds, strict=True))
    ]
    pairs = []
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            margin = a.low - b.high
            prob = None if margin > 0 else probabilities.get((a.name, b.name), 0.5)
            pairs.append(settling.LivePair(a.name, b.name, margin > 0, margin, prob))
    return settling.LiveBoard("ndcg_cut_10", 3, 1, 1, 1, runs, pairs, 0)


def test_the_stop_rule_waits_for_adjacent_pairs_neither_decided_nor_likely_enough():
    # r0 is clear of r1 by its bounds; r1 and r2 overlap with P = 0.97.
    board = _board([0.9, 0.5, 0.45], [(0.8, 1.0), (0.4, 0.6), (0.3, 0.55)], {("r1", "r2"): 0.97})
    assert settling.stop_waiting_for(board, rule="adjacent", confidence=0.95) == []
    assert settling.stop_waiting_for(board, rule="adjacent", confidence=0.99) == [("r1", "r2")]
    # The top-1 rule only needs r0 settled against everyone below.
    assert settling.stop_waiting_for(board, rule="top", top=1, confidence=0.99) == []
    assert settling.stop_waiting_for(board, rule="top", top=2, confidence=0.99) == [("r1", "r2")]
    # k larger than the board is the whole board.
    assert settling.stop_waiting_for(board, rule="top", top=9, confidence=0.99) == [("r1", "r2")]


def test_the_stop_rule_without_a_model_goes_by_the_bounds_alone():
    board = _board([0.9, 0.5], [(0.4, 1.0), (0.3, 0.6)], {})
    no_model = [settling.LivePair(p.better, p.worse, p.settled, p.margin) for p in board.pairs]
    board = settling.LiveBoard(**{**board.__dict__, "pairs": no_model})
    assert settling.stop_waiting_for(board, rule="adjacent", confidence=0.51) == [("r0", "r1")]
    assert settling.stop_waiting_for(_board([0.5], [(0.4, 0.6)], {}), rule="adjacent") == []
    with pytest.raises(ValueError, match="unknown stop rule"):
        settling.stop_waiting_for(board, rule="sometime")
