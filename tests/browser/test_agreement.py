"""A lead reads a demo-sized campaign's agreement report and calibration page in Chromium
(screenshots in test-artifacts/screenshots/ for people to look at)."""

import re

import numpy as np
import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from annotation import services
from annotation.models import Assignment, AssignmentStatus, Judgment, Pair, PairSource, Topic
from annotation.services import agreement as agreement_service
from annotation.services import gold as gold_service
from annotation.services.tallies import tally_pairs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUERIES = [
    ("1037798", "who is robert gray"),
    ("1063750", "why did the us volunterilay enter ww1"),
    ("1103812", "how much does a passport renewal cost"),
    ("1106007", "what causes tides"),
    ("1110199", "what is wifi vs bluetooth"),
    ("1112341", "what is the daily life of thai people"),
    ("1113437", "what is physical description of spruce"),
    ("1114646", "what is famvir prescribed for"),
    ("1114819", "what is durable medical equipment consist of"),
    ("1115776", "what is an aml surveillance analyst"),
    ("1117099", "what is a active margin"),
    ("1121402", "what can contour plowing reduce"),
]
# How each judge departs from a pair's true grade: a shift and how often they guess.
JUDGES = {"ana": (0, 0.1), "ben": (1, 0.2), "cora": (-1, 0.2), "dev": (0, 0.6), "eli": (0, 0.05)}


@pytest.fixture
def campaign(django_user_model):
    """Five judges, twelve topics of eighteen pairs each, three judges per pair, every pair
    graded (a few skipped), and eight gold pairs every judge graded."""
    from django.contrib.auth.models import Group

    lead = django_user_model.objects.create_user("lead")
    lead.groups.add(Group.objects.get(name="lead"))
    judges = [django_user_model.objects.create_user(name) for name in JUDGES]
    judge_group = Group.objects.get(name="judge")
    for judge in judges:
        judge.groups.add(judge_group)
    campaign = services.create_campaign(
        lead=lead, name="TREC DL 2026 passages", overlap=3, judges=judges, relevance_threshold=2
    )
    campaign.seed = 2026  # the same queues, hence the same demo, on every run
    campaign.save(update_fields=["seed"])
    for qid, query in QUERIES:
        Topic.objects.create(campaign=campaign, qid=qid, query=query)
    services.add_pairs(
        campaign=campaign,
        pairs=[(qid, f"{qid}-p{d}") for qid, _ in QUERIES for d in range(18)],
        source=PairSource.POOLED,
    )
    rng = np.random.default_rng(7)
    pairs = Pair.objects.select_related("topic", "document").order_by(
        "topic__qid", "document__docno"
    )
    truth = {p.pk: int(rng.choice(4, p=[0.4, 0.25, 0.2, 0.15])) for p in pairs}
    gold = [p for p in pairs if p.document.docno.endswith(("-p0", "-p17"))][::3]
    services.set_gold(
        campaign=campaign, entries=[(p.topic.qid, p.document.docno, truth[p.pk]) for p in gold]
    )
    gold_ids = {p.pk for p in gold}
    hard_topic = Topic.objects.get(campaign=campaign, qid="1063750").pk
    new, skipped = [], []
    assignments = Assignment.objects.select_related("judge", "pair").order_by(
        "pair__topic__qid", "pair__document__docno", "judge__username"
    )
    for a in assignments:
        shift, guess = JUDGES[a.judge.username]
        if a.pair.topic_id == hard_topic:
            guess = 0.7
        if rng.random() < 0.02 and a.pair_id not in gold_ids:
            new.append(Judgment(assignment=a, grade=None, skip_reason="can't judge"))
            skipped.append(a.pk)
            continue
        grade = int(rng.integers(0, 4)) if rng.random() < guess else truth[a.pair_id] + shift
        new.append(Judgment(assignment=a, grade=min(3, max(0, grade)), seconds=12.0))
    Judgment.objects.bulk_create(new)
    Assignment.objects.exclude(pk__in=skipped).update(status=AssignmentStatus.DONE)
    Assignment.objects.filter(pk__in=skipped).update(status=AssignmentStatus.SKIPPED)
    tally_pairs(campaign=campaign)  # what the judging services do in their transaction
    return campaign


def log_in(page, live_server, user) -> None:
    """The lead's session cookie in the browser (the login form has its own tests)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": live_server.url}])


def test_the_lead_reads_the_report_and_follows_a_topic_to_its_disputed_pairs(
    page, live_server, campaign, screenshot
):
    log_in(page, live_server, campaign.lead)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/agreement/")

    heatmap = page.locator("table.heatmap")
    expect(heatmap).to_be_visible()
    expect(heatmap.locator("tbody tr")).to_have_count(5)
    expect(heatmap.locator("tbody td")).to_have_count(25)
    expect(heatmap.locator("tbody td.heat-self")).to_have_count(5)
    result = agreement_service.campaign_agreement(campaign=campaign)
    ana_ben = result.pair("ana", "ben")
    expect(heatmap.locator(f'td[title^="ana / ben: κ {ana_ben.kappa.value:.4f}"]')).to_have_text(
        f"{ana_ben.kappa.value:.2f}{ana_ben.n}"
    )
    expect(page.get_by_text(f"{result.report.fleiss.value:.4f}").first).to_be_visible()
    screenshot("agreement-report")

    page.get_by_text("Download", exact=True).click()
    json_link = page.get_by_role("link", name="JSON (everything)")
    expect(json_link).to_be_visible()
    download = page.request.get(live_server.url + json_link.get_attribute("href"))
    assert download.ok and download.json()["counts"]["judges"] == 5
    page.get_by_text("Download", exact=True).click()  # a click outside closes it too

    page.locator("details.pair-detail summary").first.click()
    expect(page.locator("details.pair-detail table.confusion").first).to_be_visible()
    screenshot("agreement-report-pair-open")

    # Which judges hold which topic depends on database ids, so the worst topic is read from
    # the service rather than assumed (it is nearly always 1063750, graded at random).
    worst = result.topics[0]
    assert worst.agreement.disputed > 0
    first_row = page.locator("#topics ~ .overflow-auto table tbody tr").first
    expect(first_row.locator("code")).to_have_text(worst.qid)
    link = first_row.locator("a.disputed")
    expect(link).to_have_text(str(worst.agreement.disputed))
    link.click()
    expect(page).to_have_url(
        re.compile(rf"/campaigns/{campaign.pk}/adjudicate/\?topic={worst.topic_id}&show=all$")
    )
    expect(page.get_by_role("heading", level=1)).to_contain_text(worst.qid)
    # The queue lists exactly the pairs the report counted as disputed.
    expect(page.locator("table.disagreements tbody tr")).to_have_count(
        min(worst.agreement.disputed, 50)
    )


def test_the_lead_reads_the_calibration_page(page, live_server, campaign, screenshot):
    log_in(page, live_server, campaign.lead)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/calibration/")

    expect(page.get_by_role("heading", name="Calibration")).to_be_visible()
    rows = page.locator("table").first.locator("tbody tr")
    expect(rows).to_have_count(5)
    words = {"ok": "ok", "flagged": "flagged", "unchecked": "not checked"}
    result = gold_service.campaign_calibration(campaign=campaign)
    assert {row.status for row in result.judges} >= {"ok", "flagged"}, "a demo with both"
    for row in result.judges:
        status = rows.filter(has=page.get_by_role("cell", name=row.judge, exact=True))
        expect(status.locator(".status")).to_have_text(words[row.status])
    screenshot("calibration")
