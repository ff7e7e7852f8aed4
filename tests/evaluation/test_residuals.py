"""evaluation.analysis.residuals against its definition: the qrels filled by hand both ways (unjudged
documents of the top k as the top grade, as grade 0) and scored by trec_eval's own code
(pytrec_eval), measure by measure."""

import random

import polars as pl
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation import measures
from evaluation.analysis import residuals

SPECS = ["ndcg_cut.5,10", "P.5", "map", "recip_rank", "ndcg", "bpref", "judged.10"]
NAMES = {
    "ndcg_cut_5": ("ndcg_cut_5", 5),
    "ndcg_cut_10": ("ndcg_cut_10", 10),
    "P_5": ("P_5", 5),
    "map": ("map", None),
    "recip_rank": ("recip_rank", None),
    "ndcg": ("ndcg", None),
    "bpref": ("bpref", None),
}


def world(seed):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for t in range(6):
        qid = f"q{t}"
        docs = [f"d{i}" for i in range(30)]
        qrels[qid] = {d: rng.choice([0, 0, 1, 2, 3]) for d in rng.sample(docs, 12)}
        run[qid] = {d: round(rng.random(), 3) for d in rng.sample(docs, rng.randint(3, 20))}
    run["only_in_run"] = {"d1": 1.0}
    return qrels, run


def expected(qrels, run, name, k, grade):
    filled = {qid: dict(judged) for qid, judged in qrels.items()}
    for qid, ranking in run.items():
        if qid not in qrels:
            continue
        # trec_eval's order: score descending, ties by docno descending.
        ordered = sorted(ranking, key=lambda d: (-ranking[d], [-ord(c) for c in d]))
        for docno in ordered[: k or len(ordered)]:
            filled[qid].setdefault(docno, grade)
    measure = name.rsplit("_", 1)[0] + "." + name.rsplit("_", 1)[1] if k else name
    scores = pytrec_eval.RelevanceEvaluator(filled, {measure}).evaluate(run)
    return {qid: values[name] for qid, values in scores.items()}


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_bounds_equal_trec_eval_on_the_qrels_filled_both_ways(seed):
    qrels, run = world(seed)
    result = residuals.residual_bounds(measures.qrels_frame(qrels), measures.run_frame(run), SPECS)
    assert result.top_grade == max(g for judged in qrels.values() for g in judged.values())
    assert set(result.per_topic) == set(qrels)
    for name, (output, k) in NAMES.items():
        worst = expected(qrels, run, output, k, 0)
        best = expected(qrels, run, output, k, result.top_grade)
        for qid, values in result.per_topic.items():
            assert values[name][0] == pytest.approx(worst[qid], abs=1e-12), (qid, name)
            assert values[name][1] == pytest.approx(best[qid], abs=1e-12), (qid, name)
    assert "judged_10" not in result.means


def test_the_value_lies_between_worst_and_best_and_a_fully_judged_run_has_no_gap():
    qrels, run = world(3)
    frame_q, frame_r = measures.qrels_frame(qrels), measures.run_frame(run)
    result = residuals.residual_bounds(frame_q, frame_r, ["ndcg_cut.10", "P.5", "map"])
    actual = measures.evaluate(frame_q, frame_r, ["ndcg_cut.10", "P.5", "map"])
    for row in actual.per_topic.iter_rows(named=True):
        for name in ("ndcg_cut_10", "P_5", "map"):
            worst, best = result.per_topic[row["qid"]][name]
            assert worst == pytest.approx(row[name])  # trec_eval: unjudged = not relevant
            assert worst <= row[name] + 1e-12 <= best + 2e-12
    judged = {qid: {d: 1 for d in ranking} for qid, ranking in run.items() if qid in qrels}
    full = residuals.residual_bounds(measures.qrels_frame(judged), frame_r, ["ndcg_cut.10"])
    assert all(w == b for values in full.per_topic.values() for w, b in values.values())


def test_the_top_grade_can_be_given_and_must_be_positive():
    qrels, run = world(1)
    frame_q, frame_r = measures.qrels_frame(qrels), measures.run_frame(run)
    assert residuals.residual_bounds(frame_q, frame_r, ["P.5"], top_grade=5).top_grade == 5
    with pytest.raises(ValueError, match="top grade"):
        residuals.residual_bounds(frame_q, frame_r, ["P.5"], top_grade=0)


def test_an_unknown_measure_is_refused():
    qrels, run = world(1)
    with pytest.raises(ValueError):
        residuals.residual_bounds(
            measures.qrels_frame(qrels), measures.run_frame(run), ["nonsense.5"]
        )


def test_frames_keep_their_types():
    qrels = pl.DataFrame({"qid": ["1"], "docno": ["a"], "grade": [1]})
    run = pl.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    result = residuals.residual_bounds(qrels, run, ["P.5"])
    assert result.per_topic["1"]["P_5"] == (pytest.approx(1 / 5), pytest.approx(2 / 5))
