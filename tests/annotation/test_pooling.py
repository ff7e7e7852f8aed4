import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.pooling import pool_runs


def run(rows):
    return pl.DataFrame(
        rows, schema={"qid": pl.String, "docno": pl.String, "score": pl.Float64}, orient="row"
    )


def test_pool_is_the_union_of_each_runs_top_k_per_topic():
    a = run([("1", "d1", 3.0), ("1", "d2", 2.0), ("1", "d3", 1.0), ("2", "d9", 1.0)])
    b = run([("1", "d3", 9.0), ("1", "d1", 8.0), ("1", "d4", 7.0)])
    pool = pool_runs([a, b], depth=2)
    assert pool.rows() == [
        ("1", "d1", 2, 1),
        ("1", "d2", 1, 2),
        ("1", "d3", 1, 1),
        ("2", "d9", 1, 1),
    ]


def test_top_k_follows_score_then_docno_descending_not_file_order():
    # Tied scores: trec_eval puts the larger docno first, so d2 is in the top 1, not d1.
    a = run([("1", "d1", 1.0), ("1", "d2", 1.0), ("1", "d0", 5.0)])
    assert pool_runs([a], depth=2)["docno"].to_list() == ["d0", "d2"]


def test_pool_keeps_only_the_campaigns_topics():
    a = run([("1", "d1", 1.0), ("2", "d2", 1.0)])
    assert pool_runs([a], depth=5, topics=["2"])["qid"].to_list() == ["2"]


@pytest.mark.parametrize("depth", [0, -3])
def test_depth_must_be_positive(depth):
    with pytest.raises(ValueError, match="pool depth must be at least 1"):
        pool_runs([run([("1", "d1", 1.0)])], depth=depth)


def test_pooling_needs_runs():
    with pytest.raises(ValueError, match="at least one run"):
        pool_runs([], depth=10)


rows = st.lists(
    st.tuples(
        st.sampled_from("123"),
        st.sampled_from([f"d{i}" for i in range(12)]),
        st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    ),
    max_size=40,
).map(lambda rs: list({(q, d): (q, d, s) for q, d, s in rs}.values()))


@settings(max_examples=150, deadline=None)
@given(st.lists(rows, min_size=1, max_size=3), st.integers(1, 6))
def test_pool_equals_a_plain_python_top_k_union(runs, depth):
    expected = set()
    for rs in runs:
        for qid in {q for q, _, _ in rs}:
            ranked = sorted(
                (r for r in rs if r[0] == qid), key=lambda r: (r[2], r[1]), reverse=True
            )
            expected |= {(q, d) for q, d, _ in ranked[:depth]}
    frames = [run(rs) for rs in runs]
    pool = pool_runs(frames, depth=depth)
    assert set(pool.select("qid", "docno").rows()) == expected
    assert pool.select("qid", "docno").is_duplicated().sum() == 0
