"""evaluation.analysis.topk: each topic's first k documents in trec_eval's order, checked against a
plain sort written from the rule, and against the measures (judged@k and P@k count the same
documents), with hypothesis runs full of ties and float32 near-ties."""

import struct
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation import measures
from evaluation.analysis import topk

ROOT = Path(__file__).resolve().parents[2]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run_of(rows) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema={"qid": pl.String, "docno": pl.String, "score": pl.Float64}, orient="row"
    )


def qrels_of(rows) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema={"qid": pl.String, "docno": pl.String, "grade": pl.Int64}, orient="row"
    )


def float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def oracle_top_k(rows, k, version=9, depth=None):
    """The rule in words: per topic, score descending (as C floats in 9.0.8), ties by docno
    descending in byte order; keep the first min(k, depth)."""
    keep = k if depth is None else min(k, depth)
    out = []
    for qid in sorted({r[0] for r in rows}, key=str.encode):
        docs = [(d, s) for q, d, s in rows if q == qid]
        key = float32 if version == 9 else float
        docs.sort(key=lambda ds: (key(ds[1]), ds[0].encode()), reverse=True)
        out.extend((qid, rank, d, s) for rank, (d, s) in enumerate(docs[:keep], 1))
    return out


@st.composite
def runs(draw):
    """Up to 4 topics of up to 12 documents; scores drawn from a few values (ties) and values
    1e-7 apart (equal as float32, distinct as doubles)."""
    scores = st.one_of(
        st.sampled_from([1.0, 2.0, 2.5, 3.0, 1.0000001, 1.0000002]),
        st.floats(-5, 5, allow_nan=False, allow_infinity=False),
    )
    rows = []
    for qid in draw(st.lists(st.sampled_from(["1", "2", "10", "q-a"]), unique=True, max_size=4)):
        docnos = draw(st.lists(st.sampled_from([f"d{i}" for i in range(15)]), unique=True))
        rows.extend((qid, d, draw(scores)) for d in docnos)
    return rows


def test_ties_break_by_docno_descending_and_rank_column_is_not_used():
    run = run_of([("1", "a", 1.0), ("1", "c", 1.0), ("1", "b", 2.0), ("1", "d", 0.5)])

    top = topk.top_k(run, 3)

    assert top.rows() == [("1", 1, "b", 2.0), ("1", 2, "c", 1.0), ("1", 3, "a", 1.0)]


def test_version_9_ties_scores_equal_as_float32_and_version_10_does_not():
    run = run_of([("1", "a", 1.00000001), ("1", "b", 1.0)])

    assert [r[2] for r in topk.top_k(run, 2, trec_eval_version=9).rows()] == ["b", "a"]
    assert [r[2] for r in topk.top_k(run, 2, trec_eval_version=10).rows()] == ["a", "b"]


def test_depth_cuts_the_ranking_before_k():
    run = run_of([("1", f"d{i}", float(i)) for i in range(5)])

    assert topk.top_k(run, 10, depth=2)["docno"].to_list() == ["d4", "d3"]


def test_k_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        topk.top_k(run_of([]), 0)


def test_grades_mark_unjudged_documents_as_null_and_count_them():
    run = run_of([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0), ("2", "x", 1.0)])
    qrels = qrels_of([("1", "a", 2), ("1", "c", 0), ("2", "y", 1)])

    graded = topk.with_grades(topk.top_k(run, 3), qrels)

    assert graded["grade"].to_list() == [2, None, 0, None]
    assert topk.unjudged_counts(graded) == {"1": 1, "2": 1}
    assert topk.unjudged_pairs(graded) == [("1", "b"), ("2", "x")]


def test_ideal_ranking_is_the_relevant_documents_by_grade():
    qrels = qrels_of([("1", "a", 1), ("1", "b", 3), ("1", "c", 0), ("1", "d", 3), ("2", "e", 2)])

    assert topk.ideal_ranking(qrels, "1", 2) == [("b", 3), ("d", 3)]
    assert topk.ideal_ranking(qrels, "1", 10) == [("b", 3), ("d", 3), ("a", 1)]


@PROPERTY
@given(runs(), st.integers(1, 8), st.sampled_from([9, 10]), st.one_of(st.none(), st.integers(1, 6)))
def test_top_k_equals_the_rule_written_as_a_plain_sort(rows, k, version, depth):
    top = topk.top_k(run_of(rows), k, trec_eval_version=version, depth=depth)

    assert top.rows() == oracle_top_k(rows, k, version, depth)


@PROPERTY
@given(runs(), st.integers(1, 8), st.sampled_from([9, 10]))
def test_unjudged_documents_are_those_judged_at_k_leaves_out(rows, k, version):
    """judged@k = judged documents in the top k / min(k, retrieved); P@k = relevant / k.
    judged@k ranks as ir_measures' judged provider does (doubles, ties by docno ascending),
    so on a tie at rank k its top k may hold other documents than trec_eval's (P@k's, and
    top_k's): compared where no judged document ties another."""
    rows = [r for r in rows if sum(float32(s) == float32(r[2]) for _, _, s in rows) == 1]
    run = run_of(rows)
    qrels = qrels_of(
        [(q, d, i % 3) for i, (q, d, _) in enumerate(rows) if i % 2 == 0] + [("1", "zz", 1)]
    )
    try:
        result = measures.evaluate(
            qrels, run, [f"judged.{k}", f"P.{k}"], measures.Options(trec_eval_version=version)
        )
    except ValueError:
        return  # no topic in common: nothing to compare
    graded = topk.with_grades(topk.top_k(run, k, trec_eval_version=version), qrels)
    unjudged = topk.unjudged_counts(graded)
    for qid, judged, precision in result.per_topic.select(
        "qid", f"judged_{k}", f"P_{k}"
    ).iter_rows():
        shown = graded.filter(pl.col("qid") == qid)
        assert judged == pytest.approx((shown.height - unjudged[qid]) / shown.height, abs=1e-12)
        relevant = shown.filter(pl.col("grade") >= 1).height
        assert precision == pytest.approx(relevant / k, abs=1e-12)


def test_topk_is_pure():
    """A pure module (DESIGN.md): importing it loads no Django."""
    probe = "import sys, evaluation.analysis.topk; print(any(m.split('.')[0] == 'django' for m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False", "evaluation.analysis.topk must not import Django"


@PROPERTY
@given(
    runs(),
    st.integers(1, 5),
    st.integers(1, 8),
    st.sampled_from([9, 10]),
    st.one_of(st.none(), st.integers(1, 6)),
)
def test_stored_top_lists_cut_as_the_whole_run_does(rows, stored_depth, k, version, depth):
    """What a run keeps beside its artifact serves every top k no deeper than it."""
    run = run_of(rows)
    stored = topk.stored_tops(run, stored_depth)
    keep = k if depth is None else min(k, depth)

    if keep > stored_depth:
        with pytest.raises(ValueError, match="stored lists are"):
            topk.top_k_of_stored(stored, k, stored_depth=stored_depth, depth=depth)
        return
    cut = topk.top_k_of_stored(
        stored, k, stored_depth=stored_depth, trec_eval_version=version, depth=depth
    )
    assert cut.rows() == oracle_top_k(rows, k, version, depth)


def test_stored_top_lists_hold_both_versions_orders():
    """b and a tie as float32 (9.0.8 puts b first by docno), not as doubles (10.0: a first):
    a list one deep keeps both."""
    stored = topk.stored_tops(run_of([("1", "a", 1.00000001), ("1", "b", 1.0)]), 1)

    assert stored.rows() == [("1", "b", 1.0, 1, None), ("1", "a", 1.00000001, None, 1)]


def test_on_a_tie_at_k_judged_follows_ir_measures_while_top_k_follows_trec_eval():
    run = run_of([("1", "a", 1.0), ("1", "b", 1.0)])
    qrels = qrels_of([("1", "a", 1)])
    judged = measures.evaluate(qrels, run, ["judged.1"]).per_topic.get_column("judged_1")
    assert judged.to_list() == [1.0]  # ir_measures' judged provider: a before b
    assert topk.top_k(run, 1).get_column("docno").to_list() == ["b"]  # trec_eval: b before a
