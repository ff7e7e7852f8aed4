"""manage.py demo (and so `make run`): a real collection made into qrels, scored runs and two
campaigns through the product's own importers; made once; the fallback where the
documentation is missing; the machine judge from the environment."""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation import services
from annotation.models import Assignment, Campaign, Document, Judgment, MachineJudge
from annotation.services import demo
from evaluation import collection
from evaluation.collection import files, rankers
from evaluation.models import Evaluation, QrelsVersion, Run
from tests.collection.conftest import link_sample

pytestmark = pytest.mark.django_db


@pytest.fixture
def data_dir(settings, tmp_path, media_root):
    settings.DATA_DIR = tmp_path / "data"
    settings.LLM_BASE_URL = settings.LLM_MODEL = ""
    return settings.DATA_DIR


@pytest.fixture
def no_docs(tmp_path):
    """A doc root where neither package is installed."""
    empty = tmp_path / "no-docs"
    empty.mkdir()
    return empty


def run_demo(*args) -> str:
    out = io.StringIO()
    call_command("demo", *args, stdout=out)
    return out.getvalue()


def test_the_demo_is_the_collection_through_the_products_own_doors(data_dir, no_docs):
    text = run_demo("--doc-root", str(no_docs))
    # Without the documentation: the fallback, and what to install for the real one.
    assert "apt-get install --no-install-recommends python3.11-doc python-django-doc" in text
    for line in ("judge judge / judge-demo", "lead lead / lead-demo", "engineer / engineer-demo"):
        assert line in " ".join(text.split())

    # The collection's files, written where the README says, hold what the database holds.
    folder = data_dir / "collection"
    about = json.loads((folder / "collection.json").read_text())
    assert about["runs"] == sorted(rankers.RANKERS)
    qrels = QrelsVersion.objects.get(name=demo.QRELS)
    assert qrels.entries.count() == len((folder / "qrels.txt").read_text().splitlines())
    assert "pydoc_data.topics" in qrels.description

    # Seven real rankers, uploaded and scored: the leaderboard's numbers are the builder's.
    runs = Run.objects.select_related("system")
    assert sorted(run.system.name for run in runs) == sorted(rankers.RANKERS)
    assert all(run.system.description == rankers.DESCRIPTIONS[run.system.name] for run in runs)
    built = collection.build_collection("fallback")
    texts = {name: (folder / "runs" / f"{name}.txt").read_text() for name in rankers.RANKERS}
    expected = files.score_runs(built, texts)
    means = {e.run.system.name: e.means["ndcg_cut_10"] for e in Evaluation.objects.all()}
    assert means == pytest.approx(expected, abs=1e-12)
    assert max(means.values()) - min(means.values()) > 0.1, "the systems should really differ"

    # The demo judge's campaign: real topics, every pooled document with its text.
    campaign = Campaign.objects.get(name=demo.CAMPAIGN)
    assert campaign.topics.count() == demo.TOPICS
    assert not campaign.topics.filter(query__startswith="demo question").exists()
    assert campaign.pooled_runs.count() == len(rankers.RANKERS)
    assert campaign.pooled_runs.filter(depth=demo.DEPTH).count() == len(rankers.RANKERS)
    assert Document.objects.filter(campaign=campaign).count() == len(built.passages)
    work = Assignment.objects.filter(judge__username="judge", pair__campaign=campaign)
    assert work.count() >= 5 * demo.TOPICS
    assert not work.filter(pair__document__text="").exists()
    assert not Judgment.objects.filter(assignment__pair__campaign=campaign).exists()

    # The panel: every pair graded by the three simulated judges, who really disagree.
    panel = Campaign.objects.get(name=demo.PANEL_CAMPAIGN)
    assert "Simulated judges" in panel.description and "not from people" in panel.description
    assert set(panel.topics.values_list("qid", flat=True)).isdisjoint(
        campaign.topics.values_list("qid", flat=True)
    )
    assignments = Assignment.objects.filter(pair__campaign=panel)
    graded = Judgment.objects.filter(assignment__pair__campaign=panel)
    assert graded.count() == assignments.count() == 3 * panel.pairs.count()
    by_pair: dict[int, set[int]] = {}
    for pair_id, grade in graded.values_list("assignment__pair_id", "grade"):
        by_pair.setdefault(pair_id, set()).add(grade)
    disputed = sum(len(grades) > 1 for grades in by_pair.values())
    assert 0.1 * len(by_pair) < disputed < 0.9 * len(by_pair)
    assert "Machine judge: none made. Set QRELSMITH_LLM_BASE_URL" in text

    # Made once: a second run changes nothing and builds nothing.
    counts = (Run.objects.count(), Assignment.objects.count(), Judgment.objects.count())
    again = run_demo("--doc-root", str(no_docs))
    assert "Collection:" not in again and "judge judge / judge-demo" in " ".join(again.split())
    assert (Run.objects.count(), Assignment.objects.count(), Judgment.objects.count()) == counts


def test_a_demo_of_a_missing_package_is_refused_before_anything_is_made(data_dir, no_docs):
    with pytest.raises(CommandError, match=r"python documentation not found under .*apt-get"):
        call_command("demo", "--source", "python", "--doc-root", str(no_docs), stdout=io.StringIO())
    assert not get_user_model().objects.exists(), "a refused demo makes nothing"
    assert not (data_dir / "collection").exists()


def test_the_demo_on_a_sample_of_the_installed_documentation(data_dir, tmp_path):
    text = run_demo("--doc-root", str(link_sample(tmp_path)))
    assert "python3.11-doc, PSF-2.0" in text and "python-django-doc, BSD-3-Clause" in text
    campaign = Campaign.objects.get(name=demo.CAMPAIGN)
    assert "PSF-2.0" in campaign.description and "BSD-3-Clause" in campaign.description
    topics = set(Campaign.objects.values_list("topics__qid", flat=True))
    assert {qid[:3] for qid in topics} == {"py-", "dj-"}  # both FAQs in the demo's campaigns
    document = Document.objects.filter(campaign=campaign, docno__startswith="py:faq/").first()
    assert document.url.startswith("https://docs.python.org/3.11/faq/")
    assert " FAQ — " in document.title and len(document.text.split()) >= 100
    qrels = QrelsVersion.objects.get(name=demo.QRELS)
    assert "Django 3.2 (python-django-doc, BSD-3-Clause)" in qrels.description


@pytest.fixture
def panel(data_dir, django_user_model):
    lead = django_user_model.objects.create_user("lead")
    return services.create_campaign(lead=lead, name=demo.PANEL_CAMPAIGN)


def test_the_demo_points_a_machine_judge_at_the_operators_endpoint(panel, settings):
    said = []
    demo.make_machine_judge(panel, panel.lead, said.append)
    assert said[0].startswith("Machine judge: none made. Set QRELSMITH_LLM_BASE_URL")

    settings.LLM_BASE_URL = "http://127.0.0.1:8080/v1"  # loopback: the outbound policy refuses
    settings.LLM_MODEL = "qwen2.5-7b-instruct"
    demo.make_machine_judge(panel, panel.lead, said.append)
    assert said[1].startswith("Machine judge: not made (") and "OUTBOUND_ALLOW" in said[1]
    assert not MachineJudge.objects.exists()

    settings.LLM_BASE_URL = "https://llm.example.org/v1"
    demo.make_machine_judge(panel, panel.lead, said.append)
    machine = MachineJudge.objects.select_related("judge__campaign").get()
    assert machine.judge.campaign == panel
    assert (machine.base_url, machine.model_name) == (settings.LLM_BASE_URL, settings.LLM_MODEL)
    assert machine.api_key_env == "" and not machine.api_key_sealed
    assert said[2] == f"Created the machine judge {machine.judge.name} at {machine.base_url}."


def test_the_demo_machine_judge_reads_its_key_from_the_environment(panel, settings, monkeypatch):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "https://llm.example.org/v1", "m"
    monkeypatch.setenv(demo.KEY_ENV, "sk-test")
    demo.make_machine_judge(panel, panel.lead, lambda text: None)
    machine = MachineJudge.objects.get()
    assert machine.api_key_env == "QRELSMITH_LLM_KEY_DEMO" and not machine.api_key_sealed
