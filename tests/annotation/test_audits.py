"""Sending pairs to human judges to check the machines (annotation/services/audits.py), and
each machine's agreement on the audit in the report's Machines section."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient
from sklearn.metrics import cohen_kappa_score

from annotation import services
from annotation.models import (
    Assignment,
    AuditPair,
    Document,
    ExternalGrade,
    MachineAudit,
    Pair,
    PairSource,
    Topic,
)
from annotation.services import audits, machine_agreement
from annotation.services.external import add_external_judge, record_machine_grade
from tests.worlds import made_once

pytestmark = pytest.mark.django_db


def graded_elsewhere(campaign, qid, docnos):
    """Pairs a judgments import added: in the pool, assigned to nobody."""
    topic = Topic.objects.get(campaign=campaign, qid=qid)
    made = []
    for docno in docnos:
        document = Document.objects.create(campaign=campaign, docno=docno)
        made.append(
            Pair.objects.create(
                campaign=campaign, topic=topic, document=document, source=PairSource.GRADED
            )
        )
    return made


def audit_world():
    """Two judges, overlap 2, threshold 2; topic 1 has three pairs the judges hold, and
    twenty pairs graded elsewhere (ten per topic) that only machines graded."""
    User = get_user_model()
    lead = User.objects.create_user("lead")
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    judges = [User.objects.create_user(f"j{i}") for i in range(2)]
    campaign = services.create_campaign(
        lead=lead, name="Audit", overlap=2, judges=judges, relevance_threshold=2
    )
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    services.add_pairs(
        campaign=campaign, pairs=[("1", f"d{i}") for i in range(3)], source=PairSource.IMPORTED
    )
    elsewhere = graded_elsewhere(campaign, "1", [f"e{i}" for i in range(10)])
    elsewhere += graded_elsewhere(campaign, "2", [f"f{i}" for i in range(10)])
    a = add_external_judge(campaign=campaign, name="llm-a", kind="machine")
    b = add_external_judge(campaign=campaign, name="llm-b", kind="machine")
    for index, pair in enumerate(elsewhere):
        record_machine_grade(judge=a, pair_id=pair.pk, grade=index % 4)
        # llm-b agrees with llm-a except on every fifth pair
        record_machine_grade(judge=b, pair_id=pair.pk, grade=(index + (index % 5 == 0)) % 4)
    return campaign, lead, judges, elsewhere, (a, b)


world_made = made_once(audit_world)


@pytest.fixture
def world(world_copy):
    """audit_world(), made once for the module (tests/worlds.py)."""
    return world_copy


def test_a_sample_goes_to_the_judges_with_the_overlap_and_only_it(world):
    campaign, lead, _judges, elsewhere, _ = world
    before = Assignment.objects.count()
    result = audits.send_audit(campaign=campaign, kind="sample", size=5, seed=3, user=lead)
    sent = {c.pair for c in result.choices}
    assert result.sent == 5 and result.assigned == 10 and result.audit.sent_by == lead
    assert sent <= {p.pk for p in elsewhere}
    assert Assignment.objects.count() == before + 10
    for pair_id in sent:
        assert sorted(
            Assignment.objects.filter(pair_id=pair_id).values_list("judge__username", flat=True)
        ) == ["j0", "j1"]
    # the other pairs graded elsewhere still go to nobody
    assert (
        not Assignment.objects.filter(pair__source=PairSource.GRADED)
        .exclude(pair_id__in=sent)
        .exists()
    )


def test_sending_the_same_sample_twice_adds_nothing(world):
    campaign, lead, *_ = world
    first = audits.send_audit(campaign=campaign, kind="sample", size=4, seed=1, user=lead)
    assignments = Assignment.objects.count()
    again = audits.send_audit(campaign=campaign, kind="sample", size=4, seed=1, user=lead)
    assert again.repeated and again.audit == first.audit and again.sent == 0
    assert Assignment.objects.count() == assignments
    assert MachineAudit.objects.count() == 1 and AuditPair.objects.count() == 4
    # another seed draws from the pairs not sent yet
    other = audits.send_audit(campaign=campaign, kind="sample", size=4, seed=2, user=lead)
    assert not {c.pair for c in other.choices} & {c.pair for c in first.choices}


def test_the_sample_defaults_to_the_campaigns_seed(world):
    campaign, lead, *_ = world
    result = audits.send_audit(campaign=campaign, kind="sample", size=2, user=lead)
    assert result.audit.seed == campaign.seed


def test_a_sample_larger_than_available_is_refused_and_changes_nothing(world):
    campaign, lead, *_ = world
    with pytest.raises(ValidationError) as error:
        audits.send_audit(campaign=campaign, kind="sample", size=21, seed=0, user=lead)
    assert error.value.messages == [
        "The sample asks for 21 pairs but only 20 machine-only pairs can be sent (graded by a "
        "machine, by no human, not sent before)."
    ]
    assert not MachineAudit.objects.exists() and not AuditPair.objects.exists()


def test_disagreements_are_sent_once(world):
    campaign, lead, _, elsewhere, _ = world
    result = audits.send_audit(campaign=campaign, kind="disagreement", user=lead)
    assert {c.pair for c in result.choices} == {elsewhere[i].pk for i in (0, 5, 10, 15)}
    assert result.choices[0].reason.startswith(
        "machines disagree: machine:llm-a 0, machine:llm-b 1"
    )
    again = audits.send_audit(campaign=campaign, kind="disagreement", user=lead)
    assert again.sent == 0 and again.audit is None and MachineAudit.objects.count() == 1


def test_threshold_pairs_against_outside_humans(world):
    campaign, lead, _, elsewhere, (_a, _) = world
    crowd = add_external_judge(campaign=campaign, name="crowd", kind="outside")
    # llm-a gave elsewhere[3] a 3 (relevant at threshold 2), the crowd a 0
    ExternalGrade.objects.create(judge=crowd, pair=elsewhere[3], grade=0)
    result = audits.send_audit(campaign=campaign, kind="threshold", user=lead)
    chosen = {c.pair for c in result.choices}
    # (i) elsewhere[3] itself; (ii) both machines over-called topic 1 there, so their
    # relevant calls on its machine-only pairs go too: llm-a's 2, 6, 7 and llm-b's 2, 5, 6, 7
    assert chosen == {elsewhere[i].pk for i in (2, 3, 5, 6, 7)}
    # topic 2 has no human grade: nothing there says the machines err
    reasons = {c.pair: c.reason for c in result.choices}
    assert reasons[elsewhere[3].pk] == (
        "machine:llm-a gave 3, the humans 0: opposite sides of the threshold 2"
    )
    assert reasons[elsewhere[5].pk].startswith("machine:llm-b gave 2 (relevant) on a topic")


def test_clear_refusals(world, django_user_model):
    campaign, lead, judges, *_ = world
    with pytest.raises(ValidationError, match="Unknown audit"):
        audits.send_audit(campaign=campaign, kind="everything")
    with pytest.raises(ValidationError, match="Only a random sample takes a size"):
        audits.send_audit(campaign=campaign, kind="disagreement", size=3)
    with pytest.raises(ValidationError, match="how many pairs"):
        audits.send_audit(campaign=campaign, kind="sample")
    with pytest.raises(ValidationError, match="seed"):
        audits.send_audit(campaign=campaign, kind="sample", size=1, seed=-1)
    empty = services.create_campaign(lead=lead, name="No machines", judges=judges)
    with pytest.raises(ValidationError, match="no machine judge"):
        audits.send_audit(campaign=empty, kind="sample", size=1)
    nobody = services.create_campaign(lead=lead, name="No judges")
    with pytest.raises(ValidationError, match="no human judges"):
        audits.send_audit(campaign=nobody, kind="disagreement")


def test_an_audit_is_all_or_nothing(world, monkeypatch):
    campaign, lead, *_ = world

    def broken(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(audits, "assign_pending", broken)
    with pytest.raises(RuntimeError):
        audits.send_audit(campaign=campaign, kind="sample", size=3, seed=0, user=lead)
    assert not MachineAudit.objects.exists() and not AuditPair.objects.exists()


def test_pairs_graded_elsewhere_wait_for_an_audit_when_a_judge_joins(world, django_user_model):
    campaign, _lead, *_ = world
    newcomer = django_user_model.objects.create_user("j9")
    services.add_judge(campaign=campaign, judge=newcomer)
    assert not Assignment.objects.filter(pair__source=PairSource.GRADED).exists()


def test_a_dry_run_chooses_and_sends_nothing(world):
    campaign, _lead, *_ = world
    result = audits.send_audit(campaign=campaign, kind="sample", size=3, seed=0, dry_run=True)
    assert len(result.choices) == 3 and result.audit is None
    assert not MachineAudit.objects.exists()


def test_the_grades_read_are_the_campaigns_own(world):
    campaign, lead, judges, elsewhere, _ = world
    before = audits.read_grades(campaign)
    other = services.create_campaign(lead=lead, name="Other", judges=judges)
    Topic.objects.create(campaign=other, qid="1", query="query 1")
    (pair,) = graded_elsewhere(other, "1", ["e0"])
    machine = add_external_judge(campaign=other, name="llm-a", kind="machine")
    outside = add_external_judge(campaign=other, name="someone", kind="outside")
    record_machine_grade(judge=machine, pair_id=pair.pk, grade=3)
    ExternalGrade.objects.create(judge=outside, pair=pair, grade=0)
    grades = audits.read_grades(campaign)
    assert grades == before
    assert (
        {p.pk for p in elsewhere} == set(grades.topic_of) == set(grades.machines["machine:llm-a"])
    )
    assert audits.read_grades(other).humans == {pair.pk: [0]}


def test_candidates_count_each_kind(world):
    campaign, *_ = world
    assert audits.audit_candidates(campaign=campaign) == {
        "disagreement": {"pairs": 4},
        "threshold": {"pairs": 0},
        "sample": {"pairs": 20},
    }


def test_the_report_measures_each_machine_on_the_audit(world):
    campaign, lead, judges, _, _ = world
    result = audits.send_audit(campaign=campaign, kind="sample", size=8, seed=5, user=lead)
    sent = [c.pair for c in result.choices]
    human = {}
    for n, pair_id in enumerate(sorted(sent)):
        if n == 7:
            break  # one audit pair not graded yet: it counts for nothing
        for judge, offset in zip(judges, (0, 1), strict=True):
            assignment = Assignment.objects.get(pair_id=pair_id, judge=judge)
            grade = (n + offset * (n % 3 == 0)) % 4
            services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=grade)
            human.setdefault(pair_id, []).append(grade)
    consensus = {p: sorted(g)[0] for p, g in human.items()}  # lower median of two
    sections = machine_agreement.machine_agreement(campaign=campaign, resamples=200)
    assert [s.judge for s in sections] == ["machine:llm-a", "machine:llm-b"]
    for section in sections:
        machine = dict(
            ExternalGrade.objects.filter(
                judge__name=section.judge.split(":")[1], pair_id__in=consensus
            ).values_list("pair_id", "grade")
        )
        [audit] = section.audit
        assert section.audit_sent == 8 and audit.n == 7
        pairs = sorted(consensus)
        a, b = [machine[p] for p in pairs], [consensus[p] for p in pairs]
        for name, weights in (
            ("unweighted", None),
            ("linear", "linear"),
            ("quadratic", "quadratic"),
        ):
            expected = cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights=weights)
            assert audit.kappa[name].value == pytest.approx(expected)
            assert audit.kappa[name].low <= audit.kappa[name].value <= audit.kappa[name].high


def test_audit_rows_by_kind_when_there_are_several(world):
    campaign, lead, _judges, _, _ = world
    audits.send_audit(campaign=campaign, kind="disagreement", user=lead)
    audits.send_audit(campaign=campaign, kind="sample", size=2, seed=0, user=lead)
    [section, _] = machine_agreement.machine_agreement(campaign=campaign, resamples=0)
    assert [c.against for c in section.audit] == [
        "the audit: humans since",
        "the audit, machine judges disagree with each other",
        "the audit, a random sample of machine-only pairs",
    ]
    assert all(c.n == 0 for c in section.audit)  # nobody has graded them yet


# --- the API, the pages and the command ------------------------------------------------------


@pytest.fixture
def api(world):
    client = APIClient()
    client.force_authenticate(world[1])
    return client


def test_api_sends_an_audit_once_and_lists_it(api, world):
    campaign = world[0]
    url = f"/api/v1/campaigns/{campaign.pk}/machine-audits/"
    first = api.post(url, {"kind": "sample", "size": 3, "seed": 9}, format="json")
    assert first.status_code == 201, first.content
    body = first.json()
    assert (body["sent"], body["assigned"], body["repeated"]) == (3, 6, False)
    assert {p["qid"] for p in body["pairs"]} <= {"1", "2"} and len(body["pairs"]) == 3
    assert body["audit"]["sent_by"] == "lead" and body["audit"]["seed"] == 9
    again = api.post(url, {"kind": "sample", "size": 3, "seed": 9}, format="json")
    assert again.status_code == 200
    assert again.json()["repeated"] and again.json()["sent"] == 0
    assert [p["pair"] for p in again.json()["pairs"]] == sorted(p["pair"] for p in body["pairs"])
    listed = api.get(url).json()
    assert [a["id"] for a in listed["results"]] == [body["audit"]["id"]]
    assert api.get(f"{url}{body['audit']['id']}/").json()["kind"] == "sample"


def test_api_sends_an_audit_larger_than_a_request_may_write_by_a_job(
    api, world, settings, django_capture_on_commit_callbacks
):
    """More pairs than SYNC_WRITE_ROWS (jobs/services/limits.py): 202, and a job sends them."""
    settings.SYNC_WRITE_ROWS = 3
    url = f"/api/v1/campaigns/{world[0].pk}/machine-audits/"
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(url, {"kind": "sample", "size": 5, "seed": 9}, format="json")
    assert response.status_code == 202, response.content
    job = api.get(response["Location"]).json()
    assert (job["status"], job["kind"]) == ("succeeded", "annotation.send_audit"), job
    assert job["result"]["summary"] == (
        "Sent 5 pairs to the human judges for audit: 10 assignments made."
    )
    audit = MachineAudit.objects.get(pk=job["result"]["audit"])
    assert (audit.sent, audit.seed, audit.size, audit.sent_by) == (5, 9, 5, world[1])


def test_api_refusals_say_why(api, world):
    url = f"/api/v1/campaigns/{world[0].pk}/machine-audits/"
    too_many = api.post(url, {"kind": "sample", "size": 500}, format="json")
    assert too_many.status_code == 400
    assert "only 20 machine-only pairs can be sent" in too_many.json()["detail"][0]
    assert api.post(url, {"kind": "all"}, format="json").status_code == 400
    assert api.post(url, {"kind": "sample", "size": 0}, format="json").status_code == 400
    assert not MachineAudit.objects.exists()


def test_api_dry_run_sends_nothing(api, world):
    url = f"/api/v1/campaigns/{world[0].pk}/machine-audits/"
    answer = api.post(url, {"kind": "disagreement", "dry_run": True}, format="json")
    assert answer.status_code == 200 and len(answer.json()["pairs"]) == 4
    assert answer.json()["audit"] is None and not MachineAudit.objects.exists()


def test_api_machines_report_carries_the_audit(api, world):
    campaign = world[0]
    audits.send_audit(campaign=campaign, kind="sample", size=2, seed=0)
    body = api.get(f"/api/v1/campaigns/{campaign.pk}/agreement/machines/").json()
    section = body["machines"][0]
    assert section["audit_sent"] == 2
    assert section["audit"][0]["against"] == "the audit: humans since"
    assert section["audit"][0]["n"] == 0


def test_a_judge_cannot_send_an_audit(world, client):
    campaign, _, judges, *_ = world
    client.force_login(judges[0])
    answer = client.post(f"/campaigns/{campaign.pk}/machines/audit/", {"kind": "disagreement"})
    assert answer.status_code == 404
    api = APIClient()
    api.force_authenticate(judges[0])
    url = f"/api/v1/campaigns/{campaign.pk}/machine-audits/"
    assert api.post(url, {"kind": "disagreement"}, format="json").status_code in (403, 404)
    assert not MachineAudit.objects.exists()


def test_the_machines_page_counts_and_sends(world, client):
    campaign, lead, *_ = world
    client.force_login(lead)
    page = client.get(f"/campaigns/{campaign.pk}/machines/")
    text = page.content.decode()
    assert "Humans check the machines" in text and "— from 20 pairs" in text
    assert "— 4 pairs" in text  # where the machines disagree
    sent = client.post(
        f"/campaigns/{campaign.pk}/machines/audit/",
        {"kind": "disagreement", "back": "machines"},
        follow=True,
    )
    assert sent.redirect_chain[-1][0] == f"/campaigns/{campaign.pk}/machines/"
    assert "Sent 4 pairs to the human judges" in sent.content.decode()
    again = client.post(
        f"/campaigns/{campaign.pk}/machines/audit/", {"kind": "disagreement"}, follow=True
    )
    assert "No pair to send for this audit" in again.content.decode()
    assert MachineAudit.objects.count() == 1


def test_a_refused_audit_from_the_report_says_why(world, client):
    campaign, lead, *_ = world
    client.force_login(lead)
    answer = client.post(
        f"/campaigns/{campaign.pk}/machines/audit/",
        {"kind": "sample", "size": 99, "back": "agreement"},
        follow=True,
    )
    assert answer.redirect_chain[-1][0] == f"/campaigns/{campaign.pk}/agreement/"
    assert "Nothing sent: The sample asks for 99 pairs" in answer.content.decode()


def test_the_report_page_shows_the_audit_rows(world, client):
    campaign, lead, judges, *_ = world
    result = audits.send_audit(campaign=campaign, kind="sample", size=3, seed=0)
    for pair_id in [c.pair for c in result.choices]:
        for judge in judges:
            assignment = Assignment.objects.get(pair_id=pair_id, judge=judge)
            services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=1)
    client.force_login(lead)
    text = client.get(f"/campaigns/{campaign.pk}/agreement/").content.decode()
    assert "the audit: humans since" in text and "of 3 sent" in text
    assert "Send for audit" in text


def test_the_command_sends_and_says_so(world, capsys):
    campaign = world[0]
    call_command("send_audit", str(campaign.pk), "sample", "--size", "2", "--seed", "4")
    out = capsys.readouterr().out
    assert "sent 2 pairs to the human judges" in out and "random sample (seed 4)" in out
    call_command("send_audit", str(campaign.pk), "sample", "--size", "2", "--seed", "4")
    assert "nothing new sent" in capsys.readouterr().out
    call_command("send_audit", str(campaign.pk), "disagreement", "--dry-run")
    assert "would send 4 pairs (dry run)" in capsys.readouterr().out
    with pytest.raises(CommandError, match="nothing sent: The sample asks for 50 pairs"):
        call_command("send_audit", str(campaign.pk), "sample", "--size", "50")
    assert MachineAudit.objects.count() == 1
