"""manage.py import_topics, import_documents, import_pairs and pool_runs."""

import gzip
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.models import Assignment, Document, Pair, Topic
from evaluation import services as evaluation

pytestmark = pytest.mark.django_db

TOPICS_TREC = b"""<top>
<num> Number: 1
<title> dog walking
<desc> Description: How often should a dog be walked?
</top>
<top>
<num> Number: 2
<title> cat food
</top>
"""


@pytest.fixture
def campaign(django_user_model):
    lead = django_user_model.objects.create_user("lea")
    judges = [django_user_model.objects.create_user(n) for n in ("ann", "bob")]
    return services.create_campaign(lead=lead, name="c", overlap=2, judges=judges)


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def counts():
    return (
        Topic.objects.count(),
        Document.objects.count(),
        Pair.objects.count(),
        Assignment.objects.count(),
    )


def test_import_topics_reads_a_trec_topic_file(campaign, tmp_path):
    path = tmp_path / "topics.1-2.gz"
    path.write_bytes(gzip.compress(TOPICS_TREC))
    output = run("import_topics", str(campaign.pk), str(path))
    assert output == "c: Imported 2 topics: 2 new, 0 updated, 0 unchanged.\n"
    topic = Topic.objects.get(qid="1")
    assert (topic.query, topic.description) == ("dog walking", "How often should a dog be walked?")


def test_import_topics_refuses_a_bad_file_whole_with_its_lines(campaign, tmp_path):
    path = tmp_path / "q.tsv"
    path.write_bytes(b"1\tfine\n2\t\n1\tagain\n")
    with pytest.raises(CommandError) as caught:
        run("import_topics", str(campaign.pk), str(path))
    assert str(caught.value) == (
        f"nothing imported:\n{path}:2: topic '2' has an empty query\n"
        f"{path}:3: qid '1' already appears on line 1"
    )
    assert counts() == (0, 0, 0, 0)


def test_the_format_option_overrides_detection(campaign, tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes(b'{"qid": "1", "title": "t"}\n')
    with pytest.raises(CommandError, match="expected qid<TAB>query"):
        run("import_topics", str(campaign.pk), str(path), "--format", "tsv")
    assert "1 new" in run("import_topics", str(campaign.pk), str(path), "--format", "jsonl")


def test_commands_name_a_missing_campaign_or_file(campaign, tmp_path):
    with pytest.raises(CommandError, match="no campaign with id 999"):
        run("import_topics", "999", str(tmp_path / "q.tsv"))
    with pytest.raises(CommandError, match=r"q\.tsv: no such file"):
        run("import_documents", str(campaign.pk), str(tmp_path / "q.tsv"))


def test_import_documents_reads_csv(campaign, tmp_path):
    path = tmp_path / "docs.csv"
    path.write_bytes(b'docno,title,text\nd1,One,"Text, with a comma"\nd2,Two,More\n')
    output = run("import_documents", str(campaign.pk), str(path))
    assert output == "c: Imported 2 documents: 2 new, 0 updated, 0 unchanged.\n"
    assert Document.objects.get(docno="d1").text == "Text, with a comma"


def test_import_documents_refuses_a_bad_url(campaign, tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"docno": "d1", "url": "javascript:alert(1)"}\n')
    with pytest.raises(CommandError, match=r"docs\.jsonl:1: url 'javascript:alert\(1\)' is not"):
        run("import_documents", str(campaign.pk), str(path))
    assert counts() == (0, 0, 0, 0)


def test_import_pairs_adds_and_assigns_and_refuses_unknown_topics(campaign, tmp_path):
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"1 d1\n5 d2\n")
    with pytest.raises(CommandError) as caught:
        run("import_pairs", str(campaign.pk), str(bad))
    assert f"{bad}:2: topic '5' is not in this campaign (import it first)" in str(caught.value)
    assert counts() == (1, 0, 0, 0)
    good = tmp_path / "good.txt"
    good.write_bytes(b"1 d1\n1 d2\n")
    output = run("import_pairs", str(campaign.pk), str(good))
    assert output.startswith("c: Added 2 pairs to the pool")
    assert counts() == (1, 2, 2, 4)


def test_pool_runs_pools_stored_runs_at_depth_k(campaign, media_root):
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query="q")
    evaluation.import_run(
        source=b"1 Q0 a 1 3 x\n1 Q0 b 2 2 x\n1 Q0 c 3 1 x\n2 Q0 a 1 1 x\n",
        filename="one.run",
        system="bm25",
    )
    evaluation.import_run(source=b"1 Q0 d 1 9 y\n1 Q0 a 2 8 y\n", filename="two", system="dense")
    output = run("pool_runs", str(campaign.pk), "--depth", "2", "bm25/one", "two")
    assert output.startswith("c: pooled 2 runs at depth 2. Added 4 pairs to the pool")
    assert sorted(Pair.objects.values_list("topic__qid", "document__docno")) == [
        ("1", "a"),
        ("1", "b"),
        ("1", "d"),
        ("2", "a"),
    ]


def test_pool_runs_names_what_it_cannot_find_or_do(campaign, media_root):
    evaluation.import_run(source=b"1 Q0 a 1 3 x\n", filename="one.run", system="bm25")
    with pytest.raises(CommandError, match="no stored run 'bm25/nope'"):
        run("pool_runs", str(campaign.pk), "bm25/nope", "bm25/one")
    with pytest.raises(CommandError, match="--depth must be at least 1, got 0"):
        run("pool_runs", str(campaign.pk), "--depth", "0", "bm25/one")
    with pytest.raises(CommandError, match="no topics yet: import topics before"):
        run("pool_runs", str(campaign.pk), "bm25/one")
    assert counts() == (0, 0, 0, 0)
