"""A lead sets up a campaign in the browser: creates it, imports topics and documents through
the upload forms (each a job with a progress page), pools two stored runs at depth 10 with
two judges per pair, and looks at the pool and the progress."""

import json
import re

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation import services
from annotation.models import Assignment, Campaign, Pair
from evaluation import services as evaluation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
TOPICS = {"1": "how long to walk a dog", "2": "best food for old cats", "3": "parrot lifespan"}


def run_file(tag: str, docnos: range) -> bytes:
    lines = [
        f"{qid} Q0 d{docno} {rank} {100 - rank}.0 {tag}"
        for qid in TOPICS
        for rank, docno in enumerate(docnos, 1)
    ]
    return ("\n".join(lines) + "\n").encode()


def topics_tsv() -> bytes:
    return "".join(f"{qid}\t{query}\n" for qid, query in TOPICS.items()).encode()


def documents_jsonl() -> bytes:
    # d15 is left out on purpose: the pool page must show it as lacking text.
    rows = [
        {"docno": f"d{n}", "title": f"Document {n}", "text": f"Text of document {n}."}
        for n in range(1, 15)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def role(name: str) -> Group:
    # Transactional tests flush every table afterwards, the migration's groups included.
    return Group.objects.get_or_create(name=name)[0]


@pytest.fixture
def people(django_user_model):
    lead = django_user_model.objects.create_user("lea", password=PASSWORD)
    lead.groups.add(role("lead"))
    judges = []
    for name in ("ann", "bob"):
        judge = django_user_model.objects.create_user(name)
        judge.groups.add(role("judge"))
        judges.append(judge)
    return lead, judges


def upload(page, form_button: str, name: str, data: bytes) -> None:
    form = page.locator("form", has=page.get_by_role("button", name=form_button))
    form.locator('input[type="file"]').set_input_files(
        {"name": name, "mimeType": "application/octet-stream", "buffer": data}
    )
    form.get_by_role("button", name=form_button).click()


def test_a_lead_sets_up_a_campaign_and_pools_two_runs(
    page, live_server, login, screenshot, people, media_root
):
    _, judges = people
    runs = [
        evaluation.import_run(
            source=run_file("bm25", range(1, 16)), filename="bm25.run", system="bm25"
        ),
        evaluation.import_run(
            source=run_file("dense", range(6, 21)), filename="dense.run", system="dense"
        ),
    ]

    login("lea", PASSWORD)
    page.get_by_role("link", name="Campaigns", exact=True).click()
    page.get_by_role("button", name="New campaign").click()

    # The campaign: TREC DL labels by default, two judges per pair. A bad form first.
    expect(page.get_by_label("Label of grade 3")).to_have_value("Perfectly relevant")
    page.get_by_label("Scale").select_option("0-5")
    expect(page.get_by_label("Label of grade 5")).to_have_value("Perfect")
    page.get_by_label("Scale").select_option("0-3")
    expect(page.get_by_label("Label of grade 5")).to_have_count(0)
    page.get_by_label("Judges per pair").fill("0")
    page.get_by_label("Label of grade 1").fill("")
    page.get_by_role("button", name="Create the campaign").click()
    expect(page.get_by_text("Ensure this value is greater than or equal to 1.")).to_be_visible()
    expect(page.get_by_text("Grade 1 needs a label.")).to_be_visible()
    screenshot("lead-campaign-form-errors")
    page.get_by_label("Label of grade 1").fill("Related")
    page.get_by_label("Name").fill("Pets 2026")
    page.get_by_label("Description").fill("Pilot campaign on pet care questions.")
    page.get_by_label("Judges per pair").fill("2")
    page.get_by_label("Definition of grade 0").fill("Has nothing to do with the question.")
    page.get_by_label("Guidelines").fill(
        "## How to judge\n\nRead the **whole** document before grading.\n\n"
        "- Judge the document, not the site.\n- Skip pages that do not load."
    )
    page.get_by_label("ann").check()
    page.get_by_label("bob").check()
    screenshot("lead-campaign-form")
    page.get_by_role("button", name="Create the campaign").click()

    expect(page.get_by_role("heading", name="Pets 2026", level=1)).to_be_visible()
    expect(page.get_by_text("Created the campaign Pets 2026.")).to_be_visible()
    campaign = Campaign.objects.get()
    assert campaign.overlap == 2 and campaign.scale[0]["definition"].startswith("Has nothing")

    # A bad topics file is refused with its lines; nothing is stored.
    upload(page, "Import topics", "topics.tsv", b"1\tdog\n1\tagain\n2\n")
    expect(page.get_by_text("Failed")).to_be_visible()
    expect(page.get_by_text("topics.tsv:2: qid '1' already appears on line 1")).to_be_visible()
    screenshot("lead-import-failed")
    assert not campaign.topics.exists()
    page.go_back()

    upload(page, "Import topics", "topics.tsv", topics_tsv())
    expect(page.get_by_text("Done", exact=True)).to_be_visible()
    screenshot("lead-import-done")
    page.get_by_role("button", name="Back to the campaign").click()

    upload(page, "Import documents", "docs.jsonl", documents_jsonl())
    page.get_by_role("button", name="Back to the campaign").click()
    expect(page.get_by_text("parrot lifespan")).to_be_visible()
    screenshot("lead-campaign-detail")

    # Pool both runs at depth 10: bm25 brings d1..d10, dense d6..d15, per topic.
    page.get_by_test_id("campaign-nav").get_by_role("link", name="Pool", exact=True).click()
    page.get_by_label("Runs").select_option(value=[str(run.pk) for run in runs])
    page.get_by_label("Depth k").fill("10")
    page.get_by_role("button", name="Build the pool").click()
    expect(page.get_by_text("Done", exact=True)).to_be_visible()
    page.get_by_role("button", name="See the pool").click()

    assert Pair.objects.count() == 3 * 15
    assert Assignment.objects.count() == 3 * 15 * 2, "every pair goes to both judges"
    topic_rows = page.locator("#pool-topics tbody tr")
    expect(topic_rows).to_have_count(3)
    expect(topic_rows.first).to_contain_text("15")
    expect(page.locator("#lacking-documents")).to_contain_text("d15")
    screenshot("lead-pool")

    # Some judging happens (the judge's page is tested on its own), then the progress page.
    for i, assignment in enumerate(Assignment.objects.filter(judge=judges[0])[:12]):
        services.record_judgment(
            assignment_id=assignment.pk, judge=judges[0], grade=i % 4, seconds=1.0
        )
    for assignment in Assignment.objects.filter(judge=judges[1])[:5]:
        services.record_judgment(assignment_id=assignment.pk, judge=judges[1], grade=2, seconds=14)
    page.get_by_test_id("campaign-nav").get_by_role("link", name="Judges & progress").click()
    expect(page.get_by_role("heading", name="Progress", level=1)).to_be_visible()
    expect(page.get_by_text("too fast")).to_be_visible()
    expect(page.get_by_text("17 of 90 assignments done")).to_be_visible()
    screenshot("lead-progress")

    # Remove bob: his open pairs cannot go to ann, who holds every pair already.
    page.get_by_role("button", name="Remove bob").click()
    expect(page.get_by_text("Removed bob: none of their 40 open pairs")).to_be_visible()
    screenshot("lead-progress-after-removal")

    page.get_by_role("link", name="Campaigns", exact=True).first.click()
    expect(page.get_by_role("link", name="Pets 2026")).to_be_visible()
    screenshot("lead-campaign-list")

    page.get_by_role("link", name="Qrelsmith").click()
    expect(page.get_by_role("link", name=re.compile("Pets 2026"))).to_be_visible()
    screenshot("lead-home")
