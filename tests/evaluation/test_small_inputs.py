"""Columns of a few hundred lines are read in Python (judged_lookup.FEW: the runs of qids,
the topics to score, the judged lines, the NaN check), where each polars call costs more
than the work. The Hypothesis properties elsewhere see only such collections, so here each
one is scored both ways and the two must agree bit for bit, errors included."""

from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from evaluation.measures import Options, evaluate, judged_lookup
from tests.evaluation.test_measures import collections, qrels_frame, run_frame

PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# trec_eval's measures with several cutoffs, and ours (each ranked in its provider's order).
MEASURES = [
    *("all_trec", "judged.1,3", "nDCG@3", "P(rel=2)@3", "AP(judged_only=True)", "RR@2"),
    *("ERR@3", "Judged", "RBP(p=0.5)", "RBP(rel=2)", "nDCG(gains={0:1,2:5})@3"),
]


def scored(qrels: pl.DataFrame, run: pl.DataFrame, options: Options):
    """(evaluation, None) or (None, the ValueError's text)."""
    try:
        return evaluate(qrels, run, MEASURES, options), None
    except ValueError as error:
        return None, str(error)


# Doubles a few units in the last place apart: trec_eval 10.0's keys (ranking._order_keys)
# drop their lowest bits, so such lines share a key and are put in order by their scores.
NEIGHBOURS = [1.0, 0.25]
for _ in range(3):
    NEIGHBOURS += [float(np.nextafter(NEIGHBOURS[-2], 2.0)), float(np.nextafter(NEIGHBOURS[-1], 1))]


@PROPERTY
@given(
    st.one_of(collections(), collections(scores=st.sampled_from(NEIGHBOURS))),
    st.integers(1, 2),
    st.sampled_from([None, 2]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_few_lines_are_scored_as_polars_scores_many(
    collection, level, depth, complete, judged_only, shuffled, repeated
):
    qrels, run = qrels_frame(collection[0]), run_frame(collection[1])
    if shuffled:  # lines not grouped by topic
        run = run.sample(fraction=1.0, shuffle=True, seed=7)
    if repeated:  # a judgment given twice: refused, naming the first pair
        qrels = pl.concat([qrels, qrels.tail(1)])
    options = Options(
        relevance_level=level,
        trec_eval_version=10,
        depth=depth,
        complete=complete,
        judged_only=judged_only,
    )
    few, few_error = scored(qrels, run, options)
    with mock.patch.object(judged_lookup, "FEW", -1):
        many, many_error = scored(qrels, run, options)
    assert few_error == many_error
    if few is None:
        return
    assert few.measures == many.measures
    assert few.missing_topics == many.missing_topics
    assert_frame_equal(few.per_topic, many.per_topic, check_exact=True)
    values = few.per_topic.drop("qid").to_numpy()  # assert_frame_equal takes -0.0 for 0.0
    assert values.tobytes() == many.per_topic.drop("qid").to_numpy().tobytes()
    assert_frame_equal(few.strings, many.strings)
    for name, value in few.means.items():
        assert np.float64(value).tobytes() == np.float64(many.means[name]).tobytes(), name


@pytest.mark.parametrize("few", [True, False])
def test_a_run_without_a_judged_topic_scores_each_judged_topic_0_with_complete_in_10(few):
    """trec_eval 10.0's -c scores the judged topics a run lacks against an empty ranking,
    even when it lacks them all (9.0.8 and runs without -c stop: no topic in common)."""
    qrels = qrels_frame({"1": {"a": 1}, "2": {"b": 0, "c": 2}})
    run = run_frame({"9": {"a": 1.0}})
    with mock.patch.object(judged_lookup, "FEW", judged_lookup.FEW if few else -1):
        result = evaluate(
            qrels, run, ["map", "P.5", "num_rel"], Options(complete=True, trec_eval_version=10)
        )
    assert result.missing_topics == ("1", "2")
    assert result.per_topic.get_column("map").to_list() == [0.0, 0.0]
    assert result.means == {"map": 0.0, "P_5": 0.0, "num_rel": 2.0}
    with pytest.raises(ValueError, match="no topic has both"):
        evaluate(qrels, run, ["map"], Options(complete=True, trec_eval_version=9))
