"""A lead's agreement report follows a judge's grade (issue 18), in Chromium: with a task
worker the report first says its numbers are being recomputed, then shows the new ones
once the worker has run the queued recomputation."""

import re

import pytest
from django.contrib.auth.models import Group
from django.test import override_settings
from playwright.sync_api import expect

from annotation import services
from annotation.models import Assignment, Document, Judgment, PairSource, Topic
from annotation.tasks import refresh_agreement_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-demo-password"
# A worker's queue that keeps what is enqueued (the test runs it, as db_worker would).
WORKER = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}


@pytest.fixture
def campaign(django_user_model):
    """Two judges on six pairs of one topic, every pair graded by both but one, which the
    judge ``ana`` still has open."""
    lead = django_user_model.objects.create_user("lead", password=PASSWORD)
    lead.groups.add(Group.objects.get(name="lead"))
    judges = [django_user_model.objects.create_user(n, password=PASSWORD) for n in ("ana", "ben")]
    for judge in judges:
        judge.groups.add(Group.objects.get(name="judge"))
    campaign = services.create_campaign(
        lead=lead, name="Pilot", overlap=2, judges=judges, relevance_threshold=2
    )
    Topic.objects.create(campaign=campaign, qid="1106007", query="what causes tides")
    services.add_pairs(
        campaign=campaign,
        pairs=[("1106007", f"d{i}") for i in range(6)],
        source=PairSource.POOLED,
    )
    # Judges' queues hold only pairs whose document has text (pooling adds docnos bare).
    Document.objects.filter(campaign=campaign).update(text="Tides follow the Moon.")
    grades = {"ana": [3, 2, 0, 1, 0, None], "ben": [3, 1, 0, 2, 1, 2]}
    for judge in judges:
        mine = Assignment.objects.filter(judge=judge).order_by("pair__document__docno")
        for assignment, grade in zip(mine, grades[judge.username], strict=True):
            if grade is not None:
                services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=grade)
    return campaign


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).not_to_have_url(re.compile("/accounts/login/"))


def test_the_report_updates_after_a_judges_grade(browser, live_server, campaign, screenshot):
    lead_page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    judge_page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    report_url = f"{live_server.url}/campaigns/{campaign.pk}/agreement/"
    summary = lead_page.locator("hgroup p")
    with override_settings(TASKS=WORKER):
        log_in(lead_page, live_server, "lead")
        lead_page.goto(report_url)
        expect(summary).to_contain_text("11 grades of 6 pairs by 2 judges")
        expect(lead_page.locator("[data-current]")).to_contain_text("Computed at")

        log_in(judge_page, live_server, "ana")
        judge_page.goto(f"{live_server.url}/campaigns/{campaign.pk}/judge/")
        expect(judge_page.locator("#document-slot [data-assignment]")).to_be_visible()
        judge_page.keyboard.press("Digit2")
        expect(judge_page.locator("#save-state")).to_have_attribute(
            "data-state", "saved", timeout=15000
        )
        assert Judgment.objects.filter(assignment__pair__campaign=campaign).count() == 12

        # The grade queued a recomputation; until a worker runs it the lead sees the stored
        # numbers, and that they are being recomputed.
        lead_page.reload()
        expect(lead_page.locator("[data-pending]")).to_contain_text("being recomputed")
        expect(summary).to_contain_text("11 grades of 6 pairs")
        screenshot("agreement-report-recomputing")

        refresh_agreement_task.call(campaign_id=campaign.pk)  # what db_worker does
        lead_page.reload()
        expect(summary).to_contain_text("12 grades of 6 pairs by 2 judges")
        expect(lead_page.locator("[data-pending]")).to_have_count(0)
        expect(lead_page.locator("[data-current]")).to_contain_text("Computed at")
