"""evaluation.analysis.rundiff: RBO_ext and tau-AP against straightforward loops written from the
papers' equations, their invariants (hypothesis), and the per-topic diff summary.

The loops below are a second, independent reading of the equations (sets grown rank by rank,
pairs counted one by one); the module computes the same values with arrays across topics.
While writing it, RBO_ext was also checked against the `rbo` package (0.1.3,
RankingSimilarity.rbo_ext, equation 32) on 300 random uneven pairs of lists: largest
difference 1.1e-16. That package pins numpy < 2, so it cannot be a dependency here.
"""

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.analysis import rundiff

# --- the equations, as loops --------------------------------------------------------------


def rbo_ext_loop(s_list, l_list, p):
    """Webber, Moffat & Zobel 2010, equation 32, one depth at a time."""
    if len(s_list) > len(l_list):
        s_list, l_list = l_list, s_list
    s, l_ = len(s_list), len(l_list)
    if l_ == 0:
        return 1.0
    if s == 0:
        return 0.0

    def overlap(d):
        return len(set(s_list[: min(d, s)]) & set(l_list[:d]))

    first = sum(overlap(d) / d * p**d for d in range(1, l_ + 1))
    x_s, x_l = overlap(s), overlap(l_)
    second = sum(x_s * (d - s) / (s * d) * p**d for d in range(s + 1, l_ + 1))
    return (1 - p) / p * (first + second) + ((x_l - x_s) / l_ + x_s / s) * p**l_


def tau_ap_loop(reference, other):
    """Yilmaz, Aslam & Robertson 2008, over the documents both lists hold."""
    common = set(reference) & set(other)
    ref = [d for d in reference if d in common]
    est = [d for d in other if d in common]
    n = len(est)
    if n < 2:
        return math.nan
    position = {d: i for i, d in enumerate(ref)}
    total = 0.0
    for i in range(1, n):
        correct = sum(1 for j in range(i) if position[est[j]] < position[est[i]])
        total += correct / i
    return 2 / (n - 1) * total - 1


rankings = st.lists(st.sampled_from([f"d{i}" for i in range(25)]), unique=True, max_size=20)
persistence = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.98])


@settings(max_examples=150, deadline=None)
@given(rankings, rankings, persistence)
def test_rbo_ext_equals_the_equation_written_as_a_loop(a, b, p):
    assert rundiff.rbo_ext(a, b, p) == pytest.approx(rbo_ext_loop(a, b, p), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(rankings, rankings)
def test_tau_ap_equals_the_equation_written_as_a_loop(a, b):
    expected = tau_ap_loop(a, b)
    value = rundiff.tau_ap(a, b)
    if math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == pytest.approx(expected, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(rankings, persistence)
def test_a_ranking_against_itself_has_rbo_1_tau_ap_1_and_no_moves(a, p):
    assert rundiff.rbo_ext(a, a, p) == pytest.approx(1.0)
    if len(a) >= 2:
        assert rundiff.tau_ap(a, a) == pytest.approx(1.0)
    frame = _top({"q": a})
    table = rundiff.diff_topics(frame, frame, k=5, p=p)
    if a:
        row = table.row(0, named=True)
        assert (row["move"], row["only_a"], row["only_b"], row["entering"]) == (0, 0, 0, 0)


@settings(max_examples=100, deadline=None)
@given(rankings, rankings, persistence)
def test_rbo_is_symmetric_and_between_0_and_1(a, b, p):
    value = rundiff.rbo_ext(a, b, p)
    assert 0.0 <= value <= 1.0
    assert value == pytest.approx(rundiff.rbo_ext(b, a, p), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(rankings, rankings)
def test_tau_ap_is_between_minus_1_and_1(a, b):
    value = rundiff.tau_ap(a, b)
    assert math.isnan(value) or -1.0 - 1e-12 <= value <= 1.0 + 1e-12


def test_tau_ap_of_a_reversed_ranking_is_minus_1_and_weighs_the_top_more():
    assert rundiff.tau_ap(list("abcdef"), list("fedcba")) == pytest.approx(-1.0)
    # One swap at the top costs more than one swap at the bottom (tau would not tell).
    top_swap = rundiff.tau_ap(list("abcdef"), list("bacdef"))
    bottom_swap = rundiff.tau_ap(list("abcdef"), list("abcdfe"))
    assert top_swap < bottom_swap < 1.0
    # The formula itself: the second document has no correct document above it.
    assert top_swap == pytest.approx(2 / 5 * (0 / 1 + 2 / 2 + 3 / 3 + 4 / 4 + 5 / 5) - 1)


def test_rbo_of_disjoint_lists_is_0_and_of_empty_lists_1():
    assert rundiff.rbo_ext(["a", "b"], ["c", "d"]) == 0.0
    assert rundiff.rbo_ext([], []) == 1.0
    assert rundiff.rbo_ext(["a"], []) == 0.0


def test_rbo_of_two_equal_length_lists_is_the_short_formula():
    # Equal lengths: (1-p)/p * sum X_d/d p^d + X_k/k p^k; X = 0, 2, 2 for these.
    p = 0.9
    expected = (1 - p) / p * (0 / 1 * p + 2 / 2 * p**2 + 2 / 3 * p**3) + 2 / 3 * p**3
    assert rundiff.rbo_ext(["a", "b", "c"], ["b", "a", "d"], p) == pytest.approx(expected)


@pytest.mark.parametrize("p", [0, 1, -0.5, 1.5, True, "0.9"])
def test_rbo_refuses_a_persistence_outside_0_1(p):
    with pytest.raises(ValueError, match="persistence"):
        rundiff.rbo_ext(["a"], ["a"], p)


def test_a_ranking_listing_a_document_twice_is_refused():
    with pytest.raises(ValueError, match="once"):
        rundiff.rbo_ext(["a", "a"], ["a"])


# --- the per-topic summary ----------------------------------------------------------------


def _top(lists, grades=None):
    grades = grades or {}
    rows = [
        (qid, rank, docno, grades.get((qid, docno)))
        for qid, docnos in lists.items()
        for rank, docno in enumerate(docnos, start=1)
    ]
    return pl.DataFrame(
        rows,
        schema={"qid": pl.String, "rank": pl.Int64, "docno": pl.String, "grade": pl.Int64},
        orient="row",
    )


GRADES = {("1", "a"): 2, ("1", "b"): 0, ("1", "c"): 1, ("2", "x"): 1}


def test_diff_topics_counts_what_changed_per_topic():
    a = _top({"1": ["a", "b", "c", "d"], "2": ["x", "y"]}, GRADES)
    b = _top({"1": ["c", "e", "a", "f"], "2": ["x", "y"], "3": ["z"]}, GRADES)
    table = {row["qid"]: row for row in rundiff.diff_topics(a, b, k=2).iter_rows(named=True)}
    one = table["1"]
    assert (one["only_a"], one["only_b"], one["common"]) == (2, 2, 2)
    # c moved from 3 to 1 and a from 1 to 3: equal moves, the smaller docno named.
    assert (one["move"], one["move_docno"], one["move_from"], one["move_to"]) == (2, "a", 1, 3)
    # b's top 2 is c (judged) and e (unjudged, not in a's top 2): one enters.
    assert (one["entering"], one["unjudged_a"], one["unjudged_b"]) == (1, 0, 1)
    assert one["tau_ap"] == pytest.approx(tau_ap_loop(list("abcd"), list("ceaf")))
    assert one["rbo"] == pytest.approx(rbo_ext_loop(list("abcd"), list("ceaf"), 0.9))
    two = table["2"]
    assert (two["move"], two["move_docno"], two["rbo"], two["tau_ap"]) == (0, None, 1.0, 1.0)
    three = table["3"]
    assert (three["len_a"], three["len_b"], three["only_b"], three["rbo"]) == (0, 1, 1, 0.0)
    assert math.isnan(three["tau_ap"])
    assert (three["entering"], three["unjudged_b"]) == (1, 1)


def test_order_topics_puts_the_most_different_first():
    a = _top({"1": ["a", "b", "c"], "2": ["x", "y"], "3": ["m", "n"]})
    b = _top({"1": ["c", "b", "a"], "2": ["x", "y"], "3": ["n", "m"]})
    table = rundiff.diff_topics(a, b, k=2)
    assert rundiff.order_topics(table, "rbo")[-1] == "2"
    assert rundiff.order_topics(table, "tau_ap") == ["1", "3", "2"]
    deltas = {"1": 0.1, "2": -0.3}
    assert rundiff.order_topics(table, "measure", deltas) == ["2", "1", "3"]
    with pytest.raises(ValueError, match="order topics by"):
        rundiff.order_topics(table, "kendall")


def test_side_by_side_marks_each_documents_rank_in_the_other_list():
    a = _top({"1": ["a", "b", "c"]}, GRADES)
    b = _top({"1": ["c", "e"]}, GRADES)
    rows = rundiff.side_by_side(a, b, "1")
    assert [(r.docno_a, r.other_a, r.docno_b, r.other_b) for r in rows] == [
        ("a", None, "c", 3),
        ("b", None, "e", None),
        ("c", 1, None, None),
    ]
    assert (rows[0].grade_a, rows[1].grade_b) == (2, None)


def test_diff_topics_refuses_a_bad_k():
    frame = _top({"1": ["a"]})
    with pytest.raises(ValueError, match="k must be"):
        rundiff.diff_topics(frame, frame, k=0)
