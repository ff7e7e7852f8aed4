"""A lead brings judgments made elsewhere into a campaign in the browser: a crowd
platform's CSV of three workers' grades, refused first for a grade off the scale and then
imported with a mapping; and an UMBRELA-style qrels file (grades 0-3 from an LLM assessor)
as one machine judge's grades. The page then lists judges of every kind and each import's
provenance, and the outside people count in the agreement report."""

import hashlib

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation import services
from annotation.models import ExternalGrade, PairSource, Topic

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
CROWD = (
    "qid,docno,judge,grade,note,seconds\n"
    "1,d1,worker17,4,exactly it,21\n"
    "1,d1,worker22,3,,14\n"
    "1,d2,worker17,0,spam,6\n"
    "1,d2,worker22,1,,9\n"
    "2,d3,worker31,2,,30\n"
)
UMBRELA_QRELS = "1 0 d1 3\n1 0 d2 0\n2 0 d3 2\n2 0 d4 1\n"


@pytest.fixture
def campaign(django_user_model):
    lead = django_user_model.objects.create_user("lea", password=PASSWORD)
    lead.groups.add(Group.objects.get_or_create(name="lead")[0])
    judge = django_user_model.objects.create_user("ann")
    judge.groups.add(Group.objects.get_or_create(name="judge")[0])
    campaign = services.create_campaign(lead=lead, name="Crowd 2026", judges=[judge])
    for qid, query in (("1", "walking an old dog"), ("2", "parrot lifespan")):
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    services.add_pairs(
        campaign=campaign,
        pairs=[("1", "d1"), ("1", "d2"), ("2", "d3"), ("2", "d4")],
        source=PairSource.IMPORTED,
    )
    return campaign


def test_a_lead_imports_a_crowd_csv_and_an_umbrela_qrels_file(
    page, live_server, login, campaign, tmp_path, screenshot
):
    crowd = tmp_path / "crowd.csv"
    crowd.write_text(CROWD)
    qrels = tmp_path / "umbrela-gpt-4o.qrels"
    qrels.write_text(UMBRELA_QRELS)
    login("lea", PASSWORD)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    page.get_by_test_id("campaign-nav").get_by_role("link", name="Judgments from elsewhere").click()
    expect(page.get_by_role("heading", name="Judgments from elsewhere", level=1)).to_be_visible()

    # The crowd's 0-4 grades are refused, naming the grade off the scale; nothing stored.
    page.get_by_label("File", exact=True).set_input_files(str(crowd))
    page.get_by_role("button", name="Import judgments").click()
    alert = page.get_by_role("alert")
    # One problem, on the real line that gives the grade (issue 28: no made-up line 0).
    expect(alert).to_contain_text("Nothing imported: crowd.csv has 1 problem.")
    expect(alert).to_contain_text(
        "crowd.csv:2: grade '4' is not on this campaign's scale (0, 1, 2, 3); 1 line of the file"
    )
    assert not ExternalGrade.objects.exists()

    # With a mapping from 0-4 onto 0-3 it goes in.
    page.get_by_label("File", exact=True).set_input_files(str(crowd))
    page.get_by_label("Grade mapping").fill("0:0, 1:1, 2:1, 3:2, 4:3")
    page.get_by_role("button", name="Import judgments").click()
    expect(page.get_by_text("crowd.csv: 5 grades added, 0 changed, 0 unchanged")).to_be_visible()

    # The UMBRELA-style qrels file: one machine judge, named on import.
    page.get_by_label("File", exact=True).set_input_files(str(qrels))
    page.get_by_label("Format").select_option("qrels")
    page.get_by_label("The file's judges are").select_option("machine")
    page.get_by_label("Judge", exact=True).fill("umbrela gpt-4o")
    page.get_by_role("button", name="Import judgments").click()
    expect(page.get_by_text("umbrela-gpt-4o.qrels: 4 grades added")).to_be_visible()

    judges = page.locator("#judges")
    for label in ("ann", "outside:worker17", "outside:worker22", "outside:worker31"):
        expect(judges.get_by_role("cell", name=label, exact=True)).to_be_visible()
    expect(judges.get_by_role("row", name="machine:umbrela gpt-4o machine 4")).to_be_visible()
    history = page.locator("#import-history")
    sha = hashlib.sha256(CROWD.encode()).hexdigest()
    expect(history.get_by_text(f"{sha[:12]}…")).to_be_visible()
    expect(history.get_by_role("cell", name="lea").first).to_be_visible()
    screenshot("judgment-imports")

    # The same file again changes nothing.
    page.get_by_label("File", exact=True).set_input_files(str(crowd))
    page.get_by_label("Grade mapping").fill("0:0, 1:1, 2:1, 3:2, 4:3")
    page.get_by_role("button", name="Import judgments").click()
    expect(page.get_by_text("Nothing changed: this file was imported on")).to_be_visible()
    assert ExternalGrade.objects.count() == 9

    # Outside people are human judges of the agreement report.
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/agreement/")
    expect(page.get_by_text("outside:worker17").first).to_be_visible()
