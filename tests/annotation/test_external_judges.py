"""Judges of three kinds (issue 12 part 2): outside people and machines beside the people who
judge here; the machine-grade interface the LLM judge runner calls; the campaign's settings
for machine grades in adjudication and publication."""

import pytest
from django.core.exceptions import ValidationError

from annotation import services
from annotation.models import Assignment, ExternalGrade, JudgeKind, Pair, PublishedGrade, Topic
from annotation.services import adjudication as adj
from annotation.services import agreement, final_grades, grade_tables
from annotation.services.external import add_external_judge, record_machine_grade
from evaluation.models import QrelsEntry

pytestmark = pytest.mark.django_db


def pair_of(campaign, qid, docno) -> Pair:
    return Pair.objects.get(campaign=campaign, topic__qid=qid, document__docno=docno)


def test_a_machine_grade_is_stored_once_per_pair_and_judge(setup):
    campaign, _, _ = setup
    machine = add_external_judge(campaign=campaign, name="gpt-x v1", kind=JudgeKind.MACHINE)
    pair = pair_of(campaign, "1", "d0")
    row, created = record_machine_grade(judge=machine, pair_id=pair.pk, grade=2)
    assert created and row.grade == 2 and row.source is None
    again, created = record_machine_grade(judge=machine, pair_id=pair.pk, grade=3)
    assert not created and again.pk == row.pk and again.grade == 2
    assert ExternalGrade.objects.count() == 1


def test_adding_a_judge_twice_returns_the_same_judge_and_refuses_a_kind_change(setup):
    campaign, _, _ = setup
    first = add_external_judge(campaign=campaign, name="w1", kind=JudgeKind.OUTSIDE)
    assert add_external_judge(campaign=campaign, name="w1", kind=JudgeKind.OUTSIDE) == first
    with pytest.raises(ValidationError, match="already a judge"):
        add_external_judge(campaign=campaign, name="w1", kind=JudgeKind.MACHINE)
    with pytest.raises(ValidationError, match="without control characters"):
        add_external_judge(campaign=campaign, name="a\nb", kind=JudgeKind.OUTSIDE)
    assert add_external_judge(campaign=campaign, name="qwen2.5:7b", kind=JudgeKind.MACHINE)
    with pytest.raises(ValidationError, match="outside person or a machine"):
        add_external_judge(campaign=campaign, name="x", kind=JudgeKind.HERE)


def test_a_machine_grade_is_refused_off_scale_of_another_campaign_or_for_a_person(setup):
    campaign, lead, judges = setup
    machine = add_external_judge(campaign=campaign, name="m", kind=JudgeKind.MACHINE)
    outside = add_external_judge(campaign=campaign, name="w", kind=JudgeKind.OUTSIDE)
    other = services.create_campaign(lead=lead, name="Other", judges=judges)
    Topic.objects.create(campaign=other, qid="9", query="q")
    services.add_pairs(campaign=other, pairs=[("9", "x")], source="imported")
    pair = pair_of(campaign, "1", "d0")
    with pytest.raises(ValidationError, match="not on this campaign's scale"):
        record_machine_grade(judge=machine, pair_id=pair.pk, grade=4)
    with pytest.raises(ValidationError, match="not in the campaign"):
        record_machine_grade(judge=machine, pair_id=pair_of(other, "9", "x").pk, grade=1)
    with pytest.raises(ValidationError, match="not a machine judge"):
        record_machine_grade(judge=outside, pair_id=pair.pk, grade=1)
    assert not ExternalGrade.objects.exists()


def test_machine_grades_take_no_overlap_slot_and_count_in_adjudication_only_when_asked(setup):
    campaign, _, judges = setup
    machine = add_external_judge(campaign=campaign, name="m", kind=JudgeKind.MACHINE)
    pair = pair_of(campaign, "1", "d0")
    record_machine_grade(judge=machine, pair_id=pair.pk, grade=3)
    pair.refresh_from_db()
    assert Assignment.objects.filter(pair=pair).count() == campaign.overlap
    assert (pair.judges_assigned, pair.judges_graded, pair.highest_grade) == (3, 0, None)
    campaign = services.update_campaign(campaign=campaign, machine_grades_adjudicate=True).campaign
    pair.refresh_from_db()
    assert (pair.judges_assigned, pair.judges_graded, pair.highest_grade) == (4, 1, 3)
    for judge in judges:
        assignment = Assignment.objects.get(pair=pair, judge=judge)
        services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=1)
    state = {s.pair_id: s for s in final_grades.pair_states(campaign=campaign)}[pair.pk]
    assert sorted(state.grades) == [1, 1, 1, 3] and state.basis == "majority"
    assert "machine:m" in {j.username for j in state.judgments}
    campaign = services.update_campaign(campaign=campaign, machine_grades_adjudicate=False).campaign
    state = {s.pair_id: s for s in final_grades.pair_states(campaign=campaign)}[pair.pk]
    assert state.grades == [1, 1, 1] and state.basis == "unanimous"


def test_outside_people_count_as_human_judges_in_agreement_and_adjudication(setup):
    campaign, _, _ = setup
    outside = add_external_judge(campaign=campaign, name="w17", kind=JudgeKind.OUTSIDE)
    machine = add_external_judge(campaign=campaign, name="m", kind=JudgeKind.MACHINE)
    pair = pair_of(campaign, "2", "d2")
    ExternalGrade.objects.create(judge=outside, pair=pair, grade=2)
    record_machine_grade(judge=machine, pair_id=pair.pk, grade=0)
    judges = {g.judge for g in agreement.graded_judgments(campaign=campaign)}
    assert judges == {"outside:w17"}  # machines never enter the humans' statistics


def test_a_publication_fills_pairs_no_human_graded_only_when_the_campaign_says_so(setup):
    campaign, lead, judges = setup
    machine = add_external_judge(campaign=campaign, name="m", kind=JudgeKind.MACHINE)
    other = add_external_judge(campaign=campaign, name="n", kind=JudgeKind.MACHINE)
    for pair in Pair.objects.filter(campaign=campaign):
        record_machine_grade(judge=machine, pair_id=pair.pk, grade=1)
    record_machine_grade(judge=other, pair_id=pair_of(campaign, "1", "d1").pk, grade=3)
    first = pair_of(campaign, "1", "d0")
    for judge in judges:
        assignment = Assignment.objects.get(pair=first, judge=judge)
        services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=2)
    off = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True)
    assert off.counts == {"unanimous": 1, "left_out": 5}
    campaign = services.update_campaign(campaign=campaign, machine_grades_fill=True).campaign
    on = adj.publish(campaign=campaign, user=lead)
    assert on.counts == {"unanimous": 1, "machine": 5, "left_out": 0}
    assert "5 of its 6 grades are a machine judge's" in on.qrels.description
    filled = PublishedGrade.objects.get(publication=on, qid="1", docno="d1")
    assert (filled.grade, filled.basis) == (1, "machine")  # lower median of 1 and 3
    assert filled.judges == {"machine:m": 1, "machine:n": 3}
    human = PublishedGrade.objects.get(publication=on, qid="1", docno="d0")
    assert human.basis == "unanimous" and "machine:m" not in human.judges
    assert QrelsEntry.objects.filter(qrels=on.qrels).count() == 6
    rows = list(grade_tables.provenance_table(on))
    assert sum(1 for row in rows if row[3] == "machine") == 5
