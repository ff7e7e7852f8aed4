"""Each pair's tally of its judges, kept by the services in the grade's transaction, and the
lead's queue and figures computed from it in the database (issue 18): always equal to the
rule and the order applied to every pair's full state, as before."""

from collections import Counter

import numpy as np
import pytest
from django.db.models import Q

from annotation import adjudication, services
from annotation.models import (
    AdjudicationRule,
    Assignment,
    GradeBasis,
    JudgeTally,
    Pair,
    PairSource,
    Topic,
    TopicTally,
)
from annotation.services import adjudication as adj
from annotation.services import final_grades
from annotation.services.judge_tallies import tally_judges
from annotation.services.tallies import FIELDS, TOPIC_FIELDS, count_topics, tally_pairs

pytestmark = pytest.mark.django_db


def stored_tallies(campaign):
    return {p["pk"]: p for p in Pair.objects.filter(campaign=campaign).values("pk", *FIELDS)}


def stored_judge_tallies(campaign):
    return {
        t.judge_id: (t.open, t.graded, t.skipped)
        for t in JudgeTally.objects.filter(campaign=campaign)
    }


def stored_topic_tallies(campaign):
    """Every topic's stored counts (a topic without a row: zeros)."""
    rows = {
        t["topic_id"]: {f: t[f] for f in TOPIC_FIELDS}
        for t in TopicTally.objects.filter(campaign=campaign).values("topic_id", *TOPIC_FIELDS)
    }
    zero = dict.fromkeys(TOPIC_FIELDS, 0)
    return {pk: rows.get(pk, zero) for pk in campaign.topics.values_list("pk", flat=True)}


def reference_topic_tallies(campaign):
    """The topics' counts from every pair's full state (final_grades.pair_states and _settle)."""
    counts = {
        pk: dict.fromkeys(TOPIC_FIELDS, 0) for pk in campaign.topics.values_list("pk", flat=True)
    }
    for s in final_grades.pair_states(campaign=campaign):
        c = counts[s.topic_id]
        c["pairs"] += 1
        c["judged"] += bool(s.grades)
        c["assigned"] += s.assigned
        c["open"] += s.open
        c["graded"] += len(s.grades)
        c["disputed"] += s.disputed
        c["waiting"] += bool(s.open)
        c["queue"] += s.disputed and not s.decided and not s.open
        c["lead"] += s.basis == GradeBasis.LEAD
        c["gold"] += s.basis == GradeBasis.GOLD
        c["unanimous"] += s.basis == GradeBasis.UNANIMOUS
        c["by_rule"] += s.basis in (GradeBasis.MAJORITY, GradeBasis.MEDIAN)
    return counts


def assert_topic_tallies_current(campaign):
    before = stored_topic_tallies(campaign)
    assert before == reference_topic_tallies(campaign), (
        "the topics' stored counts differ from every pair's state"
    )
    count_topics(campaign=campaign)
    assert stored_topic_tallies(campaign) == before, "a service changed pairs without a recount"


def assert_tallies_current(campaign):
    assert_topic_tallies_current(campaign)
    before = stored_tallies(campaign)
    tally_pairs(campaign=campaign)
    assert stored_tallies(campaign) == before, "a service changed judgments without a tally"
    judges_before = stored_judge_tallies(campaign)
    tally_judges(campaign_id=campaign.pk)
    assert stored_judge_tallies(campaign) == judges_before, (
        "a service changed assignments without shifting or recounting its judges' tallies "
        "(annotation/services/tallies.py)"
    )


@pytest.fixture
def big(django_user_model):
    """Five judges, overlap 3, four topics of twelve pairs; seeded grades, skips, open
    pairs, lead decisions and gold pairs."""
    lead = django_user_model.objects.create_user("lead")
    judges = [django_user_model.objects.create_user(f"j{i}") for i in range(5)]
    campaign = services.create_campaign(
        lead=lead, name="Tallies", overlap=3, judges=judges, relevance_threshold=2
    )
    for qid in "1234":
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, f"d{i:02d}") for q in "1234" for i in range(12)],
        source=PairSource.IMPORTED,
    )
    rng = np.random.default_rng(18)
    for a in (
        Assignment.objects.filter(pair__campaign=campaign).select_related("judge").order_by("pk")
    ):
        roll = rng.random()
        if roll < 0.1:
            continue  # stays open
        if roll < 0.15:
            services.skip_assignment(assignment_id=a.pk, judge=a.judge, reason="x")
        else:
            grade = int(rng.integers(0, 4))
            services.record_judgment(assignment_id=a.pk, judge=a.judge, grade=grade)
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("pk"))
    for pair in pairs[::7]:
        adj.decide_pair(
            campaign=campaign, pair_id=pair.pk, lead=lead, grade=1, reason="read it", based_on=None
        )
    services.mark_gold(campaign=campaign, pair_id=pairs[3].pk, grade=2)
    return campaign, lead, judges


def reference(campaign, topic_id=None, undecided_only=False):
    """The queue as it was computed before: every pair's full state, the rule, the order."""
    states = [
        s for s in final_grades.pair_states(campaign=campaign, topic_id=topic_id) if s.disputed
    ]
    if undecided_only:
        states = [s for s in states if not s.decided and not s.open]
    order = adjudication.disagreement_order(
        ((s.pair_id, s.grades) for s in states), threshold=campaign.relevance_threshold
    )
    return order


@pytest.mark.parametrize("rule", list(AdjudicationRule))
def test_the_queue_and_figures_in_the_database_equal_the_rule_on_every_pair(big, rule):
    campaign, _, _ = big
    services.update_campaign(campaign=campaign, adjudication_rule=rule)
    campaign.refresh_from_db()
    assert_database_equals_the_rule(campaign)


def grade_some_pairs_by_machines_alone(campaign, judges, rule):
    """Machine grades in adjudication; every pair graded by one or two machines, and two
    pairs only machines graded (its judges all skipped one; the other has none)."""
    from annotation.models import JudgeKind
    from annotation.services.external import add_external_judge, record_machine_grade

    services.update_campaign(
        campaign=campaign, adjudication_rule=rule, machine_grades_adjudicate=True
    )
    campaign.refresh_from_db()
    machines = [
        add_external_judge(campaign=campaign, name=f"m{i}", kind=JudgeKind.MACHINE)
        for i in range(2)
    ]
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("pk"))
    skipped, unjudged = pairs[5], pairs[6]
    for a in Assignment.objects.filter(pair=skipped).select_related("judge").order_by("pk"):
        if a.status != "open":
            services.undo_judgment(assignment_id=a.pk, judge=a.judge)
        services.skip_assignment(assignment_id=a.pk, judge=a.judge, reason="cannot tell")
    Assignment.objects.filter(pair=unjudged).delete()
    tally_pairs(pair_ids=[unjudged.pk])
    tally_judges(campaign_id=campaign.pk)
    for at, pair in enumerate(pairs):
        for machine in machines[: 1 + at % 2]:
            record_machine_grade(judge=machine, pair_id=pair.pk, grade=(at + machine.pk) % 4)
    return skipped, unjudged


@pytest.mark.parametrize("rule", list(AdjudicationRule))
def test_machine_grades_count_beside_a_humans_never_alone_in_the_database(big, rule):
    """With machine grades in adjudication, a pair only machines graded is undecided, as
    pair_states says: the queue, the figures and the topics' counts agree."""
    campaign, _, judges = big
    alone = grade_some_pairs_by_machines_alone(campaign, judges, rule)
    states = {s.pair_id: s for s in final_grades.pair_states(campaign=campaign)}
    for pair in alone:
        assert states[pair.pk].grades and not states[pair.pk].human_grades
        assert not states[pair.pk].decided
    assert_database_equals_the_rule(campaign)


@pytest.mark.parametrize("rule", list(AdjudicationRule))
def test_the_migration_counts_machine_grades_and_mends_the_topics_counts(big, rule):
    """annotation/0016 on a campaign counted before it (no machines_graded, so pairs only
    machines graded counted as complete) leaves the tallies a recount would."""
    import importlib

    from django.apps import apps

    campaign, _, judges = big
    grade_some_pairs_by_machines_alone(campaign, judges, rule)
    right = stored_topic_tallies(campaign), stored_tallies(campaign)
    Pair.objects.filter(campaign=campaign).update(machines_graded=0)
    count_topics(campaign=campaign)  # the counts as the rule before 0016 made them
    assert stored_topic_tallies(campaign) != right[0]
    migration = importlib.import_module("annotation.migrations.0016_pair_machines_graded")
    migration.count_machine_grades(apps, None)
    assert (stored_topic_tallies(campaign), stored_tallies(campaign)) == right


def assert_database_equals_the_rule(campaign):
    """The queue, its neighbours, the figures and the topics' counts from the tallies equal
    the rule applied to every pair's full state."""
    assert_tallies_current(campaign)
    topic = campaign.topics.get(qid="2").pk
    for topic_id in (None, topic):
        for undecided_only in (False, True):
            ids = adj.disputed_pairs(
                campaign=campaign, topic_id=topic_id, undecided_only=undecided_only
            ).values_list("pk", flat=True)
            assert list(ids) == reference(campaign, topic_id, undecided_only)
            order = list(ids)
            for at, pair_id in enumerate(order):
                assert adj.queue_neighbours(
                    campaign=campaign,
                    pair_id=pair_id,
                    topic_id=topic_id,
                    undecided_only=undecided_only,
                ) == (order[at - 1] if at else None, order[at + 1] if at + 1 < len(order) else None)
            outside = Pair.objects.filter(campaign=campaign).exclude(pk__in=order).first()
            assert adj.queue_neighbours(
                campaign=campaign,
                pair_id=outside.pk,
                topic_id=topic_id,
                undecided_only=undecided_only,
            ) == (None, order[0] if order else None)
    states = final_grades.pair_states(campaign=campaign)
    decided = [s for s in states if s.decided]
    assert adj.pair_figures(campaign=campaign) == {
        "pairs": len(states),
        "decided": len(decided),
        "undecided": len(states) - len(decided),
        "disputed": sum(s.disputed for s in states),
        "waiting": sum(bool(s.open) for s in states),
        "by_lead": sum(s.basis == "lead" for s in decided),
        "bases": dict(Counter(str(s.basis) for s in decided)),
    }
    assert_topic_tallies_current(campaign)
    for topic_id in (None, topic):
        for undecided_only in (False, True):
            assert adj.disputed_count(
                campaign=campaign, topic_id=topic_id, undecided_only=undecided_only
            ) == len(reference(campaign, topic_id, undecided_only))
    assert adj.basis_counts(campaign=campaign) == dict(Counter(str(s.basis) for s in decided))
    undecided = [s.pair_id for s in states if not s.decided]
    assert list(adj.undecided_pairs(campaign=campaign).values_list("pk", flat=True)) == undecided


def test_every_service_that_changes_judges_or_grades_keeps_the_tallies(big, django_user_model):
    campaign, _, judges = big
    assert_tallies_current(campaign)
    mine = Assignment.objects.filter(judge=judges[0], status="done").first()
    services.record_judgment(assignment_id=mine.pk, judge=judges[0], grade=3)
    assert_tallies_current(campaign)
    services.undo_judgment(assignment_id=mine.pk, judge=judges[0])
    assert_tallies_current(campaign)
    services.skip_assignment(assignment_id=mine.pk, judge=judges[0], reason="unreadable")
    assert_tallies_current(campaign)
    services.record_judgment(assignment_id=mine.pk, judge=judges[0], grade=1)
    assert_tallies_current(campaign)
    newcomer = django_user_model.objects.create_user("j9")
    services.add_judge(campaign=campaign, judge=newcomer)
    services.update_campaign(campaign=campaign, overlap=4)
    assert_tallies_current(campaign)
    services.set_gold(campaign=campaign, entries=[("4", "d11", 0), ("4", "new-doc", 3)])
    assert_tallies_current(campaign)
    services.reassign(campaign=campaign, from_judge=judges[1], to_judge=newcomer)
    services.remove_judge(campaign=campaign, judge=judges[2])
    assert_tallies_current(campaign)
    services.clear_gold(
        campaign=campaign,
        pair_ids=campaign.pairs.filter(gold_grade__isnull=False).values_list("pk", flat=True),
    )
    assert_tallies_current(campaign)


def test_progress_medians_and_topic_counts_equal_those_over_every_judgment(big):
    import statistics

    from django.db.models import Count

    from annotation.models import AssignmentStatus, Judgment

    campaign, _, _ = big
    # Uneven, distinct seconds, so an even count's median is a midpoint of two.
    for i, judgment in enumerate(Judgment.objects.order_by("pk")):
        Judgment.objects.filter(pk=judgment.pk).update(seconds=(i * 7919) % 97 + 0.5)
    seconds = {}
    for judge_id, value in Judgment.objects.filter(grade__isnull=False).values_list(
        "assignment__judge_id", "seconds"
    ):
        seconds.setdefault(judge_id, []).append(value)
    progress = services.judge_progress(campaign=campaign)
    assert {p.judge_id: p.median_seconds for p in progress} == {
        judge_id: statistics.median(values) for judge_id, values in seconds.items()
    }
    assert any(len(v) % 2 == 0 for v in seconds.values()) and any(
        len(v) % 2 for v in seconds.values()
    )
    by_assignments = list(
        Assignment.objects.filter(pair__campaign=campaign)
        .values("pair__topic_id", "pair__topic__qid", "pair__topic__query")
        .annotate(total=Count("pk"), done=Count("pk", filter=~Q(status=AssignmentStatus.OPEN)))
        .order_by("pair__topic_id")
    )
    assert services.topic_progress(campaign=campaign) == by_assignments


def test_progress_medians_come_from_the_background_refresh_when_a_worker_runs_it(big, settings):
    """With a task queue the progress page reads the medians the refresh stored (a grade
    does not recompute them) and says when they were computed; counts are always current."""
    from annotation.models import Judgment

    campaign, _, judges = big
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    services.store_judge_medians(campaign=campaign)
    stored = {p.judge_id: p.median_seconds for p in services.judge_progress(campaign=campaign)}
    mine = Assignment.objects.filter(judge=judges[0], status="open").first()
    services.record_judgment(assignment_id=mine.pk, judge=judges[0], grade=2, seconds=999)
    progress = {p.judge_id: p for p in services.judge_progress(campaign=campaign)}
    assert {k: p.median_seconds for k, p in progress.items()} == stored, "not recomputed"
    assert (
        progress[judges[0].pk].done
        == Assignment.objects.filter(judge=judges[0], pair__campaign=campaign)
        .exclude(status="open")
        .count()
    )
    at, pending = services.median_times(campaign=campaign)
    assert at is not None and pending
    services.store_judge_medians(campaign=campaign)
    fresh = services.judge_progress(campaign=campaign)
    seconds = Judgment.objects.filter(
        assignment__judge=judges[0], assignment__pair__campaign=campaign, grade__isnull=False
    ).values_list("seconds", flat=True)
    import statistics

    assert {p.judge_id: p.median_seconds for p in fresh}[judges[0].pk] == statistics.median(seconds)


@pytest.mark.parametrize("show", ["all", "undecided"])
def test_the_apis_disagreement_queue_pages_in_the_queues_order(big, show):
    """The API pages the queue in the database ({count, next, previous, results}); the
    pages put together are the whole queue, in its order."""
    from django.contrib.auth.models import Group
    from rest_framework.test import APIClient

    campaign, lead, _ = big
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    client = APIClient()
    client.force_authenticate(lead)
    url = f"/api/v1/campaigns/{campaign.pk}/disagreements/?show={show}&page_size=4"
    seen, pages = [], 0
    while url:
        body = client.get(url).json()
        seen += [row["pair"] for row in body["results"]]
        url, pages = body["next"], pages + 1
    expected = reference(campaign, undecided_only=show == "undecided")
    assert seen == expected and body["count"] == len(expected)
    assert pages == max(1, -(-len(expected) // 4)) and len(expected) > 4
