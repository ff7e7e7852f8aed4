"""evaluation.dashboards and the dashboard services: what each page and API answer is built
from. Means are the stored trec_eval values; intervals and comparisons equal
evaluation.analysis.significance on the per-topic values in byte order of qid."""

import dataclasses

import numpy as np
import pytest
from django.contrib.auth.models import AnonymousUser

from annotation import services as annotation
from annotation.models import Pair, PairSource, Topic
from evaluation import dashboards, measures, services
from evaluation.analysis import significance
from evaluation.models import Evaluation
from tests.evaluation.dashboard_data import demo_world, small_world, user
from tests.worlds import made_once

pytestmark = pytest.mark.django_db

DEFAULT = list(services.DASHBOARD_MEASURES)


world_made = made_once(small_world)


@pytest.fixture
def world(world_copy):
    """small_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def scoring_of(qrels, **kwargs):
    return dashboards.make_scoring(qrels=qrels, **kwargs)


# --- what is scored ------------------------------------------------------------------------


def test_the_default_measures_are_their_own_canonical_form():
    singles = dashboards.single_specs(services.DASHBOARD_MEASURES)

    assert dashboards.canonical_specs(reversed(singles)) == services.DASHBOARD_MEASURES


@pytest.mark.parametrize(
    "spec", ["iprec_at_recall.0.5", "set_F.0.5", "success.1,5", "RR@10", "P(rel=2)@5"]
)
def test_each_checkbox_is_a_measure_name_that_reads_back_as_the_same_choice(spec):
    canonical = dashboards.canonical_specs([spec])

    singles = dashboards.single_specs(canonical)

    assert dashboards.canonical_specs(singles) == canonical


def test_canonical_specs_merge_cutoffs_and_put_groups_in_a_fixed_order():
    specs = ["map", "ndcg_cut.10", "ndcg_cut.5", "P.10", "ndcg_cut.10"]

    assert dashboards.canonical_specs(specs) == ("ndcg_cut.5,10", "P.10", "map")


@pytest.mark.parametrize("spec", ["num_rel", "gm_map", "official", "runid"])
def test_measures_that_are_not_means_over_topics_are_refused(spec):
    with pytest.raises(dashboards.ScoringError, match="not one"):
        dashboards.canonical_specs([spec])


def test_a_scoring_names_its_stored_evaluations(world):
    qrels, bm25, _ = world
    scoring = scoring_of(qrels)

    assert scoring.key == services.options_key(DEFAULT, measures.Options())
    assert dashboards.scored(scoring).get(run=bm25).measures == [
        "map",
        "recip_rank",
        "P_5",
        "P_10",
        "ndcg_cut_1",
        "ndcg_cut_3",
        "ndcg_cut_5",
        "ndcg_cut_10",
        "ndcg_cut_20",
        "ndcg_cut_100",
        "judged_10",
    ]
    assert scoring.query() == f"?qrels={qrels.pk}"
    other = scoring_of(qrels, gain="exp", relevance_level=2, complete=True, measure_specs=["map"])
    assert other.query() == (
        f"?qrels={qrels.pk}&measures=map&gain=exp&relevance_level=2&complete=1"
    )


def test_the_default_qrels_is_the_version_most_runs_are_scored_against(world):
    qrels, _, _ = world  # two runs scored against it
    newer = services.import_qrels(source=b"1 0 d1 1\n", filename="b.qrels", name=qrels.name)

    assert newer.version == 2
    assert dashboards.make_scoring().qrels == qrels
    assert dashboards.choose_qrels() == (qrels, dashboards.QrelsReason.MOST_SCORED)
    assert dashboards.newer_versions(qrels) == [newer]
    assert dashboards.newer_versions(newer) == []
    with pytest.raises(dashboards.ScoringError, match="No qrels version with id 999"):
        dashboards.make_scoring(qrels=999)


def test_the_default_qrels_follows_the_runs_and_ties_go_to_the_newest(world):
    qrels, bm25, dense = world
    newer = services.import_qrels(source=b"1 0 d1 1\n", filename="b.qrels", name="other")
    services.score_run(run=bm25, qrels=newer, measure_specs=DEFAULT)

    assert dashboards.choose_qrels()[0] == qrels  # 2 runs against 1
    services.score_run(run=dense, qrels=newer, measure_specs=["map"])  # any options count

    assert dashboards.choose_qrels()[0] == newer  # 2 runs each: the newer wins


def test_the_newest_qrels_is_the_default_until_a_run_is_scored(media_root):
    first = services.import_qrels(source=b"1 0 d1 1\n", filename="a.qrels", name="a")
    second = services.import_qrels(source=b"1 0 d1 1\n", filename="b.qrels", name="b")

    assert dashboards.choose_qrels() == (second, dashboards.QrelsReason.NEWEST)
    assert dashboards.choose_qrels(remembered=first.pk) == (
        first,
        dashboards.QrelsReason.REMEMBERED,
    )
    assert dashboards.choose_qrels(remembered=999)[0] == second  # gone: the rule again


# --- intervals -----------------------------------------------------------------------------


def test_intervals_are_the_bootstrap_of_each_measure_over_topics_in_byte_order(media_root):
    qrels = services.import_qrels(
        source=b"10 0 a 1\n9 0 b 2\n100 0 c 1\n9 0 d 1\n", filename="q", name="q"
    )
    run = services.import_run(
        source=b"9 Q0 b 1 2 t\n9 Q0 d 2 1 t\n10 Q0 x 1 1 t\n10 Q0 a 2 0.5 t\n100 Q0 c 1 1 t\n",
        filename="r",
        system="s",
    )

    evaluation = services.score_run(run=run, qrels=qrels, measure_specs=DEFAULT)

    qids = ["10", "100", "9"]  # byte order, not numeric order
    for name in services.mean_measures(evaluation):
        values = [evaluation.per_topic[qid][name] for qid in qids]
        expected = significance.bootstrap_mean_interval(values, resamples=1000, seed=0)
        assert evaluation.intervals[name] == list(expected), name
    assert Evaluation.objects.get(pk=evaluation.pk).intervals == evaluation.intervals


def test_missing_intervals_are_filled_in_one_go_and_stored(world):
    Evaluation.objects.update(intervals={})
    stored = list(Evaluation.objects.defer("per_topic"))

    services.ensure_intervals(stored)

    for evaluation in Evaluation.objects.all():
        qids = sorted(evaluation.per_topic)
        for name in services.mean_measures(evaluation):
            values = [evaluation.per_topic[qid][name] for qid in qids]
            low, high = significance.bootstrap_mean_interval(values, resamples=1000, seed=0)
            assert evaluation.intervals[name] == [low, high]


# --- the leaderboard -----------------------------------------------------------------------


def test_leaderboard_has_the_stored_means_the_best_marked_and_low_judged_warned(world):
    qrels, bm25, dense = world

    board = dashboards.build_leaderboard(scoring_of(qrels))

    rows = {row.run: row for row in board.rows}
    assert set(rows) == {bm25, dense}
    for run, row in rows.items():
        evaluation = Evaluation.objects.get(run=run)
        assert {c.name: c.mean for c in row.cells} == {
            n: evaluation.means[n] for n in dashboards.output_names(DEFAULT)
        }
        assert {c.name: [c.low, c.high] for c in row.cells} == evaluation.intervals
    ndcg = {run: next(c for c in row.cells if c.name == "ndcg_cut_10") for run, row in rows.items()}
    best = max(ndcg, key=lambda run: ndcg[run].mean)
    assert ndcg[best].best and not ndcg[bm25 if best == dense else dense].best
    judged = {run: next(c for c in row.cells if c.name == "judged_10") for run, row in rows.items()}
    assert judged[bm25].mean == pytest.approx((2 / 3 + 1 / 2 + 1 / 2) / 3, abs=1e-12)
    assert "Only 56% of the top 10 documents are judged" in judged[bm25].warning
    assert not any(cell.best for cell in judged.values()), "judged@k is no quality to be best at"
    assert board.warned == 2 and board.unscored == 0


def test_leaderboard_groups_runs_by_system_and_sorts_systems_by_their_best_run(world):
    qrels, bm25, dense = world
    rm3 = services.import_run(
        source=b"1 Q0 d1 1 1 rm3\n2 Q0 d4 1 1 rm3\n3 Q0 d7 1 1 rm3\n", filename="rm3", system="bm25"
    )
    scoring = scoring_of(qrels)
    services.score_run(run=rm3, qrels=qrels, measure_specs=DEFAULT)

    board = dashboards.build_leaderboard(scoring, sort="-map")
    order = [row.run for row in board.rows]
    maps = {row.run: row.cells[scoring.names.index("map")].mean for row in board.rows}

    assert order.index(bm25) == order.index(rm3) - 1 or order.index(rm3) == order.index(bm25) - 1
    assert [row.system_rows for row in board.rows if row.run.system.name == "bm25"] == [2, 0]
    systems_best = {"bm25": max(maps[bm25], maps[rm3]), "dense": maps[dense]}
    first = max(systems_best, key=systems_best.get)
    assert board.rows[0].run.system.name == first
    ascending = dashboards.build_leaderboard(scoring, sort="map")
    assert ascending.rows[0].run.system.name != first
    by_name = dashboards.build_leaderboard(scoring, sort="system")
    assert [row.run.system.name for row in by_name.rows] == ["bm25", "bm25", "dense"]


def test_means_equal_but_for_rounding_are_both_best_and_ordered_by_system_name(world):
    qrels, bm25, dense = world
    scoring = scoring_of(qrels)
    stored = {e.run: e for e in dashboards.scored(scoring)}
    # Both 0.8 in exact arithmetic; added up in another topic order they differ by 1e-16.
    stored[bm25].means["map"], stored[dense].means["map"] = 0.7999999999999998, 0.8
    for evaluation in stored.values():
        evaluation.save(update_fields=["means"])

    board = dashboards.build_leaderboard(scoring, sort="-map")
    index = scoring.names.index("map")
    assert [row.run.system.name for row in board.rows] == ["bm25", "dense"]
    assert all(row.cells[index].best for row in board.rows)
    assert board.rows[0].cells[index].mean == 0.7999999999999998  # shown as stored


def test_runs_not_scored_with_the_options_are_counted(world):
    qrels, _, _ = world

    board = dashboards.build_leaderboard(scoring_of(qrels, gain="exp"))

    assert board.rows == [] and board.unscored == 2


# --- a run's topics ------------------------------------------------------------------------


def test_run_topics_are_worst_first_with_their_unjudged_documents(world):
    qrels, bm25, _ = world

    topics = dashboards.build_run_topics(bm25, scoring_of(qrels), measure="P_5")

    evaluation = Evaluation.objects.get(run=bm25)
    assert topics.k == 5
    assert [(r.qid, r.value) for r in topics.rows] == sorted(
        ((q, v["P_5"]) for q, v in evaluation.per_topic.items()), key=lambda t: (t[1], t[0])
    )
    assert {r.qid: (r.unjudged, r.retrieved) for r in topics.rows} == {
        "1": (1, 3),
        "2": (1, 2),
        "3": (1, 2),
    }
    assert topics.unjudged_docnos == {"1": ["u5"], "2": ["u6"], "3": ["u8"]}
    assert topics.chart()["counts"] == list(
        np.histogram([r.value for r in topics.rows], bins=10, range=(0, 1))[0]
    )


def test_a_run_without_an_evaluation_with_the_options_is_not_scored(world):
    qrels, bm25, _ = world

    with pytest.raises(dashboards.NotScored, match="bm25/bm25"):
        dashboards.build_run_topics(bm25, scoring_of(qrels, complete=True))


def test_query_texts_come_from_the_newest_campaign_topic(world, django_user_model):
    lead = user(django_user_model, "lea", "lead")
    for name, query in (("Old", "old words"), ("New", "new words")):
        campaign = annotation.create_campaign(lead=lead, name=name)
        Topic.objects.create(campaign=campaign, qid="1", query=query)

    rows = dashboards.with_queries([dashboards.TopicRow("1", 0.5, 0, 1)], user=lead)

    assert rows[0].query == "new words"


def test_query_texts_come_only_from_the_users_own_campaigns(world, django_user_model):
    # Issue 27: a topic imported in someone else's campaign changed how a qid read.
    lead = user(django_user_model, "lea", "lead")
    other = user(django_user_model, "leo", "lead")
    engineer = user(django_user_model, "eng", "engineer")
    admin = django_user_model.objects.create_superuser("root", password=None)
    mine = annotation.create_campaign(lead=lead, name="Mine")
    Topic.objects.create(campaign=mine, qid="1", query="my words")
    theirs = annotation.create_campaign(lead=other, name="Theirs")  # newer
    Topic.objects.create(campaign=theirs, qid="1", query="their secret words")
    Topic.objects.create(campaign=theirs, qid="2", query="only theirs")
    row = [dashboards.TopicRow("1", 0.5, 0, 1), dashboards.TopicRow("2", 0.5, 0, 1)]

    assert [r.query for r in dashboards.with_queries(row, user=lead)] == ["my words", ""]
    assert [r.query for r in dashboards.with_queries(row, user=engineer)] == ["", ""]
    assert [r.query for r in dashboards.with_queries(row, user=admin)] == [
        "their secret words",
        "only theirs",
    ]
    assert dashboards.topic_queries(other, ["1"]) == {"1": "their secret words"}


# --- a topic across runs -------------------------------------------------------------------


def test_a_topic_shows_every_runs_values_top_k_with_grades_and_the_ideal(world):
    qrels, bm25, dense = world

    view = dashboards.build_topic(scoring_of(qrels), "1", user=AnonymousUser(), k=3)

    values = {r.run: r.values for r in view.runs}
    assert values[bm25] == Evaluation.objects.get(run=bm25).per_topic["1"]
    assert values[dense] == Evaluation.objects.get(run=dense).per_topic["1"]
    tops = {r.run: [(d.docno, d.grade) for d in r.top] for r in view.runs}
    assert tops[bm25] == [("d1", 3), ("u5", None), ("d3", 1)]
    assert tops[dense] == [("d9", 2), ("d1", 3), ("d3", 1)]
    assert view.ideal == [("d1", 3), ("d9", 2), ("d3", 1)]
    assert view.grades == {0: 1, 1: 1, 2: 1, 3: 1}
    assert view.runs[0].value >= view.runs[1].value


def test_a_topic_a_run_lacks_shows_no_values_for_it(world):
    qrels, bm25, dense = world

    view = dashboards.build_topic(scoring_of(qrels), "2", user=AnonymousUser())

    assert {r.run: r.values is None for r in view.runs} == {bm25: False, dense: True}
    assert view.runs[-1].run == dense


def test_an_unknown_topic_is_a_lookup_error(world):
    qrels, _, _ = world

    with pytest.raises(LookupError):
        dashboards.build_topic(scoring_of(qrels), "404", user=AnonymousUser())


@pytest.mark.parametrize("qid", ["0042", "q.1", 'say"hi"', "a\\b", "ü-topic"])
def test_any_qid_is_read_from_the_stored_values(media_root, qid):
    qrels = services.import_qrels(source=f"{qid} 0 d1 1\n".encode(), filename="q", name="q")
    run = services.import_run(source=f"{qid} Q0 d1 1 1 t\n".encode(), filename="r", system="s")
    services.score_run(run=run, qrels=qrels, measure_specs=DEFAULT)

    view = dashboards.build_topic(scoring_of(qrels), qid, user=AnonymousUser())

    assert view.runs[0].values["ndcg_cut_10"] == 1.0


def test_document_text_prefers_a_campaign_with_the_topic(world, django_user_model):
    lead = user(django_user_model, "lea", "lead")
    with_topic = annotation.create_campaign(lead=lead, name="A")
    without = annotation.create_campaign(lead=lead, name="B")
    Topic.objects.create(campaign=with_topic, qid="1", query="q")
    with_topic.documents.create(docno="d1", text="from A")
    without.documents.create(docno="d1", text="from B")
    without.documents.create(docno="d2", title="", text="")

    assert dashboards.find_document(lead, "d1", "1").text == "from A"
    assert dashboards.find_document(lead, "d2", "1") is None


def test_document_text_comes_only_from_the_users_own_campaigns(world, django_user_model):
    # Issue 27: another lead's secret text was shown for the docno.
    lead = user(django_user_model, "lea", "lead")
    other = user(django_user_model, "leo", "lead")
    engineer = user(django_user_model, "eng", "engineer")
    mine = annotation.create_campaign(lead=lead, name="Mine")
    mine.documents.create(docno="d1", text="mine")
    theirs = annotation.create_campaign(lead=other, name="Theirs")  # newer, with topic 1
    Topic.objects.create(campaign=theirs, qid="1", query="q")
    theirs.documents.create(docno="d1", text="their secret")
    theirs.documents.create(docno="d2", text="their secret too")

    assert dashboards.find_document(lead, "d1", "1").text == "mine"
    assert dashboards.find_document(lead, "d2", "1") is None
    assert dashboards.find_document(engineer, "d1", "1") is None
    assert dashboards.find_document(other, "d1", "1").text == "their secret"


# --- comparisons ---------------------------------------------------------------------------


def test_a_comparison_is_significance_compare_on_the_topics_both_runs_have(world):
    qrels, bm25, dense = world

    view = dashboards.build_comparison(scoring_of(qrels), bm25, [dense], measure="ndcg_cut_10")

    a = Evaluation.objects.get(run=bm25).per_topic
    b = Evaluation.objects.get(run=dense).per_topic
    expected = significance.compare(
        [a[q]["ndcg_cut_10"] for q in ("1", "3")],
        [b[q]["ndcg_cut_10"] for q in ("1", "3")],
        permutations=10_000,
        seed=0,
    )
    [contrast] = view.contrasts
    # One candidate: Holm over one p-value is that p-value.
    holm = {
        name: dataclasses.replace(test, p_adjusted=test.p_value)
        for name in ("t_test", "wilcoxon", "randomisation")
        if (test := getattr(expected, name)).p_value is not None
    }
    assert contrast.comparison == dataclasses.replace(expected, **holm)
    assert (view.topics, view.left_out) == (2, 1)
    assert [d[0] for d in contrast.deltas] == sorted(
        ("1", "3"), key=lambda q: b[q]["ndcg_cut_10"] - a[q]["ndcg_cut_10"]
    )


def test_several_runs_are_compared_with_holm(media_root):
    qrels, _, runs = demo_world(topics=20)
    scoring = scoring_of(qrels)

    view = dashboards.build_comparison(scoring, runs[0], runs[1:])

    per_topic = {e.run_id: e.per_topic for e in Evaluation.objects.all()}
    qids = sorted(per_topic[runs[0].pk])
    expected = significance.compare_many(
        [per_topic[runs[0].pk][q]["ndcg_cut_10"] for q in qids],
        {str(r.pk): [per_topic[r.pk][q]["ndcg_cut_10"] for q in qids] for r in runs[1:]},
        permutations=10_000,
        seed=0,
    )
    assert [c.comparison for c in view.contrasts] == [expected[str(r.pk)] for r in runs[1:]]
    assert all(c.comparison.t_test.p_adjusted is not None for c in view.contrasts)


def test_comparing_with_a_run_not_scored_names_it(world):
    qrels, bm25, dense = world
    Evaluation.objects.filter(run=dense).delete()

    with pytest.raises(dashboards.NotScored, match="dense/dense"):
        dashboards.build_comparison(scoring_of(qrels), bm25, [dense])


def test_comparing_a_run_with_itself_is_refused(world):
    qrels, bm25, _ = world

    with pytest.raises(ValueError, match="other than the baseline"):
        dashboards.build_comparison(scoring_of(qrels), bm25, [bm25])


# --- closing the loop ----------------------------------------------------------------------


def test_unjudged_documents_of_the_top_k_go_to_the_campaign_pool(world, django_user_model):
    qrels, bm25, _ = world
    lead = user(django_user_model, "lea", "lead")
    judge = user(django_user_model, "ann", "judge")
    campaign = annotation.create_campaign(lead=lead, name="Pool", judges=[judge])
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    pairs = services.unjudged_top_k(runs=[bm25], qrels=qrels, k=10, options=measures.Options())

    sent = services.send_unjudged_to_judging(campaign=campaign, pairs=pairs)
    again = services.send_unjudged_to_judging(campaign=campaign, pairs=pairs)

    assert pairs == [("1", "u5"), ("2", "u6"), ("3", "u8")]
    assert (sent.added, sent.already, sent.missing_qids, sent.left_out) == (2, 0, ["3"], 1)
    assert (again.added, again.already) == (0, 2)
    stored = Pair.objects.filter(campaign=campaign)
    assert {(p.topic.qid, p.document.docno) for p in stored} == {("1", "u5"), ("2", "u6")}
    assert {p.source for p in stored} == {PairSource.UNJUDGED}
    assert sent.assigned == 2, "the new pairs go to the campaign's judge"


def test_a_topics_unjudged_documents_are_the_union_over_runs(world):
    qrels, bm25, dense = world

    pairs = services.unjudged_top_k(
        runs=[bm25, dense], qrels=qrels, k=2, options=measures.Options(), qids=["3"]
    )

    assert pairs == [("3", "u10"), ("3", "u11"), ("3", "u8")]
