"""manage.py build_collection: the files it writes are read by the product's own importers
(campaign documents and topics, qrels, runs), and bad arguments get clear errors."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation import services as annotation_services
from annotation.services import campaign_files
from evaluation.collection.rankers import RANKERS
from evaluation.models import QrelsVersion, Run


def build(out, *args):
    call_command("build_collection", str(out), *args)
    return out


@pytest.fixture(scope="module")
def fallback_dir(tmp_path_factory):
    """The fallback collection written once (no database needed to build it)."""
    return build(tmp_path_factory.mktemp("collection") / "out", "--source", "fallback")


def test_writes_documents_topics_qrels_runs_and_an_account(fallback_dir):
    names = sorted(p.relative_to(fallback_dir).as_posix() for p in fallback_dir.rglob("*"))
    assert names == sorted(
        ["collection.json", "documents.jsonl", "qrels.txt", "runs", "topics.jsonl"]
        + [f"runs/{name}.txt" for name in RANKERS]
    )  # and no staging folder left behind
    about = json.loads((fallback_dir / "collection.json").read_text())
    assert about["sources"][0].startswith("pydoc_data.topics of Python 3.")
    assert about["passages"] == len((fallback_dir / "documents.jsonl").read_text().splitlines())
    assert set(about["ndcg_cut_10"]) == set(RANKERS)
    first = json.loads((fallback_dir / "documents.jsonl").read_text().splitlines()[0])
    assert set(first) == {"docno", "title", "text", "url"}


@pytest.mark.django_db
def test_the_written_files_import_through_the_products_own_importers(
    fallback_dir, django_user_model, media_root, capsys
):
    lead = django_user_model.objects.create_user("lead")
    campaign = annotation_services.create_campaign(lead=lead, name="pydoc")
    about = json.loads((fallback_dir / "collection.json").read_text())

    documents = campaign_files.import_documents(
        campaign=campaign, source=fallback_dir / "documents.jsonl", filename="documents.jsonl"
    )
    topics = campaign_files.import_topics(
        campaign=campaign, source=fallback_dir / "topics.jsonl", filename="topics.jsonl"
    )
    assert (documents.created, topics.created) == (about["passages"], about["topics"])
    stored = campaign.documents.order_by("docno").first()
    assert stored.url.startswith("https://docs.python.org/") and stored.title and stored.text

    call_command("import_qrels", str(fallback_dir / "qrels.txt"), "--name", "pydoc")
    qrels = QrelsVersion.objects.get()
    assert (qrels.topic_count, qrels.judgment_count) == (about["topics"], about["judgments"])

    runs = [str(fallback_dir / "runs" / f"{name}.txt") for name in RANKERS]
    call_command("import_run", *runs, "--system", "collection")
    assert sorted(Run.objects.values_list("name", flat=True)) == sorted(RANKERS)
    assert "notice" not in capsys.readouterr().err  # nothing the importer had to overlook


def test_a_sample_of_the_installed_docs_is_written_with_public_urls(sample_doc_root, tmp_path):
    out = build(tmp_path / "out", "--doc-root", str(sample_doc_root), "--source", "both")
    urls = [json.loads(line)["url"] for line in (out / "documents.jsonl").open()]
    assert any(url.startswith("https://docs.python.org/3.") for url in urls)
    assert any(url.startswith("https://docs.djangoproject.com/en/") for url in urls)
    qrels = (out / "qrels.txt").read_text().splitlines()
    assert any(line.startswith("py-faq-") for line in qrels)


def test_a_missing_package_is_named(tmp_path):
    with pytest.raises(
        CommandError, match="apt-get install --no-install-recommends python-django-doc"
    ):
        build(tmp_path / "out", "--source", "django", "--doc-root", str(tmp_path))
    assert not (tmp_path / "out").exists()


def test_auto_without_packages_says_what_to_install(tmp_path, capsys):
    build(tmp_path / "out", "--doc-root", str(tmp_path / "nothing"))
    err = capsys.readouterr().err
    assert "python3.11-doc" in err and "python-django-doc" in err and "fallback" in err
    assert (tmp_path / "out" / "documents.jsonl").is_file()


def test_an_unknown_source_is_refused(tmp_path):
    with pytest.raises(CommandError, match="invalid choice: 'perl'"):
        build(tmp_path / "out", "--source", "perl")


def test_an_out_dir_that_is_a_file_is_refused(tmp_path):
    file = tmp_path / "taken"
    file.write_text("mine")
    with pytest.raises(CommandError, match="taken: exists and is not a folder"):
        build(file, "--source", "fallback")
    assert file.read_text() == "mine"


def test_an_out_dir_that_cannot_be_made_is_refused(tmp_path):
    file = tmp_path / "taken"
    file.write_text("mine")
    with pytest.raises(CommandError, match=r"taken/out: cannot write the collection there"):
        build(file / "out", "--source", "fallback")
