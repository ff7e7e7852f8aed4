"""evaluation.measures against trec_eval: hand cases with the formula written out, the
surprising cases pinned, byte-exact trec_eval output, and hypothesis properties checked
against pytrec_eval (trec_eval 9.0.8's C code) and ir_measures (Judged@k) per topic to 1e-12.
"""

import math
from math import log2

import ir_measures
import numpy as np
import polars as pl
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.measures import (
    DEFAULT_MEASURES,
    Options,
    evaluate,
    format_trec_eval,
    parse_measures,
    qrels_frame,
    run_frame,
)
from evaluation.measures.judged_lookup import JudgedTable

TOLERANCE = 1e-12


def score(qrels, run, measures, **options) -> dict[str, dict[str, float]]:
    """Per-topic values as {qid: {output name: value}}."""
    result = evaluate(qrels_frame(qrels), run_frame(run), measures, Options(**options))
    return {row.pop("qid"): row for row in result.per_topic.iter_rows(named=True)}


def one_topic(qrels, run, measures, **options) -> dict[str, float]:
    return score({"q": qrels}, {"q": run}, measures, **options)["q"]


# --- formulas, written out -------------------------------------------------------------


def test_ndcg_follows_the_formula_with_the_ideal_from_all_judged_documents():
    # Ranking d2 (2), d3 (0), d1 (3); d4 (1) is judged but not retrieved.
    values = one_topic(
        {"d1": 3, "d2": 2, "d3": 0, "d4": 1},
        {"d2": 0.9, "d3": 0.8, "d1": 0.7},
        ["ndcg", "ndcg_cut.1,3"],
    )
    dcg3 = 2 / log2(2) + 0 / log2(3) + 3 / log2(4)
    assert values["ndcg_cut_1"] == pytest.approx((2 / log2(2)) / (3 / log2(2)), abs=TOLERANCE)
    assert values["ndcg_cut_3"] == pytest.approx(
        dcg3 / (3 / log2(2) + 2 / log2(3) + 1 / log2(4)), abs=TOLERANCE
    )
    assert values["ndcg"] == pytest.approx(
        dcg3 / (3 / log2(2) + 2 / log2(3) + 1 / log2(4)), abs=TOLERANCE
    )


def test_binary_measures_follow_their_formulas():
    # Relevant at ranks 2 and 4 of 5; a third relevant document is not retrieved (R = 3).
    qrels = {"a": 0, "b": 1, "c": 0, "d": 1, "z": 1}
    run = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}
    values = one_topic(
        qrels,
        run,
        ["map", "map_cut.2", "P.2,10", "recall.2,5", "Rprec", "recip_rank", "success.1,2"],
    )
    expected = {
        "map": (1 / 2 + 2 / 4) / 3,
        "map_cut_2": (1 / 2) / 3,
        "P_2": 1 / 2,
        "P_10": 2 / 10,  # P@k divides by k even when fewer documents are retrieved
        "recall_2": 1 / 3,
        "recall_5": 2 / 3,
        "Rprec": 1 / 3,  # one relevant document in the top R = 3
        "recip_rank": 1 / 2,
        "success_1": 0.0,
        "success_2": 1.0,
    }
    assert values == pytest.approx(expected, abs=TOLERANCE)


def test_bpref_counts_judged_nonrelevant_documents_ranked_above_each_relevant_one():
    # R = 2 relevant (b, d), N = 2 judged non-relevant (a, c); x is unjudged and ignored.
    values = one_topic(
        {"a": 0, "b": 1, "c": 0, "d": 1}, {"a": 5, "x": 4.5, "b": 4, "c": 3, "d": 2}, ["bpref"]
    )
    assert values["bpref"] == pytest.approx(
        ((1 - min(1, 2) / min(2, 2)) + (1 - min(2, 2) / min(2, 2))) / 2, abs=TOLERANCE
    )


def test_iprec_at_recall_turns_recall_into_a_document_count_differently_in_9_and_10():
    # R = 3, relevant at ranks 1, 4, 5: precisions 1/1, 2/4, 3/5. At recall 0.4, 9.0.8 asks
    # for (long)(0.4 * 3 + 0.9) = 2 relevant documents, 10.0 for lround(1.2) = 1.
    qrels = {"a": 1, "d": 1, "e": 1, "b": 0}
    run = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}
    v9 = one_topic(qrels, run, ["iprec_at_recall.0,0.4,1"], trec_eval_version=9)
    v10 = one_topic(qrels, run, ["iprec_at_recall.0,0.4,1"], trec_eval_version=10)
    assert v9 == pytest.approx(
        {
            "iprec_at_recall_0.00": 1.0,
            "iprec_at_recall_0.40": max(2 / 4, 3 / 5),
            "iprec_at_recall_1.00": 3 / 5,
        },
        abs=TOLERANCE,
    )
    assert v10["iprec_at_recall_0.40"] == pytest.approx(1.0, abs=TOLERANCE)


def test_gm_map_is_the_geometric_mean_of_average_precision_floored_at_0_00001():
    qrels = {"1": {"a": 1}, "2": {"a": 1, "b": 1}, "3": {"z": 1}}
    run = {"1": {"a": 1.0}, "2": {"x": 2.0, "a": 1.0}, "3": {"a": 1.0}}
    result = evaluate(qrels_frame(qrels), run_frame(run), ["map", "gm_map"])
    aps = [1.0, (1 / 2) / 2, 0.0]
    logs = [math.log(max(ap, 0.00001)) for ap in aps]
    assert result.per_topic["gm_map"].to_list() == pytest.approx(logs, abs=TOLERANCE)
    assert result.means["gm_map"] == pytest.approx(math.exp(sum(logs) / 3), abs=TOLERANCE)
    assert result.means["map"] == pytest.approx(sum(aps) / 3, abs=TOLERANCE)


def test_counts_are_summed_not_averaged():
    qrels = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"a": 1}}
    run = {"1": {"a": 1.0, "b": 0.5, "x": 0.1}, "2": {"y": 1.0}}
    result = evaluate(
        qrels_frame(qrels), run_frame(run), ["num_q", "num_ret", "num_rel", "num_rel_ret"]
    )
    assert result.means == {"num_q": 2, "num_ret": 4, "num_rel": 3, "num_rel_ret": 1}
    assert result.per_topic["num_rel"].to_list() == [2.0, 1.0]


def test_judged_is_the_share_of_the_top_k_found_in_the_qrels_with_any_grade():
    values = one_topic(
        {"a": 0, "b": -1, "c": 2},
        {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0},
        ["judged.2,3,10"],
    )
    # ir_measures' Judged@k divides by min(k, documents retrieved).
    assert values == pytest.approx(
        {"judged_2": 1 / 2, "judged_3": 2 / 3, "judged_10": 3 / 4}, abs=TOLERANCE
    )


# --- surprising cases ------------------------------------------------------------------


def test_documents_are_ordered_by_score_not_by_the_rank_column():
    qrels = qrels_frame({"q": {"a": 1}})
    run = pl.DataFrame(
        {"qid": ["q", "q"], "docno": ["a", "b"], "score": [1.0, 2.0], "rank": [1, 2]}
    )
    result = evaluate(qrels, run, ["recip_rank"])
    assert result.per_topic["recip_rank"].to_list() == [0.5]


def test_ties_are_broken_by_docno_descending_in_byte_order():
    # Equal scores: trec_eval ranks c, b, a ("B" < "a" in bytes, so B comes last).
    run = {"a": 1.0, "b": 1.0, "c": 1.0, "B": 1.0}
    assert one_topic({"a": 1}, run, ["recip_rank"])["recip_rank"] == 1 / 3
    assert one_topic({"B": 1}, run, ["recip_rank"])["recip_rank"] == 1 / 4


def test_scores_equal_in_float32_tie_in_9_but_not_in_10():
    qrels, run = {"a": 1}, {"a": 0.1000000001, "b": 0.1}
    assert one_topic(qrels, run, ["recip_rank"], trec_eval_version=9)["recip_rank"] == 0.5
    assert one_topic(qrels, run, ["recip_rank"], trec_eval_version=10)["recip_rank"] == 1.0


def test_negative_zero_ties_with_zero():
    assert one_topic({"a": 1}, {"a": 0.0, "b": -0.0}, ["recip_rank"])["recip_rank"] == 0.5


def test_negative_grades_gain_nothing_and_are_neither_relevant_nor_nonrelevant():
    values = one_topic(
        {"a": -1, "b": 1, "c": 0}, {"a": 3.0, "b": 2.0, "c": 1.0}, ["ndcg", "P.1", "bpref"]
    )
    assert values["ndcg"] == pytest.approx((1 / log2(3)) / (1 / log2(2)), abs=TOLERANCE)
    assert values["P_1"] == 0.0
    assert values["bpref"] == 1.0  # a is skipped, not counted as a non-relevant above b


def test_unjudged_documents_count_as_not_relevant():
    values = one_topic({"a": 2}, {"x": 2.0, "a": 1.0}, ["ndcg", "P.1", "map"])
    assert values == pytest.approx(
        {"ndcg": (2 / log2(3)) / (2 / log2(2)), "P_1": 0.0, "map": 1 / 2}, abs=TOLERANCE
    )


def test_topic_without_relevant_documents_scores_zero_and_still_counts():
    qrels = {"1": {"a": 0}, "2": {"b": 1}}
    run = {"1": {"a": 1.0}, "2": {"b": 1.0}}
    result = evaluate(qrels_frame(qrels), run_frame(run), ["ndcg", "map", "num_rel"])
    assert result.per_topic.row(0, named=True) == {
        "qid": "1",
        "ndcg": 0.0,
        "map": 0.0,
        "num_rel": 0.0,
    }
    assert result.means["ndcg"] == 0.5


def test_topic_judged_only_with_negative_grades_scores_zero_where_trec_eval_crashes():
    values = score(
        {"1": {"a": -1}, "2": {"b": 1}}, {"1": {"a": 1.0}, "2": {"b": 1.0}}, ["ndcg", "P.1"]
    )
    assert values["1"] == {"ndcg": 0.0, "P_1": 0.0}


def test_topics_missing_from_the_run_are_skipped_unless_complete():
    qrels = {"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}}
    run = {"1": {"a": 1.0}, "2": {"x": 1.0}}
    skipped = evaluate(qrels_frame(qrels), run_frame(run), ["P.1", "num_q", "num_rel"])
    assert skipped.per_topic["qid"].to_list() == ["1", "2"]
    assert skipped.means == {"num_q": 2, "num_rel": 2, "P_1": 0.5}

    for version in (9, 10):
        complete = evaluate(
            qrels_frame(qrels),
            run_frame(run),
            ["P.1", "num_q", "num_rel"],
            Options(complete=True, trec_eval_version=version),
        )
        assert complete.per_topic["qid"].to_list() == ["1", "2", "3"]
        assert complete.missing_topics == ("3",)
        assert complete.means == {"num_q": 3, "num_rel": 3, "P_1": 1 / 3}, (
            f"trec_eval {version}: with -c the summary num_rel counts the judgments with "
            "grade > 0 of every qrels topic (te_calc_avg_num_rel), topic 3 included"
        )


@pytest.mark.parametrize("version", [9, 10])
def test_complete_num_rel_summary_counts_every_positive_judgment_whatever_the_level(version):
    # What trec_eval 9.0.8 and 10.0 print for `-c -l 2 -m num_rel -m num_rel_ret`: the summary
    # num_rel goes back to the qrels and counts grades > 0 (not >= -l), the per-topic values
    # and num_rel_ret follow -l.
    qrels = {"1": {"a": 1, "b": 2, "n": -1, "z": 0}, "2": {"c": 3}, "3": {"d": 1, "e": 2}}
    run = {"1": {"a": 2.0, "b": 1.0}, "2": {"x": 1.0}}
    result = evaluate(
        qrels_frame(qrels),
        run_frame(run),
        ["num_rel", "num_rel_ret"],
        Options(complete=True, relevance_level=2, trec_eval_version=version),
    )
    assert result.means == {"num_rel": 5, "num_rel_ret": 1}
    assert result.per_topic["num_rel"].to_list()[:2] == [1, 1]


def test_topics_only_in_the_run_are_ignored():
    values = score({"1": {"a": 1}}, {"1": {"a": 1.0}, "2": {"a": 1.0}}, ["P.1"])
    assert values == {"1": {"P_1": 1.0}}


def test_no_common_topic_is_an_error_like_in_trec_eval():
    with pytest.raises(ValueError, match="no topic has both"):
        score({"1": {"a": 1}}, {"2": {"a": 1.0}}, ["P.1"])


def test_depth_keeps_the_first_documents_in_score_order():
    run = {"a": 1.0, "b": 3.0, "c": 2.0}  # order b, c, a
    values = one_topic({"a": 1, "c": 1}, run, ["num_ret", "num_rel_ret", "P.3"], depth=2)
    assert values == {"num_ret": 2.0, "num_rel_ret": 1.0, "P_3": 1 / 3}


def test_relevance_level_applies_to_binary_measures_but_not_to_ndcg():
    qrels, run = {"a": 1, "b": 2}, {"a": 2.0, "b": 1.0}
    level1 = one_topic(qrels, run, ["P.1", "num_rel", "ndcg"])
    level2 = one_topic(qrels, run, ["P.1", "num_rel", "ndcg"], relevance_level=2)
    assert (level1["P_1"], level1["num_rel"]) == (1.0, 2.0)
    assert (level2["P_1"], level2["num_rel"]) == (0.0, 1.0)
    assert level1["ndcg"] == level2["ndcg"]


def test_exponential_gain_is_two_to_the_grade_minus_one_and_leaves_binary_measures_alone():
    qrels, run = {"a": 1, "b": 3}, {"a": 2.0, "b": 1.0}
    linear = one_topic(qrels, run, ["ndcg", "P.1", "map"], relevance_level=2)
    exp = one_topic(qrels, run, ["ndcg", "P.1", "map"], relevance_level=2, gain="exp")
    assert exp["ndcg"] == pytest.approx(
        (1 / log2(2) + 7 / log2(3)) / (7 / log2(2) + 1 / log2(3)), abs=TOLERANCE
    )
    assert (exp["P_1"], exp["map"]) == (linear["P_1"], linear["map"])


def test_ideal_ranking_scores_one():
    values = one_topic(
        {"a": 3, "b": 2, "c": 2, "d": 0}, {"a": 4.0, "c": 3.0, "b": 2.0}, ["ndcg", "ndcg_cut.2"]
    )
    assert values == {"ndcg": 1.0, "ndcg_cut_2": 1.0}


# --- measure names ---------------------------------------------------------------------


def test_measures_come_out_in_trec_eval_table_order_with_sorted_cutoffs():
    result = evaluate(
        qrels_frame({"q": {"a": 1}}),
        run_frame({"q": {"a": 1.0}}),
        ["judged.5", "ndcg_cut.20,5", "P.10,5", "map", "num_q"],
    )
    assert result.measures == [
        "num_q",
        "map",
        "P_5",
        "P_10",
        "ndcg_cut_5",
        "ndcg_cut_20",
        "judged_5",
    ]
    assert result.per_topic.columns == ["qid", *result.measures]


def test_default_measures_are_trec_eval_official_set():
    names = [name for m in parse_measures(DEFAULT_MEASURES) for name in m.output_names]
    assert names == [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank",
        *[f"iprec_at_recall_{p / 10:.2f}" for p in range(11)],
        *[f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)],
    ]  # fmt: skip
    assert parse_measures(["official"]) == parse_measures(DEFAULT_MEASURES)


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("success", ["success_1", "success_5", "success_10"]),
        ("ndcg_cut", [f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]),
        ("iprec_at_recall.0.25,.5", ["iprec_at_recall_0.25", "iprec_at_recall_0.50"]),
        ("judged.10", ["judged_10"]),
    ],
)
def test_cutoffs_default_like_trec_eval_and_parse_its_syntax(spec, names):
    (measure,) = parse_measures([spec])
    assert measure.output_names == names


def test_parameters_in_trec_eval_syntax_and_their_printed_names():
    # trec_eval's own `make quicktest` line: atol reads 23.4 as 23; cutoffs are sorted and
    # printed "%3.2f"; lists and pairs keep the text given in the name.
    specs = ["Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75"]
    specs += ["ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "relstring.20", "set_F.0.5"]
    names = {m.name: m.output_names for m in parse_measures(specs)}
    assert names == {
        "Rprec_mult": ["Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"],
        "utility": ["utility_2,-1,0,0"],
        "11pt_avg": ["11pt_avg_.25,.5,.75"],
        "ndcg": ["ndcg_1=3,2=9,4=4.5"],
        "ndcg_cut": ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"],
        "relstring": ["relstring_20"],
        "set_F": ["set_F_0.5"],
    }
    assert parse_measures(["ndcg.1=3,2=9,4=4.5"])[0].level_gains == {1: 3.0, 2: 9.0, 4: 4.5}


def test_all_trec_is_trec_eval_s_list_for_each_version():
    ten = [m.name for m in parse_measures(["all_trec"])]
    nine = [m.name for m in parse_measures(["all_trec"], trec_eval_version=9)]
    assert len([n for n in ten if n not in ("runid", "relstring")]) == 35
    assert [n for n in ten if n not in nine] == ["rbp", "rbp_resid", "unj"]
    assert "yaap" not in ten and "judged" not in ten
    with pytest.raises(ValueError, match=r"9\.0\.8 has no measure 'rbp'"):
        parse_measures(["rbp.p=0.8"], trec_eval_version=9)


def test_first_cutoff_list_given_for_a_measure_wins_as_in_trec_eval():
    assert [m.output_names for m in parse_measures(["P", "P.5", "P.10"])] == [["P_5"]]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ndcg_cut.10,10", "duplicate cutoff"),
        ("P.0", "not a positive integer"),
        ("P.-5", "not a positive integer"),
        ("P.0.5", "not a positive integer"),
        ("P.1e2", "not a positive integer"),
        ("utility.1,2,3", "utility takes 4 coefficients"),
        ("utility.1,x,3,4", "'x' is not a number"),
        ("ndcg.1=3,2", "not a pair"),
        ("ndcg.x=3", "not a pair"),
        ("set_F.1,2", "set_F takes one number"),
        ("Rprec_mult.0.5,.5", "duplicate cutoff"),
        ("P.", "not a positive integer"),
        ("P.5,,10", "not a positive integer"),
        ("iprec_at_recall.1.5", "not a number in"),
        ("map.10", "takes no cutoffs"),
        ("ndcg@10", "unknown measure"),
        ("NDCG", "unknown measure"),
        ("official.5", "takes no cutoffs"),
    ],
)
def test_bad_measures_raise_value_error_saying_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_measures([spec])


def test_evaluate_rejects_bad_frames_and_options():
    qrels, run = qrels_frame({"q": {"a": 1}}), run_frame({"q": {"a": 1.0}})
    with pytest.raises(ValueError, match="column 'score' is missing"):
        evaluate(qrels, run.drop("score"), ["map"])
    with pytest.raises(ValueError, match="column 'grade' must be an integer"):
        evaluate(qrels.with_columns(pl.col("grade").cast(pl.Float64)), run, ["map"])
    with pytest.raises(ValueError, match="NaN"):
        evaluate(qrels, run.with_columns(score=float("nan")), ["map"])
    with pytest.raises(ValueError, match="judges document 'a' twice"):
        evaluate(pl.concat([qrels, qrels]), run, ["map"])
    with pytest.raises(ValueError, match="relevance_level"):
        Options(relevance_level=0)
    with pytest.raises(ValueError, match="depth"):
        Options(depth=0)
    with pytest.raises(ValueError, match="gain"):
        Options(gain="log")


# --- trec_eval's output ----------------------------------------------------------------

FORMAT_QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}, "q3": {"d9": 1}}
FORMAT_RUN = {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d3": 1.0, "d4": 0.2}, "qx": {"d1": 1.0}}
FORMAT_MEASURES = ["num_ret", "map", "P.2,1", "num_q", "runid", "gm_map"]


def format_case(per_topic, **options) -> str:
    result = evaluate(
        qrels_frame(FORMAT_QRELS), run_frame(FORMAT_RUN), FORMAT_MEASURES, Options(**options)
    )
    return format_trec_eval(result, per_topic=per_topic, runid="myrun")


def test_trec_eval_output_is_byte_identical_per_topic_then_all():
    assert format_case(per_topic=True) == (
        "num_ret               \tq1\t2\n"
        "map                   \tq1\t0.5000\n"
        "P_1                   \tq1\t0.0000\n"
        "P_2                   \tq1\t0.5000\n"
        "num_ret               \tq2\t2\n"
        "map                   \tq2\t1.0000\n"
        "P_1                   \tq2\t1.0000\n"
        "P_2                   \tq2\t0.5000\n"
        "runid                 \tall\tmyrun\n"
        "num_q                 \tall\t2\n"
        "num_ret               \tall\t4\n"
        "map                   \tall\t0.7500\n"
        "gm_map                \tall\t0.7071\n"
        "P_1                   \tall\t0.5000\n"
        "P_2                   \tall\t0.5000\n"
    )


def test_trec_eval_output_with_complete_lists_missing_topics_only_in_10():
    summary_9 = (
        "runid                 \tall\tmyrun\n"
        "num_q                 \tall\t3\n"
        "num_ret               \tall\t4\n"
        "map                   \tall\t0.5000\n"
        "gm_map                \tall\t0.0171\n"
        "P_1                   \tall\t0.3333\n"
        "P_2                   \tall\t0.3333\n"
    )
    q3_lines = (
        "num_ret               \tq3\t0\n"
        "map                   \tq3\t0.0000\n"
        "P_1                   \tq3\t0.0000\n"
        "P_2                   \tq3\t0.0000\n"
    )
    assert math.exp((math.log(0.5) + math.log(1.0) + math.log(0.00001)) / 3) == pytest.approx(
        0.0171, abs=5e-5
    )
    v9 = format_case(per_topic=True, complete=True)
    v10 = format_case(per_topic=True, complete=True, trec_eval_version=10)
    assert v9.endswith(summary_9) and "\tq3\t" not in v9
    assert v10.endswith(q3_lines + summary_9)
    assert format_case(per_topic=False, complete=True) == summary_9


def test_names_are_padded_to_22_columns_and_counts_print_as_integers():
    result = evaluate(
        qrels_frame({"q": {"a": 1}}),
        run_frame({"q": {"a": 1.0}}),
        ["num_rel_ret", "iprec_at_recall.0.5"],
    )
    assert format_trec_eval(result) == (
        "num_rel_ret           \tall\t1\niprec_at_recall_0.50  \tall\t1.0000\n"
    )


# --- properties against pytrec_eval ----------------------------------------------------

# Byte order: "1" < "10" < "2" < "Q" < "q".
TOPICS = ["1", "2", "10", "q", "Q"]
DOCS = ["a", "b", "c", "B", "d1", "d10", "d2", "e"]
UNJUDGED = [f"u{i}" for i in range(1, 13)]
# Scores that tie, or tie only in float32 (trec_eval 9.0.8 ranks by float32 scores).
NEAR_TIES = [
    0.0, -0.0, 0.1, 0.1000000001, 1.0, 1.0 + 2**-30, 2.0, -1.5, 3.25, 1e30, 1e30 * (1 + 2**-30),
]  # fmt: skip
SCORES = st.one_of(
    st.sampled_from(NEAR_TIES),
    st.floats(min_value=-100, max_value=100, allow_nan=False, allow_subnormal=False),
)
PYTREC_MEASURES = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P.1,2,3,5,10", "recall.1,2,5,10", "ndcg",
    "ndcg_cut.1,2,3,5,10", "map_cut.1,3,10", "success.1,2,5",
]  # fmt: skip
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def collections(scores=SCORES, run_size=(1, 10)):
    """qrels and run mappings with ties, near-ties, negative grades, unjudged documents,
    topics only in the qrels and topics only in the run; at least one topic in both.

    Every qrels topic has a grade >= 0: trec_eval (so pytrec_eval) crashes on a topic judged
    only with negative grades.

    The strategies are made once, here, rather than at every draw: Hypothesis checks a new
    strategy when it is first drawn from, which cost more than the drawing (the same seed
    draws the same collections either way)."""
    topic_lists = st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True)
    role = st.sampled_from(["both", "both", "both", "qrels", "run"])
    judgments = st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1, max_size=7)
    ranked = st.dictionaries(
        st.sampled_from(DOCS + UNJUDGED), scores, min_size=run_size[0], max_size=run_size[1]
    )

    @st.composite
    def collection(draw):
        topics = draw(topic_lists)
        roles = [draw(role) for _ in topics]
        roles[0] = "both"
        qrels, run = {}, {}
        for topic, topic_role in zip(topics, roles, strict=True):
            if topic_role != "run":
                judged = draw(judgments)
                if max(judged.values()) < 0:
                    judged[next(iter(judged))] = 0
                qrels[topic] = judged
            if topic_role != "qrels":
                run[topic] = draw(ranked)
        return qrels, run

    return collection()


def pytrec(qrels, run, measures, relevance_level=1):
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, set(measures), relevance_level=relevance_level
    )
    return evaluator.evaluate(run)


def assert_same_per_topic(ours: dict, reference: dict, skip=()):
    assert sorted(ours) == sorted(reference), "the scored topics differ"
    for qid, expected in reference.items():
        for name, value in expected.items():
            if name in skip or name == "runid":
                continue
            assert ours[qid][name] == pytest.approx(value, abs=TOLERANCE), (
                f"topic {qid!r}, {name}: ours {ours[qid][name]!r}, pytrec_eval {value!r}"
            )


def trec_eval_order(docs: dict[str, float], version: int = 9) -> list[str]:
    """Docnos by score descending (float32 in 9.0.8), then docno descending in bytes."""
    cast = np.float32 if version == 9 else float
    return sorted(docs, key=lambda d: (cast(docs[d]) + cast(0), d.encode()), reverse=True)


def rescored(run, version=9, depth=None) -> dict:
    """The run in trec_eval's order with distinct descending integer scores, cut at depth."""
    out = {}
    for qid, docs in run.items():
        order = trec_eval_order(docs, version)[:depth]
        out[qid] = {docno: float(len(order) - i) for i, docno in enumerate(order)}
    return out


@PROPERTY
@given(collections(), st.integers(1, 3))
def test_every_measure_matches_pytrec_eval(collection, level):
    qrels, run = collection
    ours = score(qrels, run, PYTREC_MEASURES, relevance_level=level)
    assert_same_per_topic(ours, pytrec(qrels, run, PYTREC_MEASURES, level))


@PROPERTY
@given(collections(), st.integers(1, 3))
def test_exponential_gain_matches_pytrec_eval_on_transformed_grades(collection, level):
    qrels, run = collection
    transformed = {
        qid: {d: 2**g - 1 if g >= 0 else g for d, g in docs.items()} for qid, docs in qrels.items()
    }
    ours = score(qrels, run, PYTREC_MEASURES, relevance_level=level, gain="exp")
    assert_same_per_topic(ours, pytrec(transformed, run, PYTREC_MEASURES, 2**level - 1))


@PROPERTY
@given(collections(), st.integers(1, 6))
def test_depth_matches_pytrec_eval_on_the_truncated_run(collection, depth):
    qrels, run = collection
    truncated = {
        qid: {d: run[qid][d] for d in trec_eval_order(docs)[:depth]} for qid, docs in run.items()
    }
    ours = score(qrels, run, PYTREC_MEASURES, depth=depth)
    assert_same_per_topic(ours, pytrec(qrels, truncated, PYTREC_MEASURES))


@PROPERTY
@given(collections())
def test_version_10_ranks_by_double_scores(collection):
    qrels, run = collection
    ours = score(qrels, run, PYTREC_MEASURES, trec_eval_version=10)
    reference = pytrec(qrels, rescored(run, version=10), PYTREC_MEASURES)
    # 10.0 also turns recall into a document count with lround (tested by hand above).
    skip = {name for qid in reference for name in reference[qid] if name.startswith("iprec")}
    assert_same_per_topic(ours, reference, skip=skip)


def run_rows_in(order: str, run: dict, version: int, random) -> pl.DataFrame:
    """The run's lines in trec_eval's order; grouped by topic in reverse topic order with
    each topic ranked; grouped by topic but not ranked; each topic split in two blocks, all
    first halves before all second halves; or shuffled: the ways ranking.py reads a run."""
    rows = [(qid, docno, score) for qid, docs in run.items() for docno, score in docs.items()]
    if order == "shuffled":
        random.shuffle(rows)
    elif order == "grouped unranked":
        random.shuffle(rows)
        rows.sort(key=lambda row: row[0].encode())
    elif order == "topics split":
        halves = ([], [])
        for qid, docs in run.items():
            items = list(docs.items())
            random.shuffle(items)
            for index, (docno, score) in enumerate(items):
                halves[2 * index >= len(items)].append((qid, docno, score))
        rows = halves[0] + halves[1]
    else:
        cast = np.float32 if version == 9 else float
        rows.sort(key=lambda row: row[1].encode(), reverse=True)
        rows.sort(key=lambda row: cast(row[2]) + cast(0), reverse=True)
        rows.sort(key=lambda row: row[0].encode(), reverse=order == "topics reversed")
    return pl.DataFrame(rows, schema=run_frame({}).schema, orient="row")


@PROPERTY
@given(
    # At least 8 lines per block on average, or the lines are not read as blocks.
    collections(run_size=(16, 20)),
    st.sampled_from(
        ["trec_eval", "topics reversed", "grouped unranked", "topics split", "shuffled"]
    ),
    st.sampled_from([9, 10]),
    st.randoms(use_true_random=False),
)
def test_every_order_of_run_lines_gives_pytrec_eval_numbers(collection, order, version, random):
    qrels, run = collection
    result = evaluate(
        qrels_frame(qrels),
        run_rows_in(order, run, version, random),
        PYTREC_MEASURES,
        Options(trec_eval_version=version),
    )
    ours = {row.pop("qid"): row for row in result.per_topic.iter_rows(named=True)}
    reference = pytrec(qrels, run if version == 9 else rescored(run, 10), PYTREC_MEASURES)
    iprec = {name for name in result.measures if name.startswith("iprec")}
    assert_same_per_topic(ours, reference, skip=iprec if version == 10 else ())


@PROPERTY
@given(collections(), st.sampled_from([9, 10]))
def test_complete_scores_missing_topics_zero_and_averages_over_all_judged_topics(
    collection, version
):
    qrels, run = collection
    result = evaluate(
        qrels_frame(qrels),
        run_frame(run),
        PYTREC_MEASURES,
        Options(complete=True, trec_eval_version=version),
    )
    missing = sorted(set(qrels) - set(run))
    assert list(result.missing_topics) == missing
    assert result.per_topic["qid"].to_list() == sorted(qrels, key=str.encode)
    # 10.0 scores a missing topic against one unjudged document, then reports num_ret 0.
    bogus = {qid: {"ceci_nest_pas_un_docno": 1.0} for qid in missing}
    ranked = run if version == 9 else rescored(run, version=10)
    reference = pytrec(qrels, {**ranked, **bogus}, PYTREC_MEASURES)
    ours = {row.pop("qid"): row for row in result.per_topic.iter_rows(named=True)}
    for qid in missing:
        reference[qid]["num_ret"] = 0.0
        if version == 9:
            reference[qid]["num_rel"] = 0.0  # 9.0.8 never evaluates it
    # pytrec_eval's iprec_at_recall is 9.0.8's (see test_version_10_ranks_by_double_scores).
    iprec = {name for name in ours[next(iter(ours))] if name.startswith("iprec")}
    assert_same_per_topic(ours, reference, skip=iprec if version == 10 else ())
    evaluated = [qid for qid in sorted(qrels, key=str.encode) if qid not in missing]
    n = len(qrels)
    for name in ("map", "P_5", "ndcg", "bpref", "recall_10"):
        total = sum(reference[qid][name] for qid in evaluated)
        assert result.means[name] == pytest.approx(total / n, abs=TOLERANCE), name
    assert result.means["num_q"] == n


@PROPERTY
@given(
    collections(),
    st.lists(st.integers(1, 12), min_size=1, max_size=4, unique=True),
    st.booleans(),
    st.sampled_from([9, 10]),
)
def test_judged_matches_ir_measures(collection, cutoffs, tie_free, version):
    """judged@k ranks the run as ir_measures' judged provider does (ties by docno
    ascending, scores as doubles), whatever the trec_eval version, ties or not."""
    qrels, run = collection
    if tie_free:
        run = rescored(run, version)
    spec = "judged." + ",".join(map(str, cutoffs))
    ours = score(qrels, run, [spec], trec_eval_version=version)
    measures = [ir_measures.Judged @ k for k in cutoffs]
    reference: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(measures, qrels, run):
        # ir_measures also reports judged topics absent from the run (as 0, like -c).
        if metric.query_id in run:
            name = f"judged_{metric.measure['cutoff']}"
            reference.setdefault(metric.query_id, {})[name] = metric.value
    assert_same_per_topic(ours, reference)


@pytest.mark.parametrize(("n_topics", "n_docs"), [(150, 40), (3, 3000)])
def test_larger_runs_match_pytrec_eval_with_default_cutoffs_and_trec_eval_means(n_topics, n_docs):
    """Many topics (running sums advance across topics at once) and deep rankings (one topic
    at a time), every default cutoff, and the "all" values added up in trec_eval's order."""
    rng = np.random.default_rng(n_topics)
    qrels, run = {}, {}
    for _ in range(n_topics):
        qid = str(rng.integers(0, 10**6))
        docs = [f"D{n}" for n in rng.integers(0, 3 * n_docs, n_docs)]
        run[qid] = dict(zip(docs, rng.normal(0, 1, n_docs).round(2).tolist(), strict=True))
        judged = rng.choice(sorted(set(docs)), size=n_docs // 3, replace=False)
        qrels[qid] = {
            str(d): int(g) for d, g in zip(judged, rng.integers(-1, 4, judged.size), strict=True)
        }
        qrels[qid]["unretrieved"] = 2
    measures = [m for m in PYTREC_MEASURES if "." not in m]
    measures += ["P", "recall", "ndcg_cut", "map_cut", "success"]
    result = evaluate(qrels_frame(qrels), run_frame(run), measures)
    ours = {row.pop("qid"): row for row in result.per_topic.iter_rows(named=True)}
    reference = pytrec(qrels, run, measures)
    assert_same_per_topic(ours, reference)

    order = sorted(reference, key=str.encode)
    for name in result.measures:
        total = 0.0
        for qid in order:  # trec_eval's accumulation: one topic after another
            total += reference[qid][name]
        if name == "gm_map":
            expected = math.exp(total / len(order))
        elif name.startswith("num_"):
            expected = len(order) if name == "num_q" else total
        else:
            expected = total / len(order)
        assert result.means[name] == expected, f"{name}: the mean is not trec_eval's to the bit"


def test_judged_lookup_matches_lines_whose_slot_several_judgments_share():
    # Three judgments of topic 0 get a 32-slot region: hashes 5 and 37 share slot 5.
    topic = np.array([0, 0, 0, 1])
    hashes = np.array([5, 37, 7, 5], dtype=np.uint64)
    table = JudgedTable(topic, hashes, n_topics=2)
    line_topic = np.array([0, 0, 0, 0, 1, 1, 0])
    line_hash = np.array([5, 37, 69, 7, 5, 13, 6], dtype=np.uint64)
    line, judgment = table.lookup_hashes(line_topic, [line_hash[:3], line_hash[3:]])
    assert line.tolist() == [0, 1, 3, 4], "lines matched to the wrong judgments, or missed"
    assert judgment.tolist() == [0, 1, 2, 3]


# --- invariants --------------------------------------------------------------------------

# Multiples of 1/8 below 8 stay exact in float32 after adding 1024.
DYADIC = st.integers(-64, 64).map(lambda n: n / 8)


@PROPERTY
@given(collections())
def test_ndcg_lies_between_zero_and_one(collection):
    qrels, run = collection
    for values in score(qrels, run, ["ndcg", "ndcg_cut.1,3,10"]).values():
        assert all(0.0 <= v <= 1.0 for v in values.values()), values


@PROPERTY
@given(collections(), st.sampled_from(["linear", "exp"]))
def test_the_ideal_ranking_scores_one(collection, gain):
    qrels, _ = collection
    ideal = {}
    for qid, docs in qrels.items():
        positive = sorted((d for d in docs if docs[d] > 0), key=lambda d: -docs[d])
        if positive:
            ideal[qid] = {d: float(len(positive) - i) for i, d in enumerate(positive)}
    if ideal:
        for qid, values in score(qrels, ideal, ["ndcg", "ndcg_cut.1,2,5"], gain=gain).items():
            assert values == {
                "ndcg": 1.0,
                "ndcg_cut_1": 1.0,
                "ndcg_cut_2": 1.0,
                "ndcg_cut_5": 1.0,
            }, qid


@PROPERTY
@given(collections(scores=DYADIC), st.sampled_from([9, 10]))
def test_adding_a_constant_to_every_score_changes_nothing(collection, version):
    qrels, run = collection
    shifted = {q: {d: s + 1024 for d, s in docs.items()} for q, docs in run.items()}
    measures = [*PYTREC_MEASURES, "judged.3"]
    assert score(qrels, run, measures, trec_eval_version=version) == score(
        qrels, shifted, measures, trec_eval_version=version
    )


@PROPERTY
@given(collections(), st.randoms(use_true_random=False))
def test_the_order_of_input_rows_changes_nothing(collection, random):
    qrels, run = collection
    qrels_rows, run_rows = qrels_frame(qrels), run_frame(run)
    shuffled_qrels = qrels_rows[random.sample(range(qrels_rows.height), qrels_rows.height)]
    shuffled_run = run_rows[random.sample(range(run_rows.height), run_rows.height)]
    measures = [*PYTREC_MEASURES, "judged.3"]
    before = evaluate(qrels_rows, run_rows, measures)
    after = evaluate(shuffled_qrels, shuffled_run, measures)
    assert before.per_topic.equals(after.per_topic)
    assert before.means == after.means


def _unjudged_sums_one_topic_at_a_time(powers, num_ret, judged):
    """m_rbp_resid.c's loop, topic by topic: the powers of the unjudged ranks in rank order."""
    total = np.zeros(num_ret.size)
    for topic in np.flatnonzero(num_ret > judged.count):
        unjudged = np.ones(num_ret[topic], dtype=bool)
        start = judged.start[topic]
        unjudged[judged.rank[start : start + judged.count[topic]] - 1] = False
        for power in powers[: num_ret[topic]][unjudged]:
            total[topic] += power
    return total


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.sets(st.integers(1, 40), max_size=12)),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from([0.9, 0.37, 1.0, -0.5, 1e-200, 3.0]),
    st.sampled_from([1, 7, 64, 1 << 21]),
)
def test_rbp_resid_sums_match_trec_evals_loop_bit_for_bit(topics, p, cells):
    # Any block size (down to one cell, a topic a block) gives the loop's sums, also for
    # values of p trec_eval accepts but RBP does not mean (negative, above 1, underflowing).
    from evaluation.measures import graded
    from evaluation.measures.sequences import Events

    num_ret = np.array([n for n, _ in topics], dtype=np.int64)
    judged_topic = [t for t, (n, ranks) in enumerate(topics) for r in sorted(ranks) if r <= n]
    judged_rank = [r for n, ranks in topics for r in sorted(ranks) if r <= n]
    judged = Events(
        np.array(judged_topic, dtype=np.int64), np.array(judged_rank, dtype=np.int64), len(topics)
    )
    powers = graded.GradedMeasures._powers(p, int(num_ret.max()))
    saved, graded._CELLS = graded._CELLS, cells
    try:
        got = graded.unjudged_sums(powers, num_ret, judged)
    finally:
        graded._CELLS = saved
    expected = _unjudged_sums_one_topic_at_a_time(powers, num_ret, judged)
    assert got.tobytes() == expected.tobytes(), (got, expected)
