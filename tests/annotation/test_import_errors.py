"""Every problem of a lead's file in one answer (issue 28, item 10): the file's own (field
counts, repeats, bad ids) and the campaign's (topics and documents it does not have, grades
off its scale, pairs not in its pool), each with file:line, in line order; and a pool file
may start with a header naming its columns."""

import pytest

from annotation.models import Document, ExternalGrade, Pair, Topic
from annotation.services import campaign_files
from annotation.services.gold import import_gold
from annotation.services.imports import import_judgments
from evaluation.trec import TrecFormatError

pytestmark = pytest.mark.django_db


def problems(call, **kwargs) -> list[str]:
    with pytest.raises(TrecFormatError) as caught:
        call(**kwargs)
    return [str(error) for error in caught.value.errors]


def test_a_bad_pool_file_lists_field_counts_unknown_topics_and_repeats_at_once(setup):
    campaign, _, _ = setup
    before = Pair.objects.count()
    data = b"qid\tdocno\n1\td7\n1 d8 extra\n1099\td9\n1\td7\n2\n"

    found = problems(
        campaign_files.import_pairs,
        campaign=campaign,
        source=data,
        filename="pool.tsv",
        max_bytes=None,
    )

    assert found == [
        "pool.tsv:3: expected 2 fields (qid docno), found 3",
        "pool.tsv:4: topic '1099' is not in this campaign (import it first)",
        "pool.tsv:5: pair '1' 'd7' already appears on line 2",
        "pool.tsv:6: expected 2 fields (qid docno), found 1",
    ]
    assert Pair.objects.count() == before


def test_a_pool_file_with_a_header_line_is_imported(setup):
    campaign, _, _ = setup
    data = b"qid\tdocno\n1\td7\n2\td8\n"
    change = campaign_files.import_pairs(campaign=campaign, source=data, filename="pool.tsv")
    assert change.added == 2
    assert not Topic.objects.filter(qid="qid").exists()


def test_a_bad_gold_file_lists_its_lines_unknown_topics_and_off_scale_grades_at_once(setup):
    campaign, _, _ = setup
    data = b"qid docno grade\n1 d0 2\n1 d1\n1099 d1 1\n2 d0 9\n"
    assert problems(import_gold, campaign=campaign, source=data, filename="gold.txt") == [
        "gold.txt:3: expected 3 fields (qid docno grade) as on line 2, found 2",
        "gold.txt:4: topic '1099' is not in this campaign (import it first)",
        "gold.txt:5: grade 9 is not on this campaign's scale (0, 1, 2, 3)",
    ]
    assert not Pair.objects.filter(gold_grade__isnull=False).exists()


def test_a_bad_judgments_file_lists_its_lines_and_the_campaigns_problems_at_once(setup):
    campaign, lead, _ = setup
    Document.objects.create(campaign=campaign, docno="d9")
    data = (
        "qid,docno,judge,grade\n"
        "1,d0,w,1\n"  # 2: fine
        "1,d1,w\n"  # 3: a field short
        "1099,d0,w,1\n"  # 4: no such topic
        "1,nope,w,1\n"  # 5: no such document
        "1,d9,w,2\n"  # 6: not in the pool
        "1,d0,w,2\n"  # 7: graded twice
        "2,d0,w,4\n"  # 8: off the scale
    )
    found = problems(
        import_judgments, campaign=campaign, source=data.encode(), file_name="c.csv", user=lead
    )
    assert found == [
        "c.csv:3: expected 4 fields as in the header, found 3",
        "c.csv:4: topic '1099' is not in this campaign (import it first)",
        "c.csv:5: document 'nope' is not in this campaign (import it first)",
        "c.csv:6: pair '1' 'd9' is not in the campaign's pool (choose to add missing pairs)",
        "c.csv:7: the grade of '1' 'd0' by judge 'w' already appears on line 2",
        "c.csv:8: grade '4' is not on this campaign's scale (0, 1, 2, 3); 1 line of the file "
        "gives it: give a mapping from the file's grades to the scale (for example '4:3')",
    ]
    assert not ExternalGrade.objects.exists()


def test_topics_and_documents_files_list_every_problem_at_once(setup):
    campaign, _, _ = setup
    topics = b"qid\tquery\n5\tfive\n5\tagain\n6\n7\t \n"
    assert problems(
        campaign_files.import_topics, campaign=campaign, source=topics, filename="t.tsv", fmt="tsv"
    ) == [
        "t.tsv:3: qid '5' already appears on line 2",
        "t.tsv:4: expected qid<TAB>query (2 fields separated by one tab), found 1",
        "t.tsv:5: topic '7' has an empty query",
    ]
    documents = b"docno,title\nd1,a\nd1,b\n,c\nd2\n"
    assert problems(
        campaign_files.import_documents, campaign=campaign, source=documents, filename="d.csv"
    ) == [
        "d.csv:3: docno 'd1' already appears on line 2",
        "d.csv:4: empty docno",
        "d.csv:5: expected 2 fields as in the header, found 1",
    ]
