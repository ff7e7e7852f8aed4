import uuid
from collections import Counter

import polars as pl
import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from annotation import services
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Document,
    Judgment,
    JudgmentChange,
    Pair,
    PairSource,
    Topic,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(django_user_model):
    lead = django_user_model.objects.create_user("lead")
    judges = [django_user_model.objects.create_user(f"judge{i}") for i in range(3)]
    return lead, judges


def make_campaign(people, *, overlap=2, topics=("1", "2"), judges=None):
    lead, all_judges = people
    campaign = services.create_campaign(
        lead=lead, name="c", overlap=overlap, judges=all_judges if judges is None else judges
    )
    for qid in topics:
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    return campaign


def give_text(campaign):
    """Judges' queues hold only pairs whose document has text (pooling adds docnos bare)."""
    Document.objects.filter(campaign=campaign).update(text="A passage.")


def run_frame(rows):
    return pl.DataFrame(
        rows, schema={"qid": pl.String, "docno": pl.String, "score": pl.Float64}, orient="row"
    )


def test_a_campaign_gets_the_trec_dl_scale_by_default(people):
    campaign = make_campaign(people)
    assert campaign.grades == [0, 1, 2, 3]
    assert campaign.scale[3]["label"] == "Perfectly relevant"


def test_a_five_point_scale_can_be_chosen_and_a_bad_one_is_refused(people):
    lead, _ = people
    assert services.create_campaign(lead=lead, name="x", scale="0-5").grades == [0, 1, 2, 3, 4, 5]
    with pytest.raises(ValidationError, match="Unknown scale '1-10'"):
        services.create_campaign(lead=lead, name="x", scale="1-10")
    with pytest.raises(ValidationError, match="threshold 4 is not a grade"):
        services.create_campaign(lead=lead, name="x", relevance_threshold=4)


def test_an_update_saves_the_fields_given_and_leaves_the_others(people):
    campaign = make_campaign(people)
    change = services.update_campaign(campaign=campaign, name="renamed", guidelines="Read it.")
    campaign.refresh_from_db()
    assert (campaign.name, campaign.guidelines) == ("renamed", "Read it.")
    assert (campaign.overlap, campaign.grades) == (2, [0, 1, 2, 3])
    assert change.assigned == 0


def test_raising_the_overlap_gives_the_pairs_short_of_judges_more_judges(people):
    campaign = make_campaign(people, overlap=1)
    services.add_pairs(campaign=campaign, pairs=[("1", "d1"), ("2", "d2")], source="imported")
    change = services.update_campaign(campaign=campaign, overlap=3)
    assert change.assigned == 4, "two pairs, each from one judge to three"
    assert all(pair.assignments.count() == 3 for pair in campaign.pairs.all())
    assert services.update_campaign(campaign=campaign, overlap=2).assigned == 0, (
        "a lower overlap takes no work away"
    )


def test_an_update_cannot_drop_a_grade_judgments_use_and_then_saves_nothing(people):
    lead, judges = people
    campaign = services.create_campaign(lead=lead, name="c", scale="0-5", judges=judges[:1])
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    services.add_pairs(campaign=campaign, pairs=[("1", "d1")], source="imported")
    assignment = Assignment.objects.get(pair__campaign=campaign)
    services.record_judgment(assignment_id=assignment.pk, judge=judges[0], grade=4)
    with pytest.raises(ValidationError) as caught:
        services.update_campaign(campaign=campaign, scale="0-3", name="renamed")
    assert caught.value.message_dict == {
        "scale": [services.MESSAGES["grade_in_use"].format(grade=4, top=3)]
    }
    campaign.refresh_from_db()
    assert (campaign.name, campaign.grades) == ("c", [0, 1, 2, 3, 4, 5])


def test_an_update_keeps_the_relevance_threshold_on_the_scale(people):
    lead, _ = people
    campaign = services.create_campaign(lead=lead, name="c", scale="0-5", relevance_threshold=4)
    refusals = {}
    for changes in ({"relevance_threshold": 9}, {"scale": "0-3"}, {"overlap": 0}):
        with pytest.raises(ValidationError) as caught:
            services.update_campaign(campaign=campaign, **changes)
        refusals.update(caught.value.message_dict)
    assert refusals == {
        "relevance_threshold": ["The relevance threshold 9 is not a grade of the scale."],
        "scale": ["The relevance threshold 4 is not a grade of the scale."],
        "overlap": [services.MESSAGES["overlap_below_one"]],
    }
    with pytest.raises(ValueError, match="cannot change lead"):
        services.update_campaign(campaign=campaign, lead=lead)


def test_pooling_two_runs_assigns_every_pair_to_overlap_judges(people):
    campaign = make_campaign(people, overlap=2)
    a = run_frame([("1", f"d{i}", 10.0 - i) for i in range(15)] + [("9", "x", 1.0)])
    b = run_frame([("1", f"d{i}", float(i)) for i in range(15)] + [("2", "e1", 1.0)])
    change = services.pool_from_runs(campaign=campaign, run_frames=[a, b], depth=10)
    # topic 1: top 10 of a is d0..d9, of b d14..d5 → union 15; topic 2: e1; topic 9 not ours.
    assert (change.added, change.new_documents) == (16, 16)
    assert change.assigned == 32
    per_pair = Counter(Assignment.objects.values_list("pair_id", flat=True))
    assert set(per_pair.values()) == {2}
    assert not Document.objects.exclude(text="").exists(), "pooled documents start without text"
    again = services.pool_from_runs(campaign=campaign, run_frames=[a], depth=10)
    assert (again.added, again.already, again.assigned) == (0, 10, 0)


@pytest.mark.django_db(transaction=True)
def test_pairs_added_in_batches_commit_each_batch_and_a_second_run_adds_the_rest(people):
    """A job adds a large pool a batch per transaction (other writers get the database in
    between); a batch that fails leaves the ones before it, and running again completes."""
    campaign = make_campaign(people, overlap=2)
    pairs = [("1", f"d{i}") for i in range(5)] + [("2", "e1"), ("zz", "x")]  # zz: no topic
    seen = []

    with pytest.raises(ValidationError, match="zz"):
        services.add_pairs_in_batches(
            campaign=campaign,
            pairs=pairs,
            source=PairSource.IMPORTED,
            batch=2,
            on_batch=lambda done, total: seen.append((done, total)),
        )
    assert seen == [(2, 7), (4, 7), (6, 7)], "three batches committed before the bad one"
    assert Pair.objects.filter(campaign=campaign).count() == 6

    change = services.add_pairs_in_batches(
        campaign=campaign, pairs=pairs[:-1], source=PairSource.IMPORTED, batch=2
    )
    assert (change.added, change.already, change.assigned) == (0, 6, 0)
    once = services.add_pairs(
        campaign=make_campaign(people, overlap=2), pairs=pairs[:-1], source=PairSource.IMPORTED
    )
    assert (once.added, once.assigned) == (6, 12), "the same pairs at once, for comparison"
    per_pair = Counter(
        Assignment.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True)
    )
    assert set(per_pair.values()) == {2}, "every pair of the batches has its overlap"


def test_each_judge_works_through_whole_topics_in_their_own_order(people):
    campaign = make_campaign(people, overlap=1, topics=("1",))
    services.add_pairs(
        campaign=campaign, pairs=[("1", f"d{i}") for i in range(30)], source=PairSource.IMPORTED
    )
    give_text(campaign)
    queue = services.judge_queue(campaign=campaign, judge=Assignment.objects.first().judge)
    assert len(queue) == 30, "overlap 1 with one topic: one judge gets the whole topic"
    docnos = list(
        Assignment.objects.filter(pk__in=queue)
        .order_by("position")
        .values_list("pair__document__docno", flat=True)
    )
    assert docnos != sorted(docnos), "documents should come in a shuffled order"


def test_unknown_topics_are_refused_and_nothing_is_added(people):
    campaign = make_campaign(people)
    with pytest.raises(ValidationError, match="Topics not in this campaign: 7"):
        services.add_pairs(
            campaign=campaign, pairs=[("1", "d1"), ("7", "d2")], source=PairSource.IMPORTED
        )
    assert Pair.objects.count() == Document.objects.count() == 0


def test_the_database_refuses_a_pair_beyond_its_overlap(people):
    campaign = make_campaign(people, overlap=1)
    services.add_pairs(campaign=campaign, pairs=[("1", "d1")], source=PairSource.IMPORTED)
    pair = Pair.objects.get()
    other = next(j for j in people[1] if not pair.assignments.filter(judge=j).exists())
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(pair=pair, judge=other, slot=1, overlap=1, position=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(pair=pair, judge=other, slot=2, overlap=1, position=1)


def test_the_database_refuses_a_judge_holding_a_pair_twice(people):
    campaign = make_campaign(people, overlap=2)
    services.add_pairs(campaign=campaign, pairs=[("1", "d1")], source=PairSource.IMPORTED)
    assignment = Assignment.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            pair=assignment.pair, judge=assignment.judge, slot=3, overlap=3, position=9
        )


def judged_setup(people):
    campaign = make_campaign(people, overlap=1, topics=("1",), judges=people[1][:1])
    services.add_pairs(
        campaign=campaign, pairs=[("1", "d1"), ("1", "d2")], source=PairSource.IMPORTED
    )
    give_text(campaign)
    return campaign, people[1][0]


def test_recording_a_grade_closes_the_assignment_and_keeps_history(people):
    campaign, judge = judged_setup(people)
    assignment = services.next_open_assignment(campaign=campaign, judge=judge)
    services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=2, seconds=4.5)
    services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=3, seconds=1.5)
    judgment = Judgment.objects.get()
    assert (judgment.grade, judgment.seconds) == (3, 6.0)
    assert list(JudgmentChange.objects.values_list("action", "old_grade", "new_grade")) == [
        ("graded", None, 2),
        ("regraded", 2, 3),
    ]
    assert services.next_open_assignment(campaign=campaign, judge=judge).pk != assignment.pk


def test_a_retried_submission_is_applied_once(people):
    campaign, judge = judged_setup(people)
    assignment = services.next_open_assignment(campaign=campaign, judge=judge)
    request_id = uuid.uuid4()
    for _ in range(3):
        services.record_judgment(
            assignment_id=assignment.pk, judge=judge, grade=1, seconds=5, request_id=request_id
        )
    assert Judgment.objects.get().seconds == 5
    assert JudgmentChange.objects.count() == 1


def test_grades_outside_the_scale_are_refused(people):
    campaign, judge = judged_setup(people)
    assignment = services.next_open_assignment(campaign=campaign, judge=judge)
    with pytest.raises(
        ValidationError, match=r"Grade 4 is not on this campaign's scale \(0, 1, 2, 3\)"
    ):
        services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=4)
    assert not Judgment.objects.exists()


def test_nobody_can_grade_another_judges_assignment(people, django_user_model):
    campaign, judge = judged_setup(people)
    assignment = services.next_open_assignment(campaign=campaign, judge=judge)
    intruder = django_user_model.objects.create_user("mallory")
    for action in (
        lambda: services.record_judgment(assignment_id=assignment.pk, judge=intruder, grade=1),
        lambda: services.skip_assignment(assignment_id=assignment.pk, judge=intruder, reason="x"),
        lambda: services.undo_judgment(assignment_id=assignment.pk, judge=intruder),
    ):
        with pytest.raises(PermissionDenied):
            action()
    assert not Judgment.objects.exists()


def test_skip_needs_a_reason_and_undo_reopens_the_pair(people):
    campaign, judge = judged_setup(people)
    assignment = services.next_open_assignment(campaign=campaign, judge=judge)
    with pytest.raises(ValidationError, match="Say why you skip"):
        services.skip_assignment(assignment_id=assignment.pk, judge=judge, reason="  ")
    services.skip_assignment(assignment_id=assignment.pk, judge=judge, reason="can't judge")
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.SKIPPED
    services.undo_judgment(assignment_id=assignment.pk, judge=judge)
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.OPEN
    assert not Judgment.objects.exists()
    assert list(JudgmentChange.objects.values_list("action", flat=True)) == ["skipped", "undone"]


def test_removing_a_judge_redistributes_open_work_and_keeps_their_grades(people):
    campaign = make_campaign(people, overlap=2, topics=("1", "2"))
    services.add_pairs(
        campaign=campaign,
        pairs=[(q, f"d{i}") for q in ("1", "2") for i in range(5)],
        source=PairSource.IMPORTED,
    )
    give_text(campaign)
    leaving = Assignment.objects.values_list("judge", flat=True).first()
    leaving = type(people[0]).objects.get(pk=leaving)
    graded = services.next_open_assignment(campaign=campaign, judge=leaving)
    services.record_judgment(assignment_id=graded.pk, judge=leaving, grade=1)
    moved = services.remove_judge(campaign=campaign, judge=leaving)
    assert moved > 0
    assert Assignment.objects.filter(judge=leaving).count() == 1, "their graded pair stays theirs"
    per_pair = Counter(Assignment.objects.values_list("pair_id", flat=True))
    assert set(per_pair.values()) == {2}, "every pair is back to two judges"


def test_progress_flags_suspiciously_fast_judges(people):
    campaign, judge = judged_setup(people)
    for assignment_id in services.judge_queue(campaign=campaign, judge=judge):
        services.record_judgment(assignment_id=assignment_id, judge=judge, grade=0, seconds=0.8)
    (progress,) = services.judge_progress(campaign=campaign)
    assert (progress.done, progress.total, progress.median_seconds, progress.too_fast) == (
        2,
        2,
        0.8,
        True,
    )


def test_a_removed_judges_grade_keeps_its_slot_when_new_judges_fill_the_pair(
    people, django_user_model
):
    """Regression: assign_pending took min() of no free slot (ValueError). A removed judge's
    grade stays on the pair and counts toward its overlap, so new judges fill only the
    slots that are free, ordinary and calibration pairs alike."""
    _, (a, b, _) = people
    campaign = make_campaign(people, overlap=3, topics=("1",))
    services.add_pairs(campaign=campaign, pairs=[("1", "d0")], source=PairSource.IMPORTED)
    services.set_gold(campaign=campaign, entries=[("1", "g0", 2)])
    for assignment in Assignment.objects.filter(judge=a):
        services.record_judgment(assignment_id=assignment.pk, judge=a, grade=1)
    services.remove_judge(campaign=campaign, judge=b)  # the pairs keep a (graded) and c
    services.remove_judge(campaign=campaign, judge=a)  # a's grades stay
    d, e = (django_user_model.objects.create_user(name) for name in ("d", "e"))
    services.add_judge(campaign=campaign, judge=d)
    services.add_judge(campaign=campaign, judge=e)
    ordinary = Pair.objects.get(document__docno="d0")
    gold = Pair.objects.get(document__docno="g0")
    assert sorted(ordinary.assignments.values_list("slot", flat=True)) == [1, 2, 3]
    assert set(gold.assignments.values_list("judge__username", flat=True)) == {
        "judge0",
        "judge2",
        "d",
        "e",
    }, "a calibration pair goes to every judge, beside the removed judge's grade"
    slots = list(gold.assignments.values_list("slot", flat=True))
    assert len(set(slots)) == len(slots)
