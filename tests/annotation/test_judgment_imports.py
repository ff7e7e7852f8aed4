"""Judgments from anywhere (issue 12 part 1, issue 17 part 6): per-judge grades imported
from CSV/TSV, JSONL, TREC qrels, UMBRELA and autojudge-annotate files, all or nothing,
idempotent, each grade with its provenance."""

import gzip
import hashlib
import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotation.models import (
    Document,
    ExternalGrade,
    ExternalJudge,
    JudgeKind,
    JudgmentImport,
    Pair,
    PairSource,
)
from annotation.services import agreement
from annotation.services.imports import import_judgments, parse_mapping
from evaluation.trec import TrecFormatError

pytestmark = pytest.mark.django_db

CROWD = (
    "qid,docno,judge,grade,note,seconds,judged_at\n"
    "1,d0,w1,2,clear,12.5,2026-11-20T10:00:00Z\n"
    "1,d0,w2,3,,,\n"
    '1,d1,w1,0,"off topic, ads",4,\n'
    "2,d0,w2,1,,,2026-11-20 11:00\n"
)


def run(campaign, data, name="crowd.csv", user=None, **options):
    data = data.encode() if isinstance(data, str) else data
    return import_judgments(campaign=campaign, source=data, file_name=name, user=user, **options)


def messages(error: TrecFormatError) -> list[str]:
    return [str(e) for e in error.errors]


def test_a_crowd_csv_becomes_outside_judges_grades_with_provenance(setup):
    campaign, lead, _ = setup
    result = run(campaign, CROWD, user=lead)
    assert (result.added, result.changed, result.unchanged) == (4, 0, 0)
    assert result.judges_added == ["w1", "w2"]
    record = result.record
    assert record.sha256 == hashlib.sha256(CROWD.encode()).hexdigest()
    assert (record.file_name, record.format, record.imported_by) == ("crowd.csv", "table", lead)
    grade = ExternalGrade.objects.get(judge__name="w1", pair__document__docno="d1")
    assert (grade.grade, grade.note, grade.seconds, grade.source) == (
        0,
        "off topic, ads",
        4,
        record,
    )
    assert ExternalJudge.objects.get(name="w1").kind == JudgeKind.OUTSIDE
    first = ExternalGrade.objects.get(judge__name="w1", pair__document__docno="d0")
    assert first.judged_at.isoformat() == "2026-11-20T10:00:00+00:00"
    # Outside people are human judges of the agreement report.
    assert {g.judge for g in agreement.graded_judgments(campaign=campaign)} >= {"outside:w1"}
    pair = Pair.objects.get(campaign=campaign, topic__qid="1", document__docno="d0")
    assert (pair.judges_graded, pair.lowest_grade, pair.highest_grade) == (2, 2, 3)


def test_the_same_file_twice_changes_nothing_and_records_nothing(setup):
    campaign, lead, _ = setup
    run(campaign, CROWD, user=lead)
    again = run(campaign, CROWD, user=lead)
    assert again.record is None and (again.added, again.changed, again.unchanged) == (0, 0, 4)
    assert again.earlier is not None and "Nothing changed" in again.summary()
    assert JudgmentImport.objects.count() == 1 and ExternalGrade.objects.count() == 4


def test_a_corrected_file_changes_the_grades_it_changes_and_points_them_at_itself(setup):
    campaign, lead, _ = setup
    first = run(campaign, CROWD, user=lead).record
    second = run(campaign, CROWD.replace("1,d0,w2,3", "1,d0,w2,1"), user=lead)
    assert (second.added, second.changed, second.unchanged) == (0, 1, 3)
    changed = ExternalGrade.objects.get(
        judge__name="w2", pair__document__docno="d0", pair__topic__qid="1"
    )
    assert (changed.grade, changed.source) == (1, second.record)
    kept = ExternalGrade.objects.get(judge__name="w1", pair__document__docno="d0")
    assert kept.source == first


def test_grades_off_the_scale_are_refused_naming_them_unless_mapped(setup):
    campaign, lead, _ = setup
    data = "qid\tdocno\tjudge\tgrade\n1\td0\tw1\t4\n1\td1\tw1\t3\n2\td0\tw1\t4\n"
    with pytest.raises(TrecFormatError) as caught:
        run(campaign, data, name="zero-four.tsv", user=lead)
    # One problem, on the first line giving the grade: no made-up line 0 before it.
    assert messages(caught.value) == [
        "zero-four.tsv:2: grade '4' is not on this campaign's scale (0, 1, 2, 3); 2 lines of "
        "the file give it: give a mapping from the file's grades to the scale (for example "
        "'4:3')"
    ]
    assert not ExternalGrade.objects.exists() and not JudgmentImport.objects.exists()
    mapping = parse_mapping("0:0, 1:1, 2:1, 3:2, 4:3")
    result = run(campaign, data, name="zero-four.tsv", user=lead, mapping=mapping)
    assert sorted(ExternalGrade.objects.values_list("grade", flat=True)) == [2, 3, 3]
    assert result.record.mapping == {"0": 0, "1": 1, "2": 1, "3": 2, "4": 3}


def test_a_mapping_must_cover_every_grade_and_land_on_the_scale(setup):
    campaign, _, _ = setup
    data = "qid,docno,judge,grade\n1,d0,w,2\n1,d1,w,7\n"
    # The mapping is the lead's choice, not the file: refused before the file is read.
    with pytest.raises(ValidationError) as refused:
        run(campaign, data, mapping={"2": 1, "3": 9})
    assert refused.value.messages == [
        "Grade mapping: the mapping sends '3' to 9, which is not on the scale."
    ]
    with pytest.raises(TrecFormatError) as caught:
        run(campaign, data, mapping={"2": 1, "3": 2})
    assert messages(caught.value) == [
        "crowd.csv:3: grade '7' has no grade on the scale (not in the mapping)"
    ]
    with pytest.raises(ValidationError, match="not 'grade in the file: grade on the scale'"):
        parse_mapping("0:0, oops")


def test_unknown_topics_documents_and_pairs_are_refused_with_their_lines(setup):
    campaign, _, _ = setup
    Document.objects.create(campaign=campaign, docno="d9")
    data = "qid,docno,judge,grade\n1,d0,w,1\n7,d0,w,1\n1,nope,w,1\n1,d9,w,2\n"
    with pytest.raises(TrecFormatError) as caught:
        run(campaign, data)
    assert messages(caught.value) == [
        "crowd.csv:3: topic '7' is not in this campaign (import it first)",
        "crowd.csv:4: document 'nope' is not in this campaign (import it first)",
        "crowd.csv:5: pair '1' 'd9' is not in the campaign's pool (choose to add missing pairs)",
    ]
    assert not ExternalGrade.objects.exists()
    result = run(campaign, "qid,docno,judge,grade\n1,d0,w,1\n1,d9,w,2\n", add_missing_pairs=True)
    assert result.pairs_added == 1
    added = Pair.objects.get(campaign=campaign, document__docno="d9")
    assert added.source == PairSource.GRADED and not added.assignments.exists()


def test_a_trec_qrels_file_is_one_named_judges_and_gzip_is_read(setup):
    campaign, lead, _ = setup
    qrels = b"1 0 d0 3\n1 0 d1 0\n2 0 d0 2\n"
    with pytest.raises(ValidationError, match="Name the judge"):
        run(campaign, qrels, name="umbrela.qrels")
    result = run(
        campaign,
        gzip.compress(qrels),
        name="umbrela.qrels.gz",
        user=lead,
        judge_name="umbrela gpt-4o",
        judge_kind=JudgeKind.MACHINE,
    )
    assert result.record.format == "qrels" and result.added == 3
    judge = ExternalJudge.objects.get()
    assert (judge.label, judge.kind) == ("machine:umbrela gpt-4o", "machine")
    # Machines are not in the humans' statistics, nor (by default) in adjudication.
    assert agreement.graded_judgments(campaign=campaign) == []
    pair = Pair.objects.get(campaign=campaign, topic__qid="1", document__docno="d0")
    assert pair.judges_graded == 0


def test_a_judge_of_one_kind_cannot_be_imported_as_the_other(setup):
    campaign, _, _ = setup
    run(campaign, "qid,docno,judge,grade\n1,d0,w1,1\n")
    with pytest.raises(TrecFormatError, match="already this campaign's outside judge"):
        run(campaign, "qid,docno,judge,grade\n1,d1,w1,1\n", judge_kind=JudgeKind.MACHINE)


def umbrela_line(query, passage, judgment, status=1, model="gpt-4o", **more):
    return json.dumps(
        {
            "model": model,
            "query": query,
            "passage": passage,
            "prompt": f"Query: {query}\nPassage: {passage}",
            "prediction": f"##final score: {judgment}",
            "judgment": judgment,
            "result_status": status,
            **more,
        }
    )


def test_umbrela_output_is_resolved_by_text_and_keeps_model_prompt_and_reasoning(setup):
    campaign, lead, _ = setup
    Document.objects.filter(campaign=campaign, docno="d0").update(text="Fleas live  a year.")
    Document.objects.filter(campaign=campaign, docno="d1").update(text="Cats sleep.")
    lines = [
        umbrela_line("query 1", "Fleas live a year.", 3, reasoning="answers it"),
        umbrela_line("query 1", "Cats sleep.", 0, status=0),
        umbrela_line("query 2", "ignored", 1, qid="2", docid="d2"),
    ]
    result = run(campaign, "\n".join(lines) + "\n", name="umbrela.jsonl", user=lead)
    assert result.record.format == "umbrela" and result.added == 2
    assert result.skipped == [(2, "result_status 0: UMBRELA could not read a grade")]
    grade = ExternalGrade.objects.get(pair__document__docno="d0")
    assert grade.judge.label == "machine:gpt-4o" and grade.grade == 3
    assert grade.details["reasoning"] == "answers it"
    assert grade.details["prompt"].startswith("Query: query 1")


def test_umbrela_lines_whose_query_or_passage_is_not_in_the_campaign_are_refused(setup):
    campaign, _, _ = setup
    lines = [umbrela_line("no such query", "x", 1), umbrela_line("query 1", "no such text", 1)]
    with pytest.raises(TrecFormatError) as caught:
        run(campaign, "\n".join(lines), name="u.jsonl")
    assert messages(caught.value) == [
        "u.jsonl:1: no topic of this campaign has the query 'no such query'",
        "u.jsonl:1: no document of this campaign has this passage as its text",
        "u.jsonl:2: no document of this campaign has this passage as its text",
    ]


def test_autojudge_annotations_need_a_mapping_of_their_labels(setup):
    campaign, lead, _ = setup
    lines = [
        {
            "dataset": "ds",
            "topic_id": "1",
            "docid": "d0",
            "username": "alice",
            "rating": "Perfect",
            "comment": "spot on",
            "spans": [],
            "document": {},
        },
        {"topic_id": "1", "docid": "d1", "username": "bob", "rating": "So-so", "comment": ""},
        {"topic_id": "1", "docid": "d2", "username": "bob", "rating": "Not rated"},
        {"topic_id": "1", "run_id": "r1", "username": "bob", "rating": "Bad", "report": {}},
    ]
    data = "\n".join(json.dumps(line) for line in lines)
    with pytest.raises(TrecFormatError) as caught:
        run(campaign, data, name="annotations.jsonl")
    assert "give a mapping" in messages(caught.value)[0]
    mapping = parse_mapping("Perfect=3; Mostly Good=2; So-so=1; Bad=0")
    result = run(campaign, data, name="annotations.jsonl", user=lead, mapping=mapping)
    assert result.record.format == "autojudge" and result.added == 2
    assert [line for line, _ in result.skipped] == [3, 4]
    alice = ExternalGrade.objects.get(judge__name="alice")
    assert (alice.grade, alice.note, alice.details["rating"]) == (3, "spot on", "Perfect")
    assert alice.judge.kind == JudgeKind.OUTSIDE


def test_a_bad_line_anywhere_stores_nothing(setup):
    campaign, _, _ = setup
    data = CROWD + "2,d1,w3,x y\n"
    with pytest.raises(TrecFormatError):
        run(campaign, data)
    assert not ExternalGrade.objects.exists() and not ExternalJudge.objects.exists()


def test_the_command_names_the_judge_option_a_qrels_file_needs(setup, tmp_path):
    campaign, _, _ = setup
    path = tmp_path / "assessor.qrels"
    path.write_text("1 0 d0 2\n")

    with pytest.raises(CommandError) as refused:
        call_command("import_judgments", campaign.pk, str(path), stdout=io.StringIO())

    assert "--judge NAME" in str(refused.value) and "assessor.qrels" in str(refused.value)
    assert not ExternalGrade.objects.exists()
    out = io.StringIO()
    call_command("import_judgments", campaign.pk, str(path), "--judge", "a1", stdout=out)
    assert ExternalGrade.objects.get().judge.label == "outside:a1"
