"""A campaign's pool ordering (services/ordering.py): the lead's choice, recomputed in the
background, with every guarantee of the assignment kept."""

from collections import Counter

import pytest
from django.core.exceptions import ValidationError

from annotation import services, tasks
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Campaign,
    Document,
    PoolOrdering,
    Topic,
)
from annotation.services import campaign_files, ordering
from annotation.strategies import plan_order
from evaluation import services as evaluation

pytestmark = pytest.mark.django_db

# Two runs over three topics; "good" ranks the relevant documents first.
GOOD = b"".join(
    f"{q} Q0 {d} {r} {10 - r} good\n".encode()
    for q in ("1", "2", "3")
    for r, d in enumerate(["a", "b", "c", "d", "e"], start=1)
)
BAD = b"".join(
    f"{q} Q0 {d} {r} {10 - r} bad\n".encode()
    for q in ("1", "2", "3")
    for r, d in enumerate(["f", "g", "h", "a", "b"], start=1)
)


def make_campaign(django_user_model, strategy, *, overlap=2):
    lead = django_user_model.objects.create_user("lea")
    judges = [django_user_model.objects.create_user(n) for n in ("ann", "bob", "cy")]
    campaign = services.create_campaign(
        lead=lead, name="c", overlap=overlap, judges=judges, pool_ordering=strategy
    )
    for qid in ("1", "2", "3"):
        Topic.objects.create(campaign=campaign, qid=qid, query="q")
    runs = [
        evaluation.import_run(source=GOOD, filename="good", system="good"),
        evaluation.import_run(source=BAD, filename="bad", system="bad"),
    ]
    campaign_files.pool_stored_runs(campaign=campaign, runs=runs, depth=3)
    # Judges' queues hold only pairs whose document has text (pooling adds docnos bare).
    Document.objects.filter(campaign=campaign).update(text="A passage.")
    campaign.refresh_from_db()
    return campaign, judges


def open_queue(campaign, judge):
    """(qid, docno) of the judge's open assignments, in the order they will be served."""
    return [
        (a.pair.topic.qid, a.pair.document.docno)
        for a in Assignment.objects.filter(
            pair__campaign=campaign, judge=judge, status=AssignmentStatus.OPEN
        )
        .select_related("pair__topic", "pair__document")
        .order_by(*ordering.queue_order(campaign))
    ]


def grade_next(campaign, judge, grade_of):
    assignment = services.next_open_assignment(campaign=campaign, judge=judge)
    key = (assignment.pair.topic.qid, assignment.pair.document.docno)
    services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=grade_of(key))
    return key


@pytest.mark.parametrize(
    ("choice", "options"),
    [(PoolOrdering.BANDIT, {}), (PoolOrdering.BANDIT_ACROSS_TOPICS, {"across_topics": True})],
)
def test_pooling_remembers_the_runs_and_orders_the_queue_by_the_strategy(
    django_user_model, media_root, choice, options
):
    campaign, judges = make_campaign(django_user_model, choice)
    assert campaign.pooled_runs.count() == 2
    pool = [
        (p.topic.qid, p.document.docno)
        for p in campaign.pairs.select_related("topic", "document").order_by(
            "topic__qid", "document__docno"
        )
    ]
    plan = plan_order(
        "bandit",
        pool,
        ordering.pool_rankings(campaign, set(pool)),
        seed=campaign.seed,
        **options,
    )
    for judge in judges:
        queue = open_queue(campaign, judge)
        assert queue == [p for p in plan if p in set(queue)], (
            f"{judge}'s queue should follow the bandit's plan across topics"
        )


def test_reordering_keeps_overlap_distinct_judges_and_balance(django_user_model, media_root):
    campaign, _ = make_campaign(django_user_model, PoolOrdering.DISCRIMINATIVE)
    before = sorted(Assignment.objects.values_list("pair_id", "judge_id"))
    ordering.reorder_pool(campaign=campaign)
    after = sorted(Assignment.objects.values_list("pair_id", "judge_id"))
    assert before == after, "a recomputation changes positions only, never who judges what"
    per_pair = Counter(pair for pair, _ in after)
    assert set(per_pair.values()) == {2}
    assert len(set(after)) == len(after)


def test_a_grade_never_reorders_the_queue_the_background_task_does(
    django_user_model, media_root, settings
):
    settings.POOL_REORDER_EVERY = 2
    campaign, judges = make_campaign(django_user_model, PoolOrdering.MOVE_TO_FRONT)
    positions = dict(Assignment.objects.values_list("pk", "position"))
    relevant = {"a", "b", "c"}
    grade_next(campaign, judges[0], lambda key: 2 if key[1] in relevant else 0)
    grade_next(campaign, judges[0], lambda key: 2 if key[1] in relevant else 0)
    assert dict(Assignment.objects.values_list("pk", "position")) == positions, (
        "the grade request must not recompute the order"
    )
    campaign.refresh_from_db()
    assert ordering.reorder_due(campaign)
    tasks.refresh_agreement_task.call(campaign_id=campaign.pk)  # queues reorder_pool_task
    campaign.refresh_from_db()
    assert campaign.pool_ordering_state["graded"] == 2
    assert not ordering.reorder_due(campaign)


def test_gold_pairs_stay_mixed_in_after_reordering(django_user_model, media_root):
    campaign, judges = make_campaign(django_user_model, PoolOrdering.BANDIT)
    services.set_gold(campaign=campaign, entries=[("1", "zz", 3), ("2", "yy", 0)])
    ordering.reorder_pool(campaign=campaign)
    places = []
    for judge in judges:
        queue = open_queue(campaign, judge)
        assert {("1", "zz"), ("2", "yy")} <= set(queue), f"{judge} lost a calibration pair"
        places += [queue.index(("1", "zz")), queue.index(("2", "yy"))]
    assert len(set(places)) > 1, "gold pairs should not sit at one recognisable place"


def test_the_random_strategy_keeps_todays_topic_by_topic_order(django_user_model, media_root):
    campaign, judges = make_campaign(django_user_model, PoolOrdering.RANDOM)
    positions = dict(Assignment.objects.values_list("pk", "position"))
    assert ordering.reorder_pool(campaign=campaign) == 0
    assert dict(Assignment.objects.values_list("pk", "position")) == positions
    queue = open_queue(campaign, judges[0])
    topics = [qid for qid, _ in queue]
    assert topics == sorted(topics, key=lambda q: Topic.objects.get(campaign=campaign, qid=q).pk)


def test_changing_the_strategy_reorders_and_unknown_names_are_refused(
    django_user_model, media_root, django_capture_on_commit_callbacks
):
    campaign, _ = make_campaign(django_user_model, PoolOrdering.RANDOM)
    with pytest.raises(ValidationError) as caught:
        services.update_campaign(campaign=campaign, pool_ordering="greedy")
    assert "Unknown pool ordering 'greedy'" in str(caught.value.message_dict["pool_ordering"])
    with django_capture_on_commit_callbacks(execute=True):
        services.update_campaign(campaign=campaign, pool_ordering=PoolOrdering.BANDIT)
    campaign.refresh_from_db()
    assert campaign.pool_ordering == PoolOrdering.BANDIT
    assert "at" in campaign.pool_ordering_state, "switching should have recomputed the order"


def test_create_campaign_refuses_an_unknown_strategy(django_user_model):
    lead = django_user_model.objects.create_user("lea")
    with pytest.raises(ValidationError) as caught:
        services.create_campaign(lead=lead, name="c", pool_ordering="nope")
    assert "pool_ordering" in caught.value.message_dict
    assert not Campaign.objects.exists()


def test_the_reorder_pools_command_recomputes_due_campaigns_only(django_user_model, media_root):
    from io import StringIO

    from django.core.management import call_command

    campaign, _ = make_campaign(django_user_model, PoolOrdering.BANDIT)
    out = StringIO()
    call_command("reorder_pools", stdout=out)
    assert f"{campaign.pk}: fewer new grades than POOL_REORDER_EVERY" in out.getvalue()
    out = StringIO()
    call_command("reorder_pools", str(campaign.pk), "--force", stdout=out)
    open_count = Assignment.objects.filter(status=AssignmentStatus.OPEN).count()
    assert f"{campaign.pk}: {open_count:,} open assignments reordered" in out.getvalue()


def test_back_to_random_restores_topic_by_topic_shuffles(
    django_user_model, media_root, django_capture_on_commit_callbacks
):
    campaign, judges = make_campaign(django_user_model, PoolOrdering.BANDIT)
    with django_capture_on_commit_callbacks(execute=True):
        services.update_campaign(campaign=campaign, pool_ordering=PoolOrdering.RANDOM)
    campaign.refresh_from_db()
    assert "at" not in campaign.pool_ordering_state
    for judge in judges:
        queue = open_queue(campaign, judge)
        topics = [qid for qid, _ in queue]
        assert topics == sorted(topics), f"{judge} should work topic by topic again"


def test_the_judging_page_walks_the_strategys_queue(django_user_model, media_root, client):
    campaign, judges = make_campaign(django_user_model, PoolOrdering.BANDIT)
    client.force_login(judges[0])
    response = client.get(f"/campaigns/{campaign.pk}/judge/")
    assert response.status_code == 200
    config = response.context["config"]["queue"]
    expected = services.judge_queue(campaign=campaign, judge=judges[0])
    assert [item[0] for item in config] == expected, (
        "judge.js walks config.queue: it must be the strategy's order (services.judge_queue)"
    )


def test_new_pairs_in_an_adaptive_campaign_queue_a_reorder(
    django_user_model, media_root, django_capture_on_commit_callbacks
):
    campaign, _ = make_campaign(django_user_model, PoolOrdering.DISCRIMINATIVE)
    before = campaign.pool_ordering_state["at"]
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        services.set_gold(campaign=campaign, entries=[("3", "zz", 1)])
    assert callbacks, "assigning new pairs should queue reorder_pool_task"
    campaign.refresh_from_db()
    assert campaign.pool_ordering_state["at"] != before


def test_every_choice_a_campaign_offers_is_a_strategy_that_plans(django_user_model, media_root):
    """Each PoolOrdering has its strategy, and a campaign on the bandit over all topics
    learns from grades across topics: a topic whose runs keep yielding gets the next pairs."""
    assert set(ordering.STRATEGY_OF) == set(PoolOrdering.values)
    campaign, judges = make_campaign(django_user_model, PoolOrdering.BANDIT_ACROSS_TOPICS)
    relevant = {"a", "b", "c"}
    for _ in range(4):
        grade_next(campaign, judges[0], lambda key: 3 if key[1] in relevant else 0)
    ordering.reorder_pool(campaign=campaign)
    pool = [
        (p.topic.qid, p.document.docno)
        for p in campaign.pairs.select_related("topic", "document").order_by(
            "topic__qid", "document__docno"
        )
    ]
    graded = [
        ((a.pair.topic.qid, a.pair.document.docno), a.judgment.grade)
        for a in Assignment.objects.filter(pair__campaign=campaign, status=AssignmentStatus.DONE)
        .select_related("pair__topic", "pair__document", "judgment")
        .order_by("judgment__created_at", "judgment__pk")
    ]
    rankings = ordering.pool_rankings(campaign, set(pool))
    plan, per_topic = (
        plan_order("bandit", pool, rankings, grades=graded, seed=campaign.seed, **options)
        for options in ({"across_topics": True}, {})
    )
    assert plan != per_topic, "the two bandits should plan differently after these grades"
    planned = set(plan)  # pairs graded by others that a judge still holds come after it
    for judge in judges:
        queue = open_queue(campaign, judge)
        ahead = [p for p in queue if p in planned]
        assert queue[: len(ahead)] == ahead == [p for p in plan if p in set(queue)]
