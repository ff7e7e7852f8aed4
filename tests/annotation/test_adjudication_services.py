"""From judgments to a published qrels version: final grades by rule, lead decisions with
conflicts, calibration pairs, publishing with provenance, diffs (issue: agreement and
adjudication, items 3-5)."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.utils.text import slugify
from hypothesis import given
from hypothesis import strategies as st

from annotation import services
from annotation.models import (
    AdjudicationRule,
    Assignment,
    LeadDecision,
    Pair,
    PublishedGrade,
)
from annotation.services import adjudication as adj
from annotation.services import final_grades, grade_tables
from evaluation import services as evaluation
from evaluation.models import QrelsSource
from tests.annotation.adjudication_data import GRADES, grade_all

pytestmark = pytest.mark.django_db


def states_by_key(campaign):
    return {(s.qid, s.docno): s for s in final_grades.pair_states(campaign=campaign)}


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            AdjudicationRule.MAJORITY,
            {
                ("1", "d0"): (2, "unanimous"),
                ("1", "d1"): (3, "majority"),
                ("2", "d0"): (1, "majority"),
            },
        ),
        (
            AdjudicationRule.MEDIAN,
            {
                ("1", "d0"): (2, "unanimous"),
                ("1", "d1"): (3, "median"),
                ("1", "d2"): (1, "median"),
                ("2", "d0"): (1, "median"),
            },
        ),
        (AdjudicationRule.LEAD, {("1", "d0"): (2, "unanimous")}),
    ],
)
def test_final_grades_follow_the_campaigns_rule(setup, rule, expected):
    campaign, _, judges = setup
    campaign.adjudication_rule = rule
    campaign.save()
    grade_all(campaign, judges, GRADES)
    states = states_by_key(campaign)
    decided = {key: (s.grade, s.basis) for key, s in states.items() if s.decided}
    assert decided == expected
    assert states["2", "d1"].why == "every judge skipped it"
    assert states["2", "d2"].why == "3 of 3 judges have not graded it yet"


def test_the_disagreement_queue_puts_threshold_straddlers_first_then_spread(setup):
    campaign, _, judges = setup
    grade_all(campaign, judges, GRADES)
    queue = adj.disagreement_queue(campaign=campaign)
    assert [(s.qid, s.docno) for s in queue] == [("1", "d1"), ("1", "d2"), ("2", "d0")]
    undecided = adj.disagreement_queue(campaign=campaign, undecided_only=True)
    assert [(s.qid, s.docno) for s in undecided] == [("1", "d2")]
    assert [j.grade for j in queue[0].judgments] == [0, 3, 3]


def test_a_lead_decision_settles_a_pair_and_a_stale_one_is_a_conflict(setup, django_user_model):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    pair = Pair.objects.get(topic__qid="1", document__docno="d2")
    first = adj.decide_pair(
        campaign=campaign, pair_id=pair.pk, lead=lead, grade=1, reason="on topic", based_on=None
    )
    state = states_by_key(campaign)["1", "d2"]
    assert (state.grade, state.basis, state.why) == (1, "lead", "on topic")

    other = django_user_model.objects.create_user("co-lead")
    with pytest.raises(adj.DecisionConflict, match=r"lead decided this pair as 1 at .* reload"):
        adj.decide_pair(
            campaign=campaign, pair_id=pair.pk, lead=other, grade=2, reason="no", based_on=None
        )
    second = adj.decide_pair(
        campaign=campaign, pair_id=pair.pk, lead=other, grade=2, reason="better", based_on=first.pk
    )
    assert second.supersedes == first
    assert states_by_key(campaign)["1", "d2"].grade == 2
    assert LeadDecision.objects.count() == 2  # the log keeps both


@pytest.mark.parametrize(
    ("grade", "reason", "message"),
    [(1, "  ", "Give a reason"), (4, "ok", "Grade 4 is not on this campaign's scale")],
)
def test_a_decision_needs_a_reason_and_a_grade_of_the_scale(setup, grade, reason, message):
    campaign, lead, _ = setup
    pair = Pair.objects.first()
    with pytest.raises(ValidationError, match=message):
        adj.decide_pair(
            campaign=campaign, pair_id=pair.pk, lead=lead, grade=grade, reason=reason, based_on=None
        )
    assert not LeadDecision.objects.exists()


def test_publishing_is_blocked_by_undecided_pairs_unless_they_are_left_out(setup):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    with pytest.raises(adj.PublishBlocked) as blocked:
        adj.publish(campaign=campaign, user=lead)
    assert {(s.qid, s.docno) for s in blocked.value.undecided} == {
        ("1", "d2"),
        ("2", "d1"),
        ("2", "d2"),
    }
    assert not campaign.publications.exists()

    publication = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True)
    qrels = publication.qrels
    assert (qrels.name, qrels.version, qrels.source) == ("web-track-2026", 1, QrelsSource.CAMPAIGN)
    assert list(qrels.entries.order_by("qid", "docno").values_list("qid", "docno", "grade")) == [
        ("1", "d0", 2),
        ("1", "d1", 3),
        ("2", "d0", 1),
    ]
    assert publication.counts == {"unanimous": 1, "majority": 2, "left_out": 3}
    assert sorted(row[:2] for row in publication.left_out) == [
        ["1", "d2"],
        ["2", "d1"],
        ["2", "d2"],
    ]
    provenance = PublishedGrade.objects.get(publication=publication, qid="1", docno="d1")
    assert (provenance.basis, provenance.judges) == ("majority", {"j0": 0, "j1": 3, "j2": 3})
    # The checksum is the canonical TREC export's, as for imported qrels.
    imported = evaluation.import_qrels(
        source=b"1 0 d0 2\n1 0 d1 3\n2 0 d0 1\n", filename="same.txt", name="same"
    )
    assert imported.checksum == qrels.checksum


def test_a_published_version_scores_a_run_through_evaluate(setup, tmp_path, capsys):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    adj.publish(campaign=campaign, user=lead, leave_out_undecided=True)
    run = tmp_path / "run.txt"
    # Topic 1: d1 (3) above d0 (2) is ideal; topic 2: d0 (1) alone is ideal.
    run.write_text("1 Q0 d1 1 3.0 sys\n1 Q0 d0 2 2.0 sys\n2 Q0 d0 1 1.0 sys\n")
    call_command("evaluate", "web-track-2026", str(run), "-m", "ndcg_cut.10")
    assert capsys.readouterr().out.split() == ["ndcg_cut_10", "all", "1.0000"]


def test_a_second_publication_is_the_next_version_and_diffs_against_the_first(setup):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    first = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True).qrels
    pair = Pair.objects.get(topic__qid="1", document__docno="d1")
    adj.decide_pair(
        campaign=campaign, pair_id=pair.pk, lead=lead, grade=2, reason="partial", based_on=None
    )
    pair = Pair.objects.get(topic__qid="1", document__docno="d2")
    adj.decide_pair(
        campaign=campaign, pair_id=pair.pk, lead=lead, grade=0, reason="off", based_on=None
    )
    second = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True).qrels
    assert second.version == 2
    diff = evaluation.diff_qrels(first, second)
    assert diff.added == [("1", "d2", 0)]
    assert diff.removed == []
    assert diff.changed == [("1", "d1", 3, 2)]
    assert diff.unchanged == 2


def test_a_bad_qrels_name_is_refused(setup):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    with pytest.raises(ValidationError, match="use lowercase letters, digits"):
        adj.publish(campaign=campaign, user=lead, name="my qrels!", leave_out_undecided=True)
    with pytest.raises(ValidationError, match=r"e\.g\. 'robust-2026'"):
        adj.publish(campaign=campaign, user=lead, name="Robust-2026", leave_out_undecided=True)


@given(st.text(alphabet="aZ09_- .é", max_size=8))
def test_the_publish_pages_name_pattern_accepts_exactly_the_names_publish_accepts(name):
    # The browser matches the input's pattern against the whole value.
    pattern_says = re.fullmatch(adj.QRELS_NAME_PATTERN, name) is not None
    assert pattern_says == (bool(name) and slugify(name) == name), name


def test_nothing_to_publish_is_said_plainly(setup):
    campaign, lead, _ = setup
    with pytest.raises(ValidationError, match="nothing to publish"):
        adj.publish(campaign=campaign, user=lead, leave_out_undecided=True)


# --- publishing the same grades again (issue 28, item 5) -------------------------------------


def test_grades_equal_to_the_newest_version_are_refused_until_that_version_is_named(setup):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    first = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True).qrels

    with pytest.raises(adj.IdenticalGrades) as refused:
        adj.publish(campaign=campaign, user=lead, leave_out_undecided=True)
    assert refused.value.latest == first
    assert str(refused.value.message) == (
        "These grades are exactly those of web-track-2026 v1, the newest version of "
        "'web-track-2026': publishing them would make web-track-2026 v2, an identical copy."
    )
    assert evaluation.find_qrels("web-track-2026") == first

    copy = adj.publish(
        campaign=campaign, user=lead, leave_out_undecided=True, identical_to=first.pk
    ).qrels
    assert copy.version == 2 and copy.checksum == first.checksum


def test_a_confirmed_copy_sent_twice_makes_one_version(setup):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    first = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True).qrels
    again = {"campaign": campaign, "user": lead, "leave_out_undecided": True}
    copy = adj.publish(**again, identical_to=first.pk).qrels

    with pytest.raises(adj.IdenticalGrades) as refused:
        adj.publish(**again, identical_to=first.pk)
    assert refused.value.latest == copy
    assert [p.qrels.version for p in campaign.publications.all()] == [2, 1]


def test_changed_grades_or_another_name_publish_without_a_question(setup):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    first = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True).qrels
    # Another name has no version yet: nothing to be identical to.
    other = adj.publish(campaign=campaign, user=lead, name="web", leave_out_undecided=True)
    assert other.qrels.label == "web v1"
    pair = Pair.objects.get(topic__qid="1", document__docno="d2")
    adj.decide_pair(
        campaign=campaign, pair_id=pair.pk, lead=lead, grade=0, reason="off", based_on=None
    )
    # A stale confirmation does not matter once the grades differ.
    second = adj.publish(
        campaign=campaign, user=lead, leave_out_undecided=True, identical_to=first.pk
    )
    assert second.qrels.version == 2 and second.qrels.checksum != first.checksum


def test_only_the_newest_version_counts_as_the_one_repeated(setup):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    first = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True).qrels
    pair = Pair.objects.get(topic__qid="1", document__docno="d1")  # 3 by majority
    decision = adj.decide_pair(
        campaign=campaign, pair_id=pair.pk, lead=lead, grade=2, reason="partly", based_on=None
    )
    adj.publish(campaign=campaign, user=lead, leave_out_undecided=True)
    adj.decide_pair(
        campaign=campaign, pair_id=pair.pk, lead=lead, grade=3, reason="fully", based_on=decision.pk
    )
    # Back to v1's grades: v3 equals v1, not the newest (v2), so it is published.
    third = adj.publish(campaign=campaign, user=lead, leave_out_undecided=True).qrels
    assert third.version == 3 and third.checksum == first.checksum


# --- calibration pairs ---------------------------------------------------------------------


def test_gold_pairs_go_to_every_judge_and_publish_with_their_known_grade(django_user_model, setup):
    campaign, _, judges = setup
    campaign.overlap = 1
    campaign.save()
    services.update_campaign(campaign=campaign, overlap=1)
    change = services.set_gold(campaign=campaign, entries=[("1", "g0", 3), ("2", "d0", 0)])
    assert (change.added, change.already) == (1, 1)
    for docno in ("g0",):
        holders = set(
            Assignment.objects.filter(pair__document__docno=docno).values_list("judge", flat=True)
        )
        assert holders == {j.pk for j in judges}
    late = django_user_model.objects.create_user("late")
    services.add_judge(campaign=campaign, judge=late)
    assert Assignment.objects.filter(pair__document__docno="g0", judge=late).exists()
    assert Assignment.objects.filter(pair__document__docno="g0").count() == 4
    states = states_by_key(campaign)
    assert (states["1", "g0"].grade, states["1", "g0"].basis) == (3, "gold")


def test_a_gold_grade_off_the_scale_changes_nothing(setup):
    campaign, _, _ = setup
    before = Pair.objects.count()
    with pytest.raises(ValidationError, match="Grade 7 is not on this campaign's scale"):
        services.set_gold(campaign=campaign, entries=[("1", "g0", 7)])
    assert Pair.objects.count() == before


def test_raw_judgments_list_every_judges_own_grade(setup):
    campaign, _, judges = setup
    grade_all(campaign, judges, {("1", "d0"): (2, 1, None)})
    rows = list(grade_tables.judgment_rows(campaign))
    assert [row[:5] for row in rows] == [
        ("1", "d0", "j0", 2, ""),
        ("1", "d0", "j1", 1, ""),
        ("1", "d0", "j2", None, "x"),
    ]
