"""A lead turns judgments into qrels in the browser: opens the agreement report, drills into
the worst topic, resolves its disagreements from the keyboard, publishes a qrels version and
downloads the TREC file, which then scores a run through `evaluate` with no further step."""

import re

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from playwright.sync_api import expect

from annotation import services
from annotation.models import Assignment, Document, LeadDecision, PairSource, Topic
from evaluation.models import QrelsVersion

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
TOPICS = {"1": "walking an old dog", "2": "parrot lifespan"}
# Each judge's grade per (qid, docno): topic 2 has the worst agreement.
GRADES = {
    ("1", "d1"): (3, 3, 3),
    ("1", "d2"): (0, 0, 0),
    ("1", "d3"): (2, 2, 1),
    ("1", "d4"): (1, 1, 1),
    ("2", "d5"): (0, 3, 3),
    ("2", "d6"): (3, 0, 1),
    ("2", "d7"): (0, 1, 2),
    ("2", "d8"): (2, 2, 2),
}


def role(name: str) -> Group:
    return Group.objects.get_or_create(name=name)[0]


@pytest.fixture
def judged(django_user_model):
    lead = django_user_model.objects.create_user("lea", password=PASSWORD)
    lead.groups.add(role("lead"))
    judges = []
    for name in ("ann", "bob", "cy"):
        judge = django_user_model.objects.create_user(name)
        judge.groups.add(role("judge"))
        judges.append(judge)
    campaign = services.create_campaign(lead=lead, name="Pets 2026", overlap=3, judges=judges)
    for qid, query in TOPICS.items():
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    services.add_pairs(campaign=campaign, pairs=list(GRADES), source=PairSource.IMPORTED)
    for document in Document.objects.filter(campaign=campaign):
        document.title = f"About {document.docno}"
        document.text = (
            f"A page on {TOPICS['2' if document.docno > 'd4' else '1']}, {document.docno}."
        )
        document.save()
    for (qid, docno), grades in GRADES.items():
        for judge, grade in zip(judges, grades, strict=True):
            assignment = Assignment.objects.get(
                pair__topic__qid=qid, pair__document__docno=docno, judge=judge
            )
            services.record_judgment(
                assignment_id=assignment.pk, judge=judge, grade=grade, seconds=6
            )
    return campaign


def test_a_lead_resolves_disagreements_by_keyboard_and_publishes_qrels(
    page, live_server, login, screenshot, judged, tmp_path, capsys
):
    campaign = judged
    login("lea", PASSWORD)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/agreement/")
    expect(page.get_by_role("heading", name=re.compile("Agreement"), level=1)).to_be_visible()
    screenshot("lead-agreement-report")
    # The worst topic comes first in the per-topic table; its link opens its disputes, as
    # many as the link says: d5, d6 and d7 were graded differently.
    link = page.locator(f'a.disputed[href*="/adjudicate/?topic={Topic.objects.get(qid="2").pk}&"]')
    expect(link).to_have_text("3")
    link.click()
    expect(page.get_by_role("heading", name=re.compile("Disagreements · topic 2"))).to_be_visible()
    expect(page.locator("table.disagreements tbody tr")).to_have_count(3)
    screenshot("lead-disagreements")

    # Majority settles d5 (3) and d7 is a three-way tie; d6 (3, 0, 1) has no majority either.
    expect(page.get_by_role("link", name="Review →")).to_have_count(1)
    page.get_by_role("button", name="Undecided").click()
    expect(page).to_have_url(re.compile(r"show=undecided$"))
    expect(page.get_by_role("link", name="Decide →")).to_have_count(2)
    expect(page.get_by_role("link", name="Review →")).to_have_count(0)
    # From the keyboard: Enter opens the first pair of the queue.
    page.keyboard.press("Enter")
    expect(page.get_by_text("Your decision")).to_be_visible()
    screenshot("lead-decide-pair")
    for grade, reason in (("3", "the whole page is about parrots"), ("1", "mentions parrots")):
        heading_before = page.title()
        page.keyboard.press(grade)
        expect(page.locator("#reason")).to_be_focused()
        page.keyboard.type(reason)
        page.keyboard.press("Enter")
        expect(page).not_to_have_title(heading_before)
    expect(page.get_by_role("heading", name="Nothing left to decide")).to_be_visible()
    assert sorted(LeadDecision.objects.values_list("grade", flat=True)) == [1, 3]

    # Publish: nothing is undecided any more, so no switch is needed.
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/publish/")
    page.get_by_label("Qrels name").fill("pets-2026")
    screenshot("lead-publish")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_text(re.compile(r"Published pets-2026 v1: 8 grades\."))).to_be_visible()
    screenshot("lead-published-qrels")
    with page.expect_download() as download:
        page.get_by_role("link", name="TREC qrels", exact=True).click()
    qrels_file = tmp_path / "pets.qrels"
    download.value.save_as(qrels_file)
    lines = qrels_file.read_text().splitlines()
    assert len(lines) == 8 and "2 0 d5 3" in lines and "1 0 d3 2" in lines

    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 9 sys\n1 Q0 d3 2 8 sys\n2 Q0 d5 1 9 sys\n2 Q0 d6 2 8 sys\n")
    capsys.readouterr()
    call_command("evaluate", str(qrels_file), str(run), "-m", "P.2")
    assert capsys.readouterr().out.split() == ["P_2", "all", "1.0000"]
    assert QrelsVersion.objects.get().label == "pets-2026 v1"
