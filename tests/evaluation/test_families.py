"""Tests for evaluation.measures.families: each measure family declared once, and what is
derived from it (the parser's families, our scorers, the measures page, the dashboards'
menu, and each output's single spec and cutoff)."""

import pytest

from evaluation import measures
from evaluation.measures import cascade, catalog, dialects, families, reference


def test_every_family_of_ours_has_a_scorer_and_every_scorer_a_family():
    declared = {family.ours for family in families.FAMILIES if family.ours}

    assert declared == set(cascade.SCORERS)


def test_every_trec_eval_name_of_a_family_is_in_trec_eval_s_table():
    for family in families.FAMILIES:
        for name in family.trec_names:
            assert catalog.is_measure_name(name), f"{family.ir}: {name} is no trec_eval measure"


def test_the_parser_knows_every_family_with_an_ir_measures_name_and_its_aliases():
    named = [family for family in families.FAMILIES if family.ir]

    assert list(dialects.FAMILIES) == [family.ir for family in named]
    for family in named:
        for alias in family.aliases:
            assert dialects.parse_request(f"{alias}@5" if family.cutoff != "none" else alias)


def test_the_measures_page_shows_each_family_s_entries_with_its_name_and_mean():
    nums = [doc for doc in reference.MEASURES if doc.family.startswith("Num")]

    assert len(reference.MEASURES) == sum(len(f.docs) for f in families.FAMILIES)
    assert nums and not any(doc.mean for doc in nums)
    assert [doc.ir for doc in reference.MEASURES if doc.family == "nDCG"] == ["nDCG@k", "nDCG"]


def test_the_menu_offers_means_only_and_each_once():
    offered = [*families.menu_specs(), *families.more_specs()]

    assert len(offered) == len(set(offered))
    for spec in offered:
        (output,) = measures.outputs([spec])
        assert measures.is_mean(output.name), spec


def test_more_measures_list_other_cutoffs_then_ours_then_the_rest():
    more = families.more_specs()

    assert more.index("iprec_at_recall.0.5") < more.index("RR@10") < more.index("infAP")


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        (
            ["ndcg_cut.5,10", "map"],
            [
                ("map", "map", None),
                ("ndcg_cut_5", "ndcg_cut.5", 5),
                ("ndcg_cut_10", "ndcg_cut.10", 10),
            ],
        ),
        (["iprec_at_recall.0.5"], [("iprec_at_recall_0.50", "iprec_at_recall.0.5", 0.5)]),
        (["set_F.0.5"], [("set_F_0.5", "set_F.0.5", None)]),
        (["nDCG@10", "ERR@20"], [("ndcg_cut_10", "ndcg_cut.10", 10), ("ERR@20", "ERR@20", 20)]),
        (
            ["P(rel=2)@5", "IPrec@0.25"],
            [  # the request's own options first, then the others (grouped.py)
                ("iprec_at_recall_0.25", "iprec_at_recall.0.25", 0.25),
                ("P(rel=2)@5", "P(rel=2)@5", 5),
            ],
        ),
    ],
)
def test_each_output_carries_its_single_spec_and_cutoff_as_a_number(specs, expected):
    outputs = measures.outputs(specs)

    assert [(o.name, o.spec, o.cutoff) for o in outputs] == expected
    assert [o.name for o in outputs] == measures.output_names(specs)
    for output in outputs:
        assert measures.output_names([output.spec]) == [output.name], output


def test_k_is_the_rank_cutoff_and_never_a_recall_point():
    recall, ranked = measures.outputs(["P.5", "iprec_at_recall.0.5"])  # trec_eval's order

    assert (ranked.k, recall.k) == (5, None)


def test_outputs_know_their_family_and_trec_eval_measure():
    ndcg, other, ours = measures.outputs(["ndcg_cut.10", "RR@10", "relative_P.5"])

    assert (ndcg.family.ir, ndcg.measure) == ("nDCG", "ndcg_cut")
    assert (ours.family.ir, ours.measure) == ("RR", None)
    assert (other.family, other.measure, other.k) == (None, "relative_P", 5)
