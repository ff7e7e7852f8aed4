"""Racing requests cannot break the overlap promise (issue: judging, item 4).

Each thread gets its own database connection (Django connections are per thread), so on
PostgreSQL these are real concurrent transactions. The services serialise assignment on a
row lock of the campaign; the unique (pair, slot) and (pair, judge) constraints and the
slot <= overlap check are the last line of defence, tested here directly as well. Grading
locks only the graded assignment's row, so the lead's operations that touch assignments
(reassigning, changing the scale) lock those rows too; the races between them are below.
"""

import threading
import uuid
from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, close_old_connections, connection

from annotation import services
from annotation.models import (
    Assignment,
    AssignmentStatus,
    CampaignJudge,
    Document,
    Judgment,
    JudgmentChange,
    Pair,
    PairSource,
    Topic,
)

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8


def race(target, count=THREADS):
    """Run ``target(i)`` in ``count`` threads released at the same instant; return what each
    returned or raised."""
    barrier = threading.Barrier(count)
    outcomes = [None] * count

    def run(i):
        try:
            barrier.wait()
            outcomes[i] = target(i)
        except Exception as error:  # collected and asserted on by the test
            outcomes[i] = error
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcomes


@pytest.fixture
def campaign(django_user_model):
    lead = django_user_model.objects.create_user("lead")
    judges = [django_user_model.objects.create_user(f"j{i}") for i in range(4)]
    campaign = services.create_campaign(lead=lead, name="race", overlap=2)
    for qid in ("1", "2", "3"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"q{qid}")
    # Pairs first, judges later: every concurrent add_judge below assigns.
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, f"d{i}") for q in ("1", "2", "3") for i in range(20)],
        source=PairSource.IMPORTED,
    )
    # Judges' queues hold only pairs whose document has text.
    Document.objects.filter(campaign=campaign).update(text="A passage.")
    return campaign, judges


def assert_overlap_kept(campaign):
    per_pair = Counter(
        Assignment.objects.filter(pair__campaign=campaign).values_list("pair", flat=True)
    )
    assert len(per_pair) == Pair.objects.filter(campaign=campaign).count()
    assert set(per_pair.values()) == {campaign.overlap}, "every pair has exactly `overlap` judges"
    pairs_judges = Assignment.objects.filter(pair__campaign=campaign).values_list("pair", "judge")
    assert len(set(pairs_judges)) == len(pairs_judges), "no judge holds a pair twice"


def test_judges_added_concurrently_never_exceed_the_overlap(campaign):
    campaign, judges = campaign
    outcomes = race(lambda i: services.add_judge(campaign=campaign, judge=judges[i % 4]))
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert CampaignJudge.objects.filter(campaign=campaign).count() == 4
    assert_overlap_kept(campaign)


def test_concurrent_assign_pending_fills_each_slot_once(campaign):
    campaign, judges = campaign
    for judge in judges:
        CampaignJudge.objects.create(campaign=campaign, judge=judge)
    outcomes = race(lambda i: services.assign_pending(campaign=campaign))
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert sum(outcomes) == 60 * 2, "the pairs' slots were filled once in all"
    assert_overlap_kept(campaign)


def test_the_database_lets_exactly_one_racer_take_a_slot(campaign):
    campaign, judges = campaign
    pair = Pair.objects.filter(campaign=campaign).first()
    outcomes = race(
        lambda i: Assignment.objects.create(
            pair=pair, judge=judges[i % 4], slot=1, overlap=2, position=i
        ),
        count=4,
    )
    assert sum(isinstance(o, Assignment) for o in outcomes) == 1
    assert all(isinstance(o, IntegrityError) for o in outcomes if not isinstance(o, Assignment))


def test_racing_retries_of_one_grade_store_one_judgment(campaign):
    campaign, judges = campaign
    services.add_judge(campaign=campaign, judge=judges[0])
    services.add_judge(campaign=campaign, judge=judges[1])
    assignment = services.next_open_assignment(campaign=campaign, judge=judges[0])
    request_id = uuid.uuid4()
    outcomes = race(
        lambda i: services.record_judgment(
            assignment_id=assignment.pk, judge=judges[0], grade=2, seconds=3, request_id=request_id
        )
    )
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    judgment = Judgment.objects.get(assignment=assignment)
    assert (judgment.grade, judgment.seconds) == (2, 3)
    assert JudgmentChange.objects.filter(assignment=assignment).count() == 1


def test_reassigning_waits_for_a_grade_in_flight_and_leaves_that_pair_alone(campaign):
    from django.db import transaction

    campaign, judges = campaign
    for judge in judges[:3]:
        # j0 and j1 hold every pair (overlap 2); j2 comes when nothing is left to give.
        services.add_judge(campaign=campaign, judge=judge)
    graded = services.judge_queue(campaign=campaign, judge=judges[0])[0]
    moved = []
    with transaction.atomic():
        # A grade in flight: its transaction holds the assignment's row lock.
        services.record_judgment(
            assignment_id=graded, judge=judges[0], grade=1, campaign_id=campaign.pk
        )
        mover = threading.Thread(
            target=lambda: moved.append(
                services.reassign(campaign=campaign, from_judge=judges[0], to_judge=judges[2])
            )
        )
        mover.start()
        mover.join(0.5)
        assert mover.is_alive(), "reassign must wait for the grade to commit"
    mover.join(30)
    assert moved == [59]  # all of j0's 60 pairs but the graded one
    assignment = Assignment.objects.get(pk=graded)
    assert (assignment.judge_id, assignment.status) == (judges[0].pk, AssignmentStatus.DONE)
    assert services.judge_queue(campaign=campaign, judge=judges[0]) == [graded]
    assert_overlap_kept(campaign)


@pytest.mark.parametrize("attempt", range(3))
def test_a_grade_and_a_narrower_scale_never_both_win(campaign, attempt):
    campaign, judges = campaign
    services.update_campaign(campaign=campaign, scale="0-5")
    services.add_judge(campaign=campaign, judge=judges[0])
    services.add_judge(campaign=campaign, judge=judges[1])
    queue = services.judge_queue(campaign=campaign, judge=judges[0])

    def act(i):
        if i == 0:
            return services.update_campaign(campaign=campaign, scale="0-3")
        return services.record_judgment(
            assignment_id=queue[i], judge=judges[0], grade=5, request_id=uuid.uuid4()
        )

    outcomes = race(act, count=4)
    scale_changed = not isinstance(outcomes[0], Exception)
    grades_stored = Judgment.objects.filter(grade=5).count()
    assert not (scale_changed and grades_stored), outcomes
    assert all(isinstance(o, ValidationError) for o in outcomes if isinstance(o, Exception)), (
        outcomes
    )
    assert JudgmentChange.objects.count() == grades_stored


def test_two_leads_deciding_one_pair_at_once_make_one_decision_and_one_conflict(
    campaign, django_user_model
):
    from annotation.models import LeadDecision
    from annotation.services import adjudication

    campaign, judges = campaign
    services.add_judge(campaign=campaign, judge=judges[0])
    services.add_judge(campaign=campaign, judge=judges[1])
    leads = [campaign.lead, django_user_model.objects.create_user("co-lead")]
    pair = Pair.objects.filter(campaign=campaign).first()
    outcomes = race(
        lambda i: adjudication.decide_pair(
            campaign=campaign,
            pair_id=pair.pk,
            lead=leads[i % 2],
            grade=i % 4,
            reason=f"lead {i}",
            based_on=None,
        )
    )
    decided = [o for o in outcomes if isinstance(o, LeadDecision)]
    conflicts = [o for o in outcomes if isinstance(o, adjudication.DecisionConflict)]
    assert len(decided) == 1 and len(conflicts) == THREADS - 1, outcomes
    assert LeadDecision.objects.filter(pair=pair).count() == 1
    winner = decided[0]
    for conflict in conflicts:
        assert conflict.current.pk == winner.pk
        assert f"decided this pair as {winner.grade}" in str(conflict)


def test_judges_grading_one_pair_at_once_leave_its_tally_right(django_user_model):
    """Every judge of one pair grades it at the same instant: the pair's tally (which the
    disagreement queue filters on) counts every grade, since each grade recounts the tally
    under a lock on the pair row, after the grades committed before it."""
    from annotation.services.tallies import FIELDS, tally_pairs

    lead = django_user_model.objects.create_user("race-lead")
    judges = [django_user_model.objects.create_user(f"racer{i}") for i in range(THREADS)]
    campaign = services.create_campaign(lead=lead, name="Race", overlap=THREADS, judges=judges)
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    services.add_pairs(campaign=campaign, pairs=[("1", "d")], source=PairSource.IMPORTED)
    mine = {a.judge_id: a.pk for a in Assignment.objects.filter(pair__campaign=campaign)}

    def grade(i):
        judge = judges[i]
        return services.record_judgment(assignment_id=mine[judge.pk], judge=judge, grade=i % 4)

    outcomes = race(grade)
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    pair = Pair.objects.values(*FIELDS).get(campaign=campaign)
    assert pair == {
        "judges_assigned": THREADS,
        "judges_open": 0,
        "judges_graded": THREADS,
        "lowest_grade": 0,
        "highest_grade": 3,
        "grades_tied": True,  # 0, 1, 2, 3 twice each
        "machines_graded": 0,
    }
    tally_pairs(campaign=campaign)
    assert Pair.objects.values(*FIELDS).get(campaign=campaign) == pair


def test_judges_grading_pairs_of_one_topic_at_once_leave_its_counts_right(django_user_model):
    """Judges grade different pairs of one topic at the same instant: the topic's counts
    (TopicTally, which the queue, publish and progress pages add up) hold every grade, since
    each grade recounts the topic under a lock on its row, after the grades committed
    before it."""
    from annotation.models import TopicTally
    from annotation.services.tallies import TOPIC_FIELDS, count_topics

    lead = django_user_model.objects.create_user("topic-race-lead")
    judges = [django_user_model.objects.create_user(f"topic-racer{i}") for i in range(THREADS)]
    campaign = services.create_campaign(
        lead=lead, name="Topic race", overlap=THREADS, judges=judges
    )
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    services.add_pairs(
        campaign=campaign,
        pairs=[("1", f"d{i}") for i in range(THREADS)],
        source=PairSource.IMPORTED,
    )
    # Judge i grades pair i: every judge a different pair of the one topic.
    mine = {
        (a.judge_id, a.pair.document.docno): a.pk
        for a in Assignment.objects.filter(pair__campaign=campaign).select_related("pair__document")
    }

    def grade(i):
        judge = judges[i]
        return services.record_judgment(
            assignment_id=mine[judge.pk, f"d{i}"], judge=judge, grade=i % 4
        )

    outcomes = race(grade)
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    stored = TopicTally.objects.values(*TOPIC_FIELDS).get(campaign=campaign)
    assert stored["graded"] == THREADS and stored["judged"] == THREADS
    count_topics(campaign=campaign)
    assert TopicTally.objects.values(*TOPIC_FIELDS).get(campaign=campaign) == stored


@pytest.fixture
def graded(campaign):
    """Every pair of the race campaign graded 1 by both of its judges (unanimous)."""
    campaign, judges = campaign
    for judge in judges[:2]:
        services.add_judge(campaign=campaign, judge=judge)
    for a in Assignment.objects.filter(pair__campaign=campaign).select_related("judge"):
        services.record_judgment(assignment_id=a.pk, judge=a.judge, grade=1)
    return campaign


def test_identical_publications_at_once_make_one_version(graded):
    from annotation.models import Publication
    from annotation.services import adjudication

    outcomes = race(lambda i: adjudication.publish(campaign=graded, user=graded.lead))
    published = [o for o in outcomes if isinstance(o, Publication)]
    refused = [o for o in outcomes if isinstance(o, adjudication.IdenticalGrades)]
    assert len(published) == 1 and len(refused) == THREADS - 1, outcomes
    assert {r.latest.pk for r in refused} == {published[0].qrels_id}
    assert Publication.objects.filter(campaign=graded).count() == 1


def test_confirmed_copies_at_once_make_one_copy(graded):
    from annotation.models import Publication
    from annotation.services import adjudication

    first = adjudication.publish(campaign=graded, user=graded.lead).qrels
    outcomes = race(
        lambda i: adjudication.publish(campaign=graded, user=graded.lead, identical_to=first.pk)
    )
    published = [o for o in outcomes if isinstance(o, Publication)]
    refused = [o for o in outcomes if isinstance(o, adjudication.IdenticalGrades)]
    assert len(published) == 1 and len(refused) == THREADS - 1, outcomes
    assert published[0].qrels.version == 2
    assert {r.latest.pk for r in refused} == {published[0].qrels_id}
    assert Publication.objects.filter(campaign=graded).count() == 2


def test_two_campaigns_publishing_one_name_at_once_never_crash(graded, django_user_model):
    """Each campaign's lock does not hold the other: the database's unique (name, version)
    does, and the loser is told to publish again, never a server error."""
    from annotation.models import Publication
    from annotation.services import adjudication

    other = services.create_campaign(lead=graded.lead, name="race twin", overlap=1)
    Topic.objects.create(campaign=other, qid="1", query="q1")
    services.add_pairs(campaign=other, pairs=[("1", "x1")], source=PairSource.IMPORTED)
    judge = django_user_model.objects.create_user("twin judge")
    services.add_judge(campaign=other, judge=judge)
    a = Assignment.objects.get(pair__campaign=other)
    services.record_judgment(assignment_id=a.pk, judge=judge, grade=2)
    campaigns = [graded, other]

    outcomes = race(
        lambda i: adjudication.publish(campaign=campaigns[i % 2], user=graded.lead, name="shared"),
        count=4,
    )

    published = [o for o in outcomes if isinstance(o, Publication)]
    refused = [o for o in outcomes if isinstance(o, ValidationError)]
    assert len(published) + len(refused) == 4, outcomes
    versions = sorted(p.qrels.version for p in published)
    assert versions == list(range(1, len(published) + 1)), "one number each, none skipped"
    assert Publication.objects.count() == len(published) >= 1
    # A refusal is a copy of the newest version (the same campaign twice in a row), or a
    # racer that lost the version number, told to publish again.
    for error in refused:
        assert isinstance(error, adjudication.IdenticalGrades) or (
            "was stored at the same moment" in error.messages[0]
        ), error
