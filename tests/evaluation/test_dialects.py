"""Measures named in ir_measures' dialect: the parser, the names, and the values, per topic
against ir_measures 0.4.3 (its default provider for each measure) to 1e-12 on
hypothesis-generated collections.

Providers break ties in their own ways (STACK.md): pytrec_eval like trec_eval, msmarco
(RR@k) and judged (Judged@k) by docno ascending, cwl_eval (RBP) in file order, gdeval (ERR)
by docno descending with scores compared as doubles; ours follow each (cascade.ORDERS), so
every measure is compared on runs with ties and near-ties.
"""

import math

import ir_measures
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.measures import (
    Options,
    catalog,
    evaluate,
    format_ir_measures,
    ir_name,
    parse_request,
)
from evaluation.measures.cascade import ERR_MAX_GRADE
from evaluation.measures.dialects import MESSAGES
from tests.evaluation.test_measures import (
    TOLERANCE,
    collections,
    qrels_frame,
    rescored,
    run_frame,
)

PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ir_measures' parser

# ir_measures names whose default provider is pytrec_eval (trec_eval's tie order).
PYTREC_NAMES = [
    "nDCG@1", "nDCG@5", "nDCG@10", "nDCG", "P@1", "P@3", "P@10", "R@2", "R@10", "AP",
    "AP@3", "RR", "Rprec", "Bpref", "NumQ", "NumRet", "NumRel", "NumRelRet", "Success@2",
    "IPrec@0.2", "IPrec@1.0",
]  # fmt: skip
WITH_OPTIONS = [
    "P(rel=2)@5", "R(rel=2)@10", "AP(rel=2)", "AP(rel=3)@5", "RR(rel=2)", "Rprec(rel=2)",
    "Bpref(rel=2)", "NumRet(rel=2)", "Success(rel=2)@3", "P(judged_only=True)@5",
    "AP(judged_only=True)", "nDCG(judged_only=True)@5", "nDCG(judged_only=True)",
    "RR(judged_only=True)", "Rprec(judged_only=True)", "P(rel=2,judged_only=True)@3",
    "nDCG(gains={0:1,1:5,2:7,3:20})@5", "nDCG(gains={1:0,2:3})", "R(judged_only=True)@5",
]  # fmt: skip
# Default providers other than pytrec_eval, each with its own order of tied documents.
OTHER_PROVIDERS = [
    "RR@1", "RR@3", "RR(rel=2)@5", "Judged@1", "Judged@5", "Judged", "RBP(rel=1)",
    "RBP(rel=2,p=0.5)", "RBP(rel=1,p=0.95)",
]  # fmt: skip
# Names whose trec_eval measure comes with the full all_trec set (branch `scoring`).
ALL_TREC_NAMES = ["infAP", "infAP(rel=2)", "SetP", "SetP(rel=2)", "SetR", "SetF", "SetR(rel=2)"]
ALL_TREC_NAMES += ["SetF(beta=0.5)", "SetF(rel=2,beta=2.0)", "SetP(judged_only=True)"]


def ours(qrels, run, names, **options) -> dict[str, dict[str, float]]:
    """{ir_measures name: {qid: value}} from evaluate."""
    result = evaluate(qrels_frame(qrels), run_frame(run), names, Options(**options))
    level = result.options.relevance_level
    values: dict[str, dict[str, float]] = {}
    for row in result.per_topic.iter_rows(named=True):
        qid = row.pop("qid")
        for name, value in row.items():
            values.setdefault(ir_name(name, level), {})[qid] = value
    return values


def theirs(qrels, run, names) -> dict[str, dict[str, float]]:
    """ir_measures' values, one measure at a time: asked together, its pytrec_eval provider
    puts NumQ, NumRet and nDCG into whichever pytrec_eval call comes first, judged_only
    (trec_eval -J) or not."""
    values: dict[str, dict[str, float]] = {}
    for name in names:
        for metric in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run):
            values.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    return values


def canonical(name: str) -> str:
    """The name as ir_measures prints it, which is the name we print."""
    return str(ir_measures.parse_measure(name))


def assert_same(mine: dict, reference: dict, names, *, subset=False):
    for name in names:
        key = canonical(name)
        assert key in mine, f"{name}: we printed no {key}; we printed {sorted(mine)}"
        expected = reference.get(key, {})
        got = mine[key]
        if subset:  # the provider leaves some topics out (gdeval: no relevant document)
            assert set(expected) <= set(got), f"{name}: topics {set(expected) - set(got)}"
        else:
            # ir_measures also reports qrels topics absent from the run; we (like trec_eval
            # without -c) skip them.
            scored = {qid: v for qid, v in expected.items() if qid in got}
            assert set(scored) == set(got), f"{name}: topics differ: {set(scored) ^ set(got)}"
            expected = scored
        for qid, value in expected.items():
            assert got[qid] == pytest.approx(value, abs=TOLERANCE), (
                f"{name} topic {qid!r}: ours {got[qid]!r}, ir_measures {value!r}"
            )


@PROPERTY
@given(collections())
def test_ir_measures_names_match_ir_measures_with_ties(collection):
    qrels, run = collection
    names = PYTREC_NAMES + WITH_OPTIONS
    assert_same(ours(qrels, run, names), theirs(qrels, run, names), names)


@PROPERTY
@given(collections())
def test_other_providers_match_with_ties(collection):
    qrels, run = collection
    names = OTHER_PROVIDERS + PYTREC_NAMES
    assert_same(ours(qrels, run, names), theirs(qrels, run, names), names)


@PROPERTY
@given(collections())
def test_other_providers_match_on_tie_free_runs(collection):
    qrels, run = collection
    run = rescored(run)
    names = OTHER_PROVIDERS + PYTREC_NAMES
    assert_same(ours(qrels, run, names), theirs(qrels, run, names), names)


def long_run(draw_scores, size: int, relevant_every: int) -> tuple[dict, dict]:
    """One topic ranked `size` deep, every `relevant_every`-th document relevant (grade 1 or
    2), the others judged 0, unjudged or judged -1 in turn; scores from `draw_scores`."""
    docs = [f"d{i:05d}" for i in range(size)]
    qrels = {"1": {}}
    for i, docno in enumerate(docs):
        if i % relevant_every == 0:
            qrels["1"][docno] = 1 + i % 2
        elif i % 3 == 0:
            qrels["1"][docno] = 0
        elif i % 7 == 0:
            qrels["1"][docno] = -1
    return qrels, {"1": {docno: draw_scores(i) for i, docno in enumerate(docs)}}


@pytest.mark.parametrize("size", [999, 1000, 1001, 1300])
@pytest.mark.parametrize("scores", ["distinct", "tied in tens"])
def test_other_providers_match_on_long_rankings(size, scores):
    """cwl_eval stops RBP at rank 1000, which p=0.99 makes visible; Judged without a
    cutoff counts the whole ranking."""
    qrels, run = long_run(
        (lambda i: float(size - i)) if scores == "distinct" else (lambda i: float(-(i // 10))),
        size,
        relevant_every=97,
    )
    names = ["RBP(rel=1,p=0.99)", "RBP(rel=2,p=0.999)", "Judged", "Judged@1000", "RR@1000"]
    names += ["nDCG@1000", "AP"]
    assert_same(ours(qrels, run, names), theirs(qrels, run, names), names)
    # gdeval prints ERR with 5 decimals.
    err = ours(qrels, run, ["ERR@1000"])["ERR@1000"]["1"]
    assert abs(err - theirs(qrels, run, ["ERR@1000"])["ERR@1000"]["1"]) <= 0.5e-5 + 1e-12


def provider_order(docs: dict[str, float], ties: str) -> list[str]:
    """Docnos by score descending (as doubles), ties by docno ("desc", "asc") or in the
    mapping's order ("line")."""
    if ties == "line":
        return sorted(docs, key=lambda d: -docs[d])  # stable: the mapping's order
    ascending = sorted(docs, key=lambda d: (-docs[d], d.encode()))
    if ties == "asc":
        return ascending
    return sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)


@PROPERTY
@given(collections(), st.integers(2, 3))
def test_a_request_level_applies_to_names_without_rel(collection, level):
    qrels, run = collection
    names = ["P@5", "AP", "RR@3", "NumRelRet", "nDCG@5"]
    with_level = [f"P(rel={level})@5", f"AP(rel={level})", f"RR(rel={level})@3"]
    with_level += [f"NumRet(rel={level})", "nDCG@5"]
    mine = ours(qrels, rescored(run), names, relevance_level=level)
    assert_same(mine, theirs(qrels, rescored(run), with_level), with_level)


def err_reference(grades: list[int], k: int) -> float:
    """gdeval.pl's err(), transcribed: grades in rank order."""
    score, decay = 0.0, 1.0
    for i, grade in enumerate(grades[:k]):
        r = (2 ** max(grade, 0) - 1) / 2**ERR_MAX_GRADE
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


@PROPERTY
@given(collections(), st.integers(1, 12))
def test_err_follows_gdeval_formula(collection, k):
    qrels, run = collection
    mine = ours(qrels, run, [f"ERR@{k}"])[f"ERR@{k}"]
    for qid, value in mine.items():
        docs = provider_order(run[qid], "desc")
        grades = [qrels[qid].get(docno, 0) for docno in docs]
        assert value == pytest.approx(err_reference(grades, k), abs=TOLERANCE)


@PROPERTY
@given(collections(), st.integers(1, 12))
def test_err_matches_gdeval_to_its_five_printed_decimals(collection, k):
    qrels, run = collection
    numeric = {qid: v for qid, v in qrels.items() if qid.isdigit()}  # gdeval's topics
    run = {qid: v for qid, v in run.items() if qid.isdigit()}
    if not set(numeric) & set(run):
        return
    name = f"ERR@{k}"
    mine = ours(numeric, run, [name])[name]
    reference = theirs(numeric, run, [name]).get(name, {})
    assert set(mine) <= set(reference) | {q for q in mine if max(numeric[q].values()) <= 0}
    for qid, value in reference.items():
        if qid not in run:  # ir_measures reports 0 for qrels topics the run lacks
            continue
        assert abs(mine[qid] - value) <= 0.5e-5 + 1e-12, f"topic {qid}: {mine[qid]} vs {value}"


def rbp_reference(grades: list[int], p: float, rel: int | None) -> float:
    """Moffat and Zobel's formula: grades in rank order; binary RBP (rel) over the first 1000
    ranks, normalised over them as cwl_eval does."""
    if rel is None:
        return (1 - p) * sum(g * p**i for i, g in enumerate(grades) if g > 0)
    gains = [float(g >= rel) for g in grades[:1000]]
    return (1 - p) / (1 - p**1000) * sum(gain * p**i for i, gain in enumerate(gains))


@PROPERTY
@given(collections(), st.sampled_from([0.5, 0.8, 0.95]), st.sampled_from([None, 1, 2]))
def test_rbp_follows_the_published_formula(collection, p, rel):
    qrels, run = collection
    name = canonical(f"RBP(p={p})" if rel is None else f"RBP(rel={rel},p={p})")
    mine = ours(qrels, run, [name])[name]
    ordered = rescored(run)  # graded RBP keeps trec_eval's order; binary RBP cwl_eval's
    for qid, value in mine.items():
        if rel is None:
            docs = sorted(ordered[qid], key=ordered[qid].get, reverse=True)
        else:
            docs = provider_order(run[qid], "line")
        grades = [qrels[qid].get(docno, 0) for docno in docs]
        assert value == pytest.approx(rbp_reference(grades, p, rel), abs=TOLERANCE)


needs_all_trec = pytest.mark.skipif(
    not all(catalog.is_measure_name(n) for n in ("infAP", "set_P", "set_recall", "set_F")),
    reason="infAP and the set measures come with trec_eval's all_trec set (branch scoring)",
)


@needs_all_trec
@PROPERTY
@given(collections())
def test_all_trec_names_match_ir_measures(collection):
    qrels, run = collection
    assert_same(
        ours(qrels, run, ALL_TREC_NAMES), theirs(qrels, run, ALL_TREC_NAMES), ALL_TREC_NAMES
    )


# --- names -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "trec"),
    [
        ("nDCG@10", "ndcg_cut.10"),
        ("NDCG@10", "ndcg_cut.10"),
        ("nDCG", "ndcg"),
        ("P@5", "P.5"),
        ("R@1000", "recall.1000"),
        ("AP", "map"),
        ("MAP", "map"),
        ("AP@10", "map_cut.10"),
        ("RR", "recip_rank"),
        ("MRR", "recip_rank"),
        ("Rprec", "Rprec"),
        ("Bpref", "bpref"),
        ("NumQ", "num_q"),
        ("NumRet", "num_ret"),
        ("NumRel", "num_rel"),
        ("NumRelRet", "num_rel_ret"),
        ("NumRet(rel=2)", "num_rel_ret"),
        ("SetP", "set_P"),
        ("SetR", "set_recall"),
        ("SetF", "set_F"),
        ("infAP", "infAP"),
        ("Judged@10", "judged.10"),
        ("Success@5", "success.5"),
        ("IPrec@0.5", "iprec_at_recall.0.5"),
        ("ndcg_cut.10", "ndcg_cut.10"),
        ("P.5,10", "P.5,10"),
        ("official", "official"),
    ],
)
def test_each_name_maps_to_its_trec_eval_measure(spec, trec):
    assert parse_request(spec).trec == trec


@pytest.mark.parametrize(
    ("spec", "ours_name"),
    [
        ("ERR@20", "ERR"),
        ("RR@10", "RR"),
        ("Judged", "Judged"),
        ("RBP(p=0.8)", "RBP"),
        ("RBP(rel=1)", "RBP"),
    ],
)
def test_measures_trec_eval_lacks_are_ours(spec, ours_name):
    request = parse_request(spec)
    assert request.trec is None and request.ours == ours_name


CANONICAL = ["nDCG@10", "P(rel=2)@5", "AP(judged_only=True)", "RBP(rel=1,p=0.5)", "RBP"]
CANONICAL += ["ERR@20", "nDCG(gains={1:5,2:9})@10", "NumRet(rel=1)", "IPrec@0.5", "SetF(beta=0.5)"]


@pytest.mark.parametrize("spec", CANONICAL)
def test_our_canonical_names_are_ir_measures_names(spec):
    assert parse_request(spec).name() == canonical(spec)


@pytest.mark.parametrize(
    ("output", "level", "name"),
    [
        ("ndcg_cut_10", 1, "nDCG@10"),
        ("ndcg_cut_10", 2, "nDCG@10"),
        ("P_5", 1, "P@5"),
        ("P_5", 2, "P(rel=2)@5"),
        ("recip_rank", 1, "RR"),
        ("map", 3, "AP(rel=3)"),
        ("map_cut_100", 1, "AP@100"),
        ("recall_1000", 1, "R@1000"),
        ("num_rel_ret", 1, "NumRet(rel=1)"),
        ("judged_10", 1, "Judged@10"),
        ("iprec_at_recall_0.10", 1, "IPrec@0.1"),
        ("gm_map", 1, "gm_map"),
        ("ERR@20", 1, "ERR@20"),
    ],
)
def test_output_names_read_as_ir_measures_names(output, level, name):
    assert ir_name(output, level) == name


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nDCG@x", MESSAGES["bad_cutoff"].format(spec="nDCG@x", value="x")),
        ("nDCG@0", MESSAGES["bad_cutoff"].format(spec="nDCG@0", value="0")),
        ("P", None),  # trec_eval's P with its default cutoffs: fine
        ("ERR", MESSAGES["needs_cutoff"].format(spec="ERR", name="ERR")),
        ("AP(rel=0)", MESSAGES["bad_rel"].format(spec="AP(rel=0)", value="0")),
        ("Rprec@5", MESSAGES["no_cutoff"].format(spec="Rprec@5", name="Rprec")),
        ("RBP(p=1.5)", MESSAGES["bad_p"].format(spec="RBP(p=1.5)", value="1.5")),
        (
            "nDCG(rel=2)@5",
            MESSAGES["unknown_param"].format(
                spec="nDCG(rel=2)@5",
                name="nDCG",
                param="rel",
                allowed=" (it has: gains, judged_only, dcg)",
            ),
        ),
        ("AP(rel=2,rel=3)", MESSAGES["repeated_param"].format(spec="AP(rel=2,rel=3)", param="rel")),
        ("nDCG(gains={1:x})@5", MESSAGES["bad_gains"].format(spec="nDCG(gains={1:x})@5", value="{1:x}")),
        ("nDCG(dcg='exp-log2')@5", "only dcg='log2'"),
        ("AP(judged_only=yes)", MESSAGES["bad_bool"].format(spec="AP(judged_only=yes)", param="judged_only", value="yes")),
        ("nDCG@10)", "cannot read this measure"),
        ("Fancy@10", "unknown measure 'Fancy'"),
    ],
)  # fmt: skip
def test_bad_names_say_what_is_wrong(spec, message):
    if message is None:
        parse_request(spec)
        return
    with pytest.raises(ValueError, match=None) as raised:
        parse_request(spec)
    assert message in str(raised.value)


def test_both_dialects_mix_in_one_request_and_share_columns():
    qrels = {"1": {"a": 2, "b": 0, "c": 1}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    result = evaluate(
        qrels_frame(qrels), run_frame(run), ["P.5", "P@10", "ndcg_cut.10", "nDCG@10", "map"]
    )
    assert result.measures == ["map", "P_5", "P_10", "ndcg_cut_10"]


def test_trec_eval_names_keep_the_first_cutoff_list():
    qrels, run = {"1": {"a": 1}}, {"1": {"a": 1.0}}
    result = evaluate(qrels_frame(qrels), run_frame(run), ["P.5", "P.10"])
    assert result.measures == ["P_5"]


def test_measures_with_their_own_options_are_named_by_ir_measures():
    qrels = {"1": {"a": 2, "b": 1, "c": 0}}
    run = {"1": {"c": 3.0, "b": 2.0, "a": 1.0, "u": 0.5}}
    result = evaluate(
        qrels_frame(qrels), run_frame(run), ["P@2", "P(rel=2)@2", "P(judged_only=True)@2"]
    )
    assert result.measures == ["P_2", "P(rel=2)@2", "P(judged_only=True)@2"]
    row = result.per_topic.row(0, named=True)
    assert (row["P_2"], row["P(rel=2)@2"], row["P(judged_only=True)@2"]) == (0.5, 0.0, 0.5)


def test_judged_only_scores_zero_on_a_topic_with_no_judged_document_retrieved():
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"a": 1.0}, "2": {"u": 1.0}}
    result = evaluate(qrels_frame(qrels), run_frame(run), ["AP", "AP(judged_only=True)"])
    assert result.per_topic.get_column("AP(judged_only=True)").to_list() == [1.0, 0.0]
    assert result.means["AP(judged_only=True)"] == 0.5


def test_err_written_out():
    # Ranking a (grade 2), u (unjudged), b (grade 4): R = 3/16, 0, 15/16.
    qrels = {"1": {"a": 2, "b": 4}}
    run = {"1": {"a": 3.0, "u": 2.0, "b": 1.0}}
    value = ours(qrels, run, ["ERR@3"])["ERR@3"]["1"]
    assert value == pytest.approx(3 / 16 + (1 - 3 / 16) * (15 / 16) / 3, abs=TOLERANCE)
    assert ours(qrels, run, ["ERR@2"])["ERR@2"]["1"] == pytest.approx(3 / 16, abs=TOLERANCE)


def test_err_refuses_grades_gdeval_cannot_read():
    with pytest.raises(ValueError, match="grades go up to 4; the qrels have grade 5"):
        evaluate(qrels_frame({"1": {"a": 5}}), run_frame({"1": {"a": 1.0}}), ["ERR@10"])


def test_rbp_written_out():
    qrels = {"1": {"a": 1, "b": 3}}
    run = {"1": {"a": 3.0, "u": 2.0, "b": 1.0}}
    binary = ours(qrels, run, ["RBP(rel=1,p=0.5)"])["RBP(rel=1,p=0.5)"]["1"]
    graded = ours(qrels, run, ["RBP(p=0.5)"])["RBP(p=0.5)"]["1"]
    assert binary == pytest.approx(0.5 * (1 + 0.25), abs=TOLERANCE)
    assert graded == pytest.approx(0.5 * (1 + 3 * 0.25), abs=TOLERANCE)
    assert math.isclose(ours(qrels, run, ["RBP(rel=3)"])["RBP(rel=3)"]["1"], 0.2 * 0.64)


def test_graded_rbp_keeps_trec_eval_ties_whatever_else_is_asked():
    """Scores equal once rounded to float32 tie in trec_eval 9.0.8's order, which graded RBP
    keeps (docno descending: b, grade 3, first); RR@10's provider compares doubles and finds
    no tie, and asking for it first once lent graded RBP its order (0.2 * (1 + 0.8 * 3))."""
    qrels = {"1": {"a": 1, "b": 3}}
    run = {"1": {"a": 0.1 + 1e-12, "b": 0.1}}
    for names in (["RBP(p=0.8)"], ["RR@10", "RBP(p=0.8)"], ["Judged", "RBP(p=0.8)"]):
        graded = ours(qrels, run, names)["RBP"]["1"]
        assert graded == pytest.approx(0.2 * (3 + 0.8 * 1), abs=TOLERANCE), names


def test_z_scores_are_refused_for_measures_they_cannot_apply_to():
    qrels, run = {"1": {"a": 1}}, {"1": {"a": 1.0}}
    zscores = pl.DataFrame({"qid": ["1"], "measure": ["P_5"], "mean": [0.5], "stddev": [0.1]})
    with pytest.raises(ValueError, match="-Z: z-scores are for trec_eval's measures"):
        evaluate(qrels_frame(qrels), run_frame(run), ["P.5", "ERR@10"], zscores=zscores)


def ir_measures_lines(qrels, run, names) -> dict[tuple[str, str], float]:
    """What `--format ir_measures -q --places full` prints, as {(qid, name): value}."""
    result = evaluate(qrels_frame(qrels), run_frame(run), names, Options(complete=True))
    text = format_ir_measures(result, per_topic=True, places="full")
    return {(q, n): float(v) for q, n, v in (line.split("\t") for line in text.splitlines())}


@PROPERTY
@given(collections())
def test_the_ir_measures_format_scores_every_qrels_topic_as_ir_measures(collection):
    """Topics only in the qrels print 0 for every measure and count in the means ("all"),
    as ir_measures' providers and its aggregation give them; ties as each provider's."""
    qrels, run = collection
    names = PYTREC_NAMES + OTHER_PROVIDERS + ["P(rel=2)@5", "AP(judged_only=True)"]
    mine = ir_measures_lines(qrels, run, names)
    reference = theirs(qrels, run, names)
    for name in names:
        key = canonical(name)
        per_topic = reference.get(key, {})
        assert {q for q, n in mine if n == key and q != "all"} == set(qrels), key
        for qid, value in per_topic.items():
            assert mine[(qid, key)] == pytest.approx(value, abs=TOLERANCE), (key, qid)
        # One measure at a time, as theirs() asks: asked together, ir_measures' pytrec_eval
        # provider may put NumRet into its judged_only call, as the set of measures happens
        # to be ordered (PYTHONHASHSEED=4 gives NumRet 0 for a run of one unjudged document).
        measure = ir_measures.parse_measure(name)
        expected_all = ir_measures.calc_aggregate([measure], qrels, run)[measure]
        assert mine[("all", key)] == pytest.approx(expected_all, abs=1e-9), key


def test_a_judged_only_measure_scores_zero_with_c_when_no_judged_document_is_retrieved():
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"u1": 2.0, "u2": 1.0}}  # nothing judged retrieved; topic 2 not in the run
    result = evaluate(
        qrels_frame(qrels), run_frame(run), ["P@1", "AP(judged_only=True)"], Options(complete=True)
    )
    assert result.per_topic.get_column("qid").to_list() == ["1", "2"]
    assert result.per_topic.get_column("AP(judged_only=True)").to_list() == [0.0, 0.0]
