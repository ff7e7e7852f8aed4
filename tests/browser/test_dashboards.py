"""An engineer (who also leads a campaign) uploads two runs in the browser and watches their
progress bars while a task worker imports and scores them, opens the leaderboard, compares
the two runs, opens the worst topic of one, reads a document, and sends the topic's
unjudged documents to judging. Screenshots of every dashboard go to test-artifacts/."""

import gzip

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation import services as annotation
from annotation.models import Pair, PairSource, Topic
from evaluation import services
from evaluation.collection import synthetic
from evaluation.models import Evaluation, Run
from tests.evaluation.dashboard_data import user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
TOPICS = 12
DEPTH = 30


@pytest.fixture
def setup(django_user_model, media_root, settings):
    # A database task queue, so the jobs wait (progress bar at 0) until the worker runs.
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    engineer = user(django_user_model, "eng", "engineer", "lead", password=PASSWORD)
    qrels_text = synthetic.make_qrels_text(topics=TOPICS, judged=30)
    qrels = services.import_qrels(source=qrels_text.encode(), filename="pets.qrels", name="pets")
    campaign = annotation.create_campaign(lead=engineer, name="Pets 2026")
    for t in range(TOPICS):
        qid = str(1001 + t)
        Topic.objects.create(campaign=campaign, qid=qid, query=f"pet care question {qid}")
    campaign.documents.bulk_create(  # text for the documents the runs add unjudged
        campaign.documents.model(
            campaign=campaign, docno=f"U{1001 + t}-{i:04d}", title=f"Page {i}", text="Cats nap."
        )
        for t in range(TOPICS)
        for i in range(DEPTH)
    )
    runs = {
        name: synthetic.make_run_text(
            qrels_text, tag=name, strength=strength, noise=1.0, depth=DEPTH
        )
        for name, strength in (("bm25", 0.35), ("dense", 0.9))
    }
    return engineer, qrels, campaign, runs


def test_an_engineer_uploads_compares_and_sends_unjudged_documents_to_judging(
    page, live_server, login, screenshot, setup
):
    _, qrels, campaign, runs = setup
    violations = []  # the pages run under the Content Security Policy (no inline script)
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    login("eng", PASSWORD)

    # Upload: two files (one gzip) for a new system, scored against the qrels.
    page.get_by_role("link", name="Runs", exact=True).click()
    page.get_by_role("button", name="Upload runs").click()
    page.locator('input[type="file"]').set_input_files(
        [
            {"name": "bm25.run", "mimeType": "text/plain", "buffer": runs["bm25"].encode()},
            {
                "name": "dense.run.gz",
                "mimeType": "application/gzip",
                "buffer": gzip.compress(runs["dense"].encode()),
            },
        ]
    )
    expect(page.locator("[data-file-list] li")).to_have_count(2)
    page.get_by_label("System", exact=True).select_option("new")
    page.get_by_label("Name").fill("pets-search")
    page.get_by_label("Tags").fill("baseline, 2026")
    expect(page.get_by_label("Qrels version")).to_have_value(str(qrels.pk))
    screenshot("dashboard-upload-form")
    page.get_by_role("button", name="Upload and score").click()

    # Queued until a worker picks the jobs up; the bars follow without a reload.
    jobs = page.get_by_test_id("upload-job")
    expect(jobs).to_have_count(2)
    expect(page.get_by_text("Waiting for a worker…").first).to_be_visible()
    screenshot("dashboard-upload-queued")
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    expect(page.locator('[data-status="succeeded"]')).to_have_count(2, timeout=15_000)
    expect(page.get_by_test_id("job-summary").first).to_contain_text("nDCG@10")
    screenshot("dashboard-upload-done")
    bm25, dense = Run.objects.get(name="bm25"), Run.objects.get(name="dense")
    assert all(e.intervals for e in Evaluation.objects.all())

    # The leaderboard: both runs, the chart drawn, the numbers stored.
    page.get_by_role("button", name="Open the leaderboard").click()
    table = page.locator("#leaderboard")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(page.locator(".chart canvas")).to_have_count(1)
    dense_ndcg = Evaluation.objects.get(run=dense).means["ndcg_cut_10"]
    expect(table.locator("tbody tr").first.locator('[data-measure="ndcg_cut_10"]')).to_contain_text(
        f"{dense_ndcg:.4f}"
    )
    screenshot("dashboard-leaderboard")

    # Compare: bm25 as the baseline, dense ticked.
    page.get_by_label("Baseline").select_option(str(bm25.pk))
    page.get_by_label(f"Compare {dense}").check()
    page.get_by_role("button", name="Compare with the ticked runs").click()
    expect(page.get_by_role("heading", name="Compare runs")).to_be_visible()
    expect(page.get_by_test_id("verdict").first).to_be_visible()
    expect(page.locator(".chart canvas")).to_have_count(1)
    screenshot("dashboard-compare")

    # bm25's worst topic, from its page.
    page.locator(".contrast header").get_by_role("link", name=str(bm25)).click()
    expect(page.locator(".chart canvas")).to_have_count(2)
    screenshot("dashboard-run")
    worst = page.locator("#run-topics tbody tr").first.get_by_role("link")
    qid = worst.inner_text()
    worst.click()
    expect(page.get_by_role("heading", name=f"Topic {qid}")).to_be_visible()
    expect(page.get_by_test_id("topic-query")).to_have_text(f"pet care question {qid}")
    first_unjudged = page.locator(".ranking:not(.ideal) li.is-unjudged .docno").first
    docno = first_unjudged.inner_text()
    first_unjudged.click()
    expect(page.get_by_test_id("document-text")).to_contain_text("Cats nap.")
    expect(page.get_by_test_id("document-text")).to_contain_text(docno)
    screenshot("dashboard-topic")
    # A judged document no campaign of theirs holds: the 404's words show in the panel.
    judged = page.locator(".ranking.ideal .docno").first
    judged_docno = judged.inner_text()
    judged.click()
    expect(page.get_by_test_id("document-text")).to_contain_text(
        f"{judged_docno}: no campaign you lead holds this document's text."
    )

    # Close the loop: the topic's unjudged documents go to the campaign's pool.
    unjudged = page.locator(".ranking:not(.ideal) li.is-unjudged .docno").all_inner_texts()
    assert unjudged, "the worst topic has unjudged documents in its top 10"
    page.get_by_label("Campaign").select_option(str(campaign.pk))
    page.get_by_role("button", name="Send unjudged top-10 documents to judging").click()
    expect(page.get_by_text("unjudged pairs to Pets 2026")).to_be_visible()
    pairs = Pair.objects.filter(campaign=campaign)
    assert {p.document.docno for p in pairs} == set(unjudged)
    assert {(p.topic.qid, p.source) for p in pairs} == {(qid, PairSource.UNJUDGED)}
    assert violations == []
