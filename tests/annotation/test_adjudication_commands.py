"""The adjudication commands through call_command: disagreements, decide, publish_qrels,
export_judgments (issue: agreement and adjudication, item 6)."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import LeadDecision, Publication
from evaluation.models import QrelsVersion
from tests.annotation.adjudication_data import GRADES, grade_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def graded(setup):
    campaign, lead, judges = setup
    grade_all(campaign, judges, GRADES)
    return campaign, lead


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_disagreements_lists_the_queue_as_text_and_json(graded):
    campaign, _ = graded
    assert run("disagreements", campaign.pk).splitlines() == [
        "1\td2\tj0=0 j1=1 j2=2\tundecided: grades 0, 1, 2 tie with 1 judge each (0, 1, 2); the lead decides"
    ]
    rows = [
        json.loads(line)
        for line in run("disagreements", campaign.pk, "--all", "--json").splitlines()
    ]
    assert [(r["qid"], r["docno"], r["grade"]) for r in rows] == [
        ("1", "d1", 3),
        ("1", "d2", None),
        ("2", "d0", 1),
    ]


def test_decide_records_a_decision_and_refuses_a_stale_one(graded):
    campaign, _ = graded
    assert run(
        "decide", campaign.pk, "1", "d2", "1", "--reason", "related", "--as", "lead"
    ).startswith("Decision ")
    with pytest.raises(CommandError, match="lead decided this pair as 1"):
        run("decide", campaign.pk, "1", "d2", "2", "--reason", "x", "--as", "lead")
    first = LeadDecision.objects.get()
    run(
        "decide",
        campaign.pk,
        "1",
        "d2",
        "2",
        "--reason",
        "x",
        "--as",
        "lead",
        "--replaces",
        first.pk,
    )
    assert LeadDecision.objects.count() == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("1", "nope", "1", "--reason", "x", "--as", "lead"), "no pair 1 nope"),
        (("1", "d2", "1", "--reason", "x", "--as", "j0"), "j0 does not lead"),
        (("1", "d2", "7", "--reason", "x", "--as", "lead"), "Grade 7 is not on"),
        (("1", "d2", "1", "--reason", "x", "--as", "ghost"), "no user 'ghost'"),
    ],
)
def test_decide_refuses_bad_input_and_records_nothing(graded, args, message):
    campaign, _ = graded
    with pytest.raises(CommandError, match=message):
        run("decide", campaign.pk, *args)
    assert not LeadDecision.objects.exists()


def test_publish_qrels_is_blocked_then_publishes_and_exports_provenance(graded, tmp_path):
    campaign, _ = graded
    with pytest.raises(CommandError, match="3 pairs still undecided") as refused:
        run("publish_qrels", campaign.pk)
    assert "2 d1: every judge skipped it" in str(refused.value)
    assert not QrelsVersion.objects.exists()
    out = run("publish_qrels", campaign.pk, "--leave-out-undecided", "--as", "lead")
    assert out.startswith(
        "Published web-track-2026 v1 (3 grades: 3 left_out, 2 majority, 1 unanimous)"
    )
    assert Publication.objects.get().published_by.username == "lead"

    target = tmp_path / "provenance.csv"
    run("export_judgments", campaign.pk, "--provenance", "1", "-o", str(target))
    rows = list(csv.reader(target.open()))
    assert rows[1] == ["1", "d0", "2", "unanimous", "j0=2 j1=2 j2=2", "", "", "", ""]
    with pytest.raises(CommandError, match="published no version 9"):
        run("export_judgments", campaign.pk, "--provenance", "9")


def test_publish_qrels_refuses_a_copy_of_the_newest_version_unless_it_is_named(graded):
    campaign, _ = graded
    run("publish_qrels", campaign.pk, "--leave-out-undecided")
    v1 = QrelsVersion.objects.get()
    with pytest.raises(CommandError) as refused:
        run("publish_qrels", campaign.pk, "--leave-out-undecided")
    assert str(refused.value) == (
        "nothing published: These grades are exactly those of web-track-2026 v1, the newest "
        "version of 'web-track-2026': publishing them would make web-track-2026 v2, an "
        f"identical copy. To publish it anyway: --identical-to {v1.pk}"
    )
    out = run("publish_qrels", campaign.pk, "--leave-out-undecided", "--identical-to", v1.pk)
    assert out.startswith("Published web-track-2026 v2")
    assert QrelsVersion.objects.get(version=2).checksum == v1.checksum


def test_provenance_names_the_version_and_refuses_an_ambiguous_number(graded):
    campaign, _ = graded
    run("decide", campaign.pk, "1", "d2", "1", "--reason", "related", "--as", "lead")
    run("publish_qrels", campaign.pk, "--name", "alpha", "--leave-out-undecided")
    run("publish_qrels", campaign.pk, "--name", "beta", "--leave-out-undecided")
    with pytest.raises(
        CommandError, match=r"'1' is ambiguous: campaign \d+ published alpha@1, beta@1"
    ):
        run("export_judgments", campaign.pk, "--provenance", "1")
    with pytest.raises(
        CommandError, match=r"published no version gamma@1 \(it published: alpha@1, beta@1\)"
    ):
        run("export_judgments", campaign.pk, "--provenance", "gamma@1")
    with pytest.raises(CommandError, match=r"give NAME@VERSION, e\.g\. robust@2"):
        run("export_judgments", campaign.pk, "--provenance", "beta")
    # Written to the command's own stdout, so call_command(stdout=...) captures it.
    rows = list(
        csv.reader(io.StringIO(run("export_judgments", campaign.pk, "--provenance", "beta@1")))
    )
    assert rows[0] == [
        "qid",
        "docno",
        "grade",
        "basis",
        "judges",
        "lead_reason",
        "lead",
        "decided_at",
        "rule_in_force",
    ]
    decided = next(r for r in rows if r[:2] == ["1", "d2"])
    assert decided[2:4] == ["1", "lead"]
    assert (decided[5], decided[6], decided[8]) == ("related", "lead", "majority")


def test_the_decision_log_records_the_rule_in_force(graded):
    from annotation import services

    campaign, _ = graded
    run("decide", campaign.pk, "1", "d2", "1", "--reason", "related", "--as", "lead")
    services.update_campaign(campaign=campaign, adjudication_rule="median")
    first = LeadDecision.objects.get()
    run(
        "decide",
        campaign.pk,
        "1",
        "d2",
        "2",
        "--reason",
        "on reflection",
        "--as",
        "lead",
        "--replaces",
        first.pk,
    )
    rows = list(csv.reader(io.StringIO(run("export_judgments", campaign.pk, "--decisions"))))
    assert rows[0] == [
        "qid",
        "docno",
        "grade",
        "reason",
        "lead",
        "decided_at",
        "rule_in_force",
        "replaces",
    ]
    assert [(r[2], r[3], r[6], r[7]) for r in rows[1:]] == [
        ("1", "related", "majority", ""),
        ("2", "on reflection", "median", str(first.pk)),
    ]


def test_export_judgments_writes_every_judges_grade(graded, capsys):
    campaign, _ = graded
    call_command("export_judgments", campaign.pk)
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0][:4] == ["qid", "docno", "judge", "grade"]
    assert [r[:4] for r in rows[1:4]] == [
        ["1", "d0", "j0", "2"],
        ["1", "d0", "j1", "2"],
        ["1", "d0", "j2", "2"],
    ]
    assert len(rows) == 16
