"""trec_eval's preference measures (-R prefs, qrels_prefs), judgment-group measures
(-R qrels_jg), -J and -Z z-scores: formulas written out on hand cases, trec_eval's quirks
pinned, errors, and hypothesis invariants (the byte-exact comparisons with trec_eval's
binaries are in test_trec_eval_inputs.py)."""

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.measures import Options, evaluate, qrels_frame, run_frame
from evaluation.measures.judgment_groups import evaluate_judgment_groups
from evaluation.measures.prefs import PREFS_MEASURES, evaluate_prefs, prefs_from_qrels
from evaluation.measures.zscores import MISSING_ZSCORE_VALUE, convert_to_zscores

PREFS_SCHEMA = {"qid": pl.String, "jg": pl.String, "jsg": pl.String, "docno": pl.String}
RATIOS = [name for name in PREFS_MEASURES if not name.startswith("prefs_num")]


def prefs(rows) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={**PREFS_SCHEMA, "level": pl.Float64}, orient="row")


def run(ranking: dict[str, list[str]]) -> pl.DataFrame:
    """Each topic's documents in rank order (scores descending)."""
    return run_frame({q: {d: float(-i) for i, d in enumerate(docs)} for q, docs in ranking.items()})


def values(frame, ranking, measures=("all_prefs",), **options) -> dict[str, float]:
    result = evaluate_prefs(frame, run(ranking), list(measures), Options(**options))
    (row,) = result.per_topic.rows(named=True)
    return row


# --- formulas ----------------------------------------------------------------------------


def test_preferences_of_one_subgroup_follow_the_levels():
    # a (2) > b (1) > c (0): three preferences; the run ranks b, a, c.
    p = prefs([("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1), ("q", "u", "s", "c", 0)])
    v = values(p, {"q": ["b", "a", "c"]})
    assert v["prefs_num_prefs_poss"] == 3
    assert v["prefs_num_prefs_ful"] == v["prefs_num_prefs_ful_ret"] == 2  # a>c, b>c
    assert v["prefs_simp"] == pytest.approx(2 / 3)
    assert v["prefs_pair"] == pytest.approx((0 + 1 + 1) / 3)
    assert v["prefs_avgjg"] == pytest.approx(2 / 3)
    # R = 2 relevant, N = 1 non-relevant: R_ret * (R - N) fulfilled and R * (R - N)
    # possible preferences are added.
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx((2 + 2 * 1) / (3 + 2 * 1))


def test_implied_preferences_count_when_one_document_is_retrieved():
    p = prefs([("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1), ("q", "u", "s", "c", 0)])
    v = values(p, {"q": ["b", "a", "x"]})  # c not retrieved, x not judged
    assert v["prefs_num_prefs_ful"] == 2 and v["prefs_num_prefs_ful_ret"] == 0
    assert v["prefs_simp_ret"] == 0.0  # a>b is the only preference among retrieved ones
    assert v["prefs_simp_imp"] == pytest.approx(2 / 3)
    assert v["prefs_pair_ret"] == 0.0


def test_subgroups_add_transitive_preferences():
    # a > b in s1 and b > c in s2 imply a > c.
    p = prefs(
        [
            ("q", "u", "s1", "a", 2),
            ("q", "u", "s1", "b", 1),
            ("q", "u", "s2", "b", 5),
            ("q", "u", "s2", "c", 4),
        ]
    )
    v = values(p, {"q": ["c", "b", "a"]})
    assert v["prefs_num_prefs_poss"] == 3 and v["prefs_num_prefs_ful"] == 0


def test_pair_takes_the_share_of_agreeing_judgment_groups():
    # Two users disagree on a and b; a third agrees with the first.
    rows = [("q", "u1", "s", "a", 1), ("q", "u1", "s", "b", 0)]
    rows += [("q", "u2", "s", "a", 0), ("q", "u2", "s", "b", 1)]
    rows += [("q", "u3", "s", "a", 3), ("q", "u3", "s", "b", 2)]
    v = values(prefs(rows), {"q": ["a", "b"]})
    assert v["prefs_pair"] == pytest.approx(2 / 3)
    assert v["prefs_simp"] == pytest.approx(2 / 3)
    assert v["prefs_avgjg"] == pytest.approx((1 + 0 + 1) / 3)


def test_ties_are_broken_by_docno_ascending_unlike_the_other_measures():
    p = prefs([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0)])
    tied = run_frame({"q": {"b": 1.0, "a": 1.0}})
    result = evaluate_prefs(p, tied, ["prefs_simp"])
    assert result.per_topic.get_column("prefs_simp").to_list() == [1.0]


def test_a_zero_over_zero_judgment_group_makes_avgjg_rnonrel_zero_as_in_trec_eval():
    # u2's documents are all non-relevant and R = 0 < N = 2: the recount has no
    # preference at all, 0/0, and trec_eval's NaN sum is not > 0.
    rows = [("q", "u1", "s", "a", 1), ("q", "u1", "s", "b", 0)]
    rows += [("q", "u2", "s", "a", 0), ("q", "u2", "s", "b", 0)]
    v = values(prefs(rows), {"q": ["a", "b"]})
    assert v["prefs_avgjg"] == pytest.approx(1 / 2)
    assert v["prefs_avgjg_Rnonrel"] == 0.0


def test_qrels_read_as_preferences_have_one_subgroup_per_iteration():
    qrels = pl.DataFrame(
        [("q", "0", "a", 2.0), ("q", "0", "b", 0.0)],
        schema={"qid": pl.String, "jg": pl.String, "docno": pl.String, "level": pl.Float64},
        orient="row",
    )
    frame = prefs_from_qrels(qrels)
    assert frame.get_column("jsg").to_list() == ["0", "0"]
    assert values(frame, {"q": ["a", "b"]}, ["prefs_simp"])["prefs_simp"] == 1.0


# --- errors ------------------------------------------------------------------------------


def test_contradicting_subgroups_are_refused_with_the_documents_named():
    rows = [("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1)]
    rows += [("q", "u", "s2", "b", 2), ("q", "u", "s2", "a", 1)]
    with pytest.raises(ValueError, match=r"judgment group 'u'.*'a' and 'b' are each preferred"):
        evaluate_prefs(prefs(rows), run({"q": ["a"]}))


def test_a_document_both_relevant_and_not_in_one_judgment_group_is_refused():
    rows = [("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1)]
    rows += [("q", "u", "s2", "a", 0), ("q", "u", "s2", "c", 1)]
    with pytest.raises(ValueError, match="document 'a' has level 0 in one subgroup"):
        evaluate_prefs(prefs(rows), run({"q": ["a"]}))


@pytest.mark.parametrize("measure", ["map", "P.10", "map_avgjg"])
def test_measures_of_other_inputs_are_refused_naming_the_input_they_need(measure):
    with pytest.raises(ValueError, match=f"measure '{measure.split('.')[0]}' needs -R"):
        evaluate_prefs(prefs([("q", "u", "s", "a", 1)]), run({"q": ["a"]}), [measure])


def test_a_preference_measure_is_refused_for_qrels():
    with pytest.raises(ValueError, match="'prefs_simp' needs -R prefs or -R qrels_prefs"):
        evaluate(qrels_frame({"q": {"a": 1}}), run({"q": ["a"]}), ["prefs_simp"])


def test_no_common_topic_is_an_error():
    with pytest.raises(ValueError, match="no topic has both preferences and results"):
        evaluate_prefs(prefs([("q", "u", "s", "a", 1)]), run({"other": ["a"]}))


# --- invariants --------------------------------------------------------------------------


@st.composite
def preferences_and_runs(draw):
    docs = [f"d{i}" for i in range(draw(st.integers(2, 9)))]
    rows = []
    for g in range(draw(st.integers(1, 3))):
        worth = {d: draw(st.sampled_from([0, 0, 1, 2, 3.5])) for d in docs}
        for s in range(draw(st.integers(1, 3))):
            members = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=6, unique=True))
            rows += [("q", f"u{g}", f"s{s}", d, float(worth[d])) for d in members]
    ranking = draw(
        st.lists(st.sampled_from([*docs, "x", "y"]), min_size=1, max_size=12, unique=True)
    )
    scores = draw(st.lists(st.integers(0, 3), min_size=len(ranking), max_size=len(ranking)))
    return prefs(rows), run_frame(
        {"q": dict(zip(ranking, map(float, scores), strict=True)), "z": {"x": 1.0}}
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=preferences_and_runs(), version=st.sampled_from([9, 10]))
def test_ratios_lie_in_the_unit_interval_and_counts_are_consistent(case, version):
    frame, ranking = case
    result = evaluate_prefs(frame, ranking, ["all_prefs"], Options(trec_eval_version=version))
    (row,) = result.per_topic.rows(named=True)
    for name in RATIOS:
        assert 0.0 <= row[name] <= 1.0, name
    assert row["prefs_num_prefs_ful_ret"] <= row["prefs_num_prefs_ful"]
    assert row["prefs_num_prefs_ful"] <= row["prefs_num_prefs_poss"]
    # What is possible depends on the preferences only, not on the run.
    empty = evaluate_prefs(frame, run({"q": ["nothing"]}), ["prefs_num_prefs_poss"])
    assert empty.means["prefs_num_prefs_poss"] == row["prefs_num_prefs_poss"]


@settings(max_examples=40, deadline=None)
@given(levels=st.lists(st.sampled_from([0.0, 1.0, 2.0, 4.5]), min_size=2, max_size=10))
def test_ranking_by_level_fulfils_every_preference(levels):
    docs = [f"d{i}" for i in range(len(levels))]
    frame = prefs([("q", "u", "s", d, lv) for d, lv in zip(docs, levels, strict=True)])
    ideal = run_frame({"q": {d: lv for d, lv in zip(docs, levels, strict=True)}})
    row = evaluate_prefs(frame, ideal, ["prefs_simp", "prefs_pair", "prefs_avgjg"])
    possible = len(set(levels)) > 1
    assert row.means == {name: float(possible) for name in row.measures}


# --- judgment groups ---------------------------------------------------------------------


def jg_frame(judgments: dict[str, dict[str, dict[str, int]]]) -> pl.DataFrame:
    rows = [
        (q, jg, d, g)
        for q, groups in judgments.items()
        for jg, docs in groups.items()
        for d, g in docs.items()
    ]
    schema = {"qid": pl.String, "jg": pl.String, "docno": pl.String, "grade": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def test_judgment_group_values_are_averaged_over_groups():
    judgments = {"q": {"a": {"d1": 1, "d2": 0}, "b": {"d2": 1}}}
    result = evaluate_judgment_groups(jg_frame(judgments), run({"q": ["d1", "d2"]}), ["qrels_jg"])
    (row,) = result.per_topic.rows(named=True)
    assert row["map_avgjg"] == pytest.approx((1.0 + 1 / 2) / 2)
    assert row["P_avgjg_5"] == pytest.approx((1 / 5 + 1 / 5) / 2)
    assert row["Rprec_mult_avgjg_1.00"] == pytest.approx((1.0 + 0.0) / 2)


@st.composite
def qrels_and_run(draw):
    docs = [f"d{i}" for i in range(draw(st.integers(1, 12)))]
    qrels = {
        q: {
            d: draw(st.integers(-1, 3))
            for d in draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
        }
        for q in ("q1", "q2")
    }
    ranking = {
        q: {
            d: float(draw(st.integers(0, 4)))
            for d in draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
        }
        for q in ("q1", "q2")
    }
    return qrels, ranking


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=qrels_and_run(), version=st.sampled_from([9, 10]), depth=st.sampled_from([None, 3]))
def test_one_judgment_group_scores_as_plain_qrels(case, version, depth):
    qrels, ranking = case
    options = Options(trec_eval_version=version, depth=depth)
    plain = evaluate(qrels_frame(qrels), run_frame(ranking), ["map", "P.2,5", "Rprec"], options)
    groups = jg_frame({q: {"only": docs} for q, docs in qrels.items()})
    jg = evaluate_judgment_groups(
        groups, run_frame(ranking), ["map_avgjg", "P_avgjg.2,5", "Rprec_mult_avgjg.1.0"], options
    )
    for ours, theirs in [
        ("map_avgjg", "map"),
        ("P_avgjg_2", "P_2"),
        ("P_avgjg_5", "P_5"),
        ("Rprec_mult_avgjg_1.00", "Rprec"),
    ]:
        assert (
            jg.per_topic.get_column(ours).to_list() == plain.per_topic.get_column(theirs).to_list()
        )


# --- -J and -Z ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=qrels_and_run(), version=st.sampled_from([9, 10]))
def test_judged_only_equals_scoring_the_judged_documents_alone(case, version):
    qrels, ranking = case
    kept = {
        q: {d: s for d, s in docs.items() if qrels[q].get(d, -1) >= 0}
        for q, docs in ranking.items()
    }
    kept = {q: docs for q, docs in kept.items() if docs}
    specs = ["map", "P.1,3", "recip_rank", "ndcg", "ndcg_cut.3", "bpref", "num_ret", "Rprec"]
    with_j = evaluate(
        qrels_frame(qrels),
        run_frame(ranking),
        specs,
        Options(trec_eval_version=version, judged_only=True),
    )
    rows = {r.pop("qid"): r for r in with_j.per_topic.rows(named=True)}
    if kept:
        alone = evaluate(
            qrels_frame(qrels), run_frame(kept), specs, Options(trec_eval_version=version)
        )
        for row in alone.per_topic.rows(named=True):
            qid = row.pop("qid")
            assert rows[qid] == row
    for qid in set(rows) - set(kept):
        assert rows[qid]["num_ret"] == 0 and rows[qid]["map"] == 0.0


def test_zscores_follow_trec_eval_rules():
    zscores = pl.DataFrame(
        [("1", "map", 0.5, 0.25), ("1", "P_5", 0.2, 0.0), ("2", "P_5", 0.4, 0.0)],
        schema={"qid": pl.String, "measure": pl.String, "mean": pl.Float64, "stddev": pl.Float64},
        orient="row",
    )
    columns = {"map": np.array([0.75, 0.1, 0.3]), "P_5": np.array([0.2, 0.6, 0.0])}
    converted = convert_to_zscores(["1", "2", "3"], columns, zscores)
    assert converted["map"].tolist() == [
        (0.75 - 0.5) / 0.25,
        MISSING_ZSCORE_VALUE,
        MISSING_ZSCORE_VALUE,
    ]
    # stddev 0: 0 when the value is the mean, missing otherwise.
    assert converted["P_5"].tolist() == [0.0, MISSING_ZSCORE_VALUE, MISSING_ZSCORE_VALUE]
    kept = convert_to_zscores(["1", "2", "3"], columns, zscores, np.array([True, False, True]))
    assert kept["map"][1] == 0.1


def test_zscored_evaluation_averages_the_zscores_and_prints_them_with_z():
    from evaluation.measures import format_trec_eval

    zscores = pl.DataFrame(
        [("q", "map", 0.5, 0.5), ("q", "num_ret", 1.0, 2.0)],
        schema={"qid": pl.String, "measure": pl.String, "mean": pl.Float64, "stddev": pl.Float64},
        orient="row",
    )
    result = evaluate(
        qrels_frame({"q": {"a": 1}}), run({"q": ["a", "b"]}), ["map", "num_ret"], zscores=zscores
    )
    assert result.means == {"num_ret": 0.5, "map": 1.0}
    assert format_trec_eval(result, per_topic=True).splitlines() == [
        "Znum_ret               \tq\t0.5000",
        "Zmap                   \tq\t1.0000",
        "Znum_ret               \tall\t0.5000",
        "Zmap                   \tall\t1.0000",
    ]
    assert not math.isnan(result.means["map"])


def test_9_0_8_compares_levels_and_scores_as_c_floats():
    # 0.10000000001 and 0.1 are one float: no preference between a and b in 9.0.8, and
    # b's score ties a's, so docno order (a first) decides; 10.0 sees both differences.
    p = prefs(
        [("q", "u", "s", "a", 0.10000000001), ("q", "u", "s", "b", 0.1), ("q", "u", "s", "c", 0)]
    )
    ranking = run_frame({"q": {"b": 1.00000001, "a": 1.0, "c": 0.5}})
    specs = ["prefs_num_prefs_poss", "prefs_simp"]
    v9 = evaluate_prefs(p, ranking, specs, Options(trec_eval_version=9)).means
    v10 = evaluate_prefs(p, ranking, specs, Options(trec_eval_version=10)).means
    assert v9 == {"prefs_num_prefs_poss": 2, "prefs_simp": 1.0}  # trec_eval 9.0.8's output
    assert v10 == {"prefs_num_prefs_poss": 3, "prefs_simp": pytest.approx(2 / 3)}  # 10.0's


def test_rprec_mult_avgjg_takes_multiples_of_r_above_one_and_refuses_words():
    from evaluation.measures import parse_measures

    (measure,) = parse_measures(["Rprec_mult_avgjg.1.5,0.5"])
    assert measure.output_names == ["Rprec_mult_avgjg_0.50", "Rprec_mult_avgjg_1.50"]
    with pytest.raises(ValueError, match="'x' is not a number"):
        parse_measures(["Rprec_mult_avgjg.x"])
