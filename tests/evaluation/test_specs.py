"""evaluation.measures.specs: the one reader of scoring options that the command line, the
dashboards' form, the API's serializers and the tasks share, its messages, the dashboards'
canonical measure list and the stored evaluations' key."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.measures import Options, evaluate, output_names, qrels_frame, run_frame, specs
from evaluation.measures.specs import MESSAGES, OptionsError, read_scoring_options

DASHBOARD = ("ndcg_cut.1,3,5,10,20,100", "P.5,10", "map", "recip_rank", "judged.10")


def test_defaults_are_trec_eval_defaults():
    chosen = read_scoring_options()
    assert chosen.options == Options()
    assert chosen.measures[:2] == ("runid", "num_q")  # trec_eval's official set


@pytest.mark.parametrize(
    ("raw", "typed"),
    [
        ({"gain": "exp", "relevance_level": "2", "complete": "on", "depth": "100"}, True),
        ({"gain": "exp", "relevance_level": 2, "complete": True, "depth": 100}, True),
        ({"gain": " exp ", "relevance_level": " 2", "complete": "true", "depth": "100"}, True),
    ],
)
def test_text_and_typed_values_read_alike(raw, typed):
    chosen = read_scoring_options(measures=["nDCG@10"], trec_eval_version="10", **raw)
    assert chosen.options == Options(
        relevance_level=2, gain="exp", complete=True, depth=100, trec_eval_version=10
    )


@pytest.mark.parametrize("empty", [None, "", "  "])
def test_empty_values_mean_the_default(empty):
    chosen = read_scoring_options(
        measures=[empty or ""], gain=empty, relevance_level=empty, depth=empty,
        trec_eval_version=empty, default_measures=("map",),
    )  # fmt: skip
    assert chosen == specs.ScoringOptions(("map",), Options())


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("gain", "log", "'log'"),
        ("gain", 2, "2"),
        ("relevance_level", "0", "'0'"),
        ("relevance_level", 32768, "32768"),
        ("relevance_level", "two", "'two'"),
        ("relevance_level", True, "True"),
        ("relevance_level", 1.5, "1.5"),
        ("depth", "0", "'0'"),
        ("depth", "1e3", "'1e3'"),
        ("trec_eval_version", "8", "'8'"),
        ("trec_eval_version", 11, "11"),
        ("complete", "maybe", "'maybe'"),
        ("complete", 2, "2"),
    ],
)
def test_each_bad_option_is_refused_with_its_message(field, value, shown):
    with pytest.raises(OptionsError) as raised:
        read_scoring_options(**{field: value})
    assert raised.value.field == field
    assert str(raised.value) == MESSAGES[field].format(value=shown)


def test_bad_measures_are_refused_with_the_parsers_words():
    with pytest.raises(OptionsError) as raised:
        read_scoring_options(measures=["nDCG@10", "P@x"])
    assert raised.value.field == "measures"
    assert str(raised.value) == "'P@x': the cutoff 'x' is not a whole number >= 1"
    with pytest.raises(OptionsError, match="at most 50 measures"):
        read_scoring_options(measures=[f"P@{k}" for k in range(1, 52)])
    with pytest.raises(OptionsError) as raised:
        read_scoring_options(measures=[], default_measures=())
    assert str(raised.value) == MESSAGES["no_measures"]


def test_task_params_read_back_and_leave_default_options_out():
    chosen = read_scoring_options(measures=["nDCG@10"], gain="exp", relevance_level="2")
    params = chosen.params()
    assert params == {
        "measures": ["nDCG@10"],
        "gain": "exp",
        "relevance_level": 2,
        "complete": False,
    }
    assert read_scoring_options(**params) == chosen
    deep = read_scoring_options(measures=["map"], depth=5, trec_eval_version=10)
    assert read_scoring_options(**deep.params()) == deep


def test_keys_of_evaluations_stored_before_are_unchanged():
    # Computed by the key function before this module existed (sha256 of the sorted JSON of
    # engine version, measures as given and every Options field).
    assert specs.options_key(DASHBOARD, Options(), "1") == (
        "2e523d4b31f0889348e8fe96654ee3ecf6502d8963bdbb7fc1b0db5d934f767b"
    )
    options = Options(gain="exp", relevance_level=2, complete=True, depth=100, trec_eval_version=10)
    assert specs.options_key(["ndcg_cut.10", "map"], options, "1") == (
        "c5c82922080762d722ac179b4a08f7a1eec8ac3084ecc41381ca58be9e34f8cf"
    )


def test_ir_measures_names_of_trec_eval_measures_find_the_same_stored_evaluations():
    ir_names = ["nDCG@1", "nDCG@3", "nDCG@5", "nDCG@10", "nDCG@20", "nDCG@100", "P@5"]
    ir_names += ["P@10", "AP", "RR", "Judged@10"]
    assert specs.canonical_measures(reversed(ir_names)) == DASHBOARD
    assert specs.canonical_measures(DASHBOARD) == DASHBOARD
    mixed = ["P.10", "ndcg_cut.10", "nDCG@5", "map", "P(rel=1)@5"]
    assert specs.canonical_measures(mixed) == ("ndcg_cut.5,10", "P.5,10", "map")


def test_measures_with_their_own_options_stay_ir_measures_names_in_canonical_lists():
    canonical = specs.canonical_measures(["ERR@20", "P(rel=2)@5", "nDCG@10", "RR@10"])
    assert canonical == ("ndcg_cut.10", "ERR@20", "P(rel=2)@5", "RR@10")
    # With -l 2, P(rel=2)@5 is P@5 at the request's level.
    at_two = specs.canonical_measures(["P(rel=2)@5"], Options(relevance_level=2))
    assert at_two == ("P.5",)


@pytest.mark.parametrize("spec", ["num_ret", "gm_map", "NumRet(rel=2)", "NumQ", "NumRel"])
def test_dashboards_take_means_only(spec):
    with pytest.raises(OptionsError) as raised:
        specs.canonical_measures([spec])
    assert "dashboards show means over topics" in str(raised.value)


NAMES = ["P.5", "P@10", "ndcg_cut.10", "nDCG@10", "nDCG", "map", "AP(rel=2)", "ERR@5"]
NAMES += ["RR@3", "RBP(rel=1)", "P(judged_only=True)@5", "nDCG(gains={1:3})@5", "official"]
NAMES += ["NumRet(rel=2)", "recip_rank", "Judged@5", "R@2"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6), st.integers(1, 2))
def test_output_names_are_the_names_evaluate_gives(names, level):
    qrels = qrels_frame({"1": {"a": 2, "b": 0, "c": 1}, "2": {"d": 1}})
    run = run_frame({"1": {"a": 1.0, "b": 2.0, "u": 3.0}, "2": {"d": 1.0}})
    options = Options(relevance_level=level)
    assert output_names(names, options) == evaluate(qrels, run, names, options).measures
