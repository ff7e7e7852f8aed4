"""The machine judges page offers "Send for audit" only when there is something to audit
(issue 28): before any machine has graded a pair it says why instead of showing a form with a
radio preselected; once there is, the preselected kind is one that has pairs to send."""

import re

import pytest

from annotation import services
from annotation.models import Document, PairSource, Topic
from annotation.services.imports import import_judgments

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


def machines_page(client, user, campaign) -> str:
    client.force_login(user)
    response = client.get(f"/campaigns/{campaign.pk}/machines/")
    assert response.status_code == 200
    return response.content.decode()


def test_no_audit_form_before_any_machine_has_graded(client, world):
    campaign = services.create_campaign(
        lead=world.users["lead"], name="Fresh", judges=[world.users["judge"]]
    )

    html = machines_page(client, world.users["lead"], campaign)

    assert "Send for audit" not in html and 'name="kind"' not in html
    assert (
        '<p class="muted" data-testid="nothing-to-audit">This campaign has no machine judge with '
        "a grade: there is nothing to audit.</p>"
    ) in html


def test_nothing_left_to_audit_says_why_each_kind_cannot_be_sent(client, world):
    """The world's one machine graded one pair, already covered: no kind has a pair."""
    html = machines_page(client, world.users["lead"], world.campaign)

    assert 'name="kind"' not in html
    assert (
        "Machine judges can disagree only when two or more graded pairs; this campaign has 1. "
        "No pair graded by a machine is short of human judges and unsent.</p>"
    ) in html


def test_the_audit_form_preselects_a_kind_with_pairs_to_send(client, world):
    lead = world.users["lead"]
    campaign = services.create_campaign(lead=lead, name="Fresh", judges=[world.users["judge"]])
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    services.add_pairs(campaign=campaign, pairs=[("1", "d1")], source=PairSource.IMPORTED)
    Document.objects.create(campaign=campaign, docno="d2")
    import_judgments(
        campaign=campaign,
        source=b"1 0 d2 1\n",
        file_name="llm.qrels",
        user=lead,
        judge_name="llm",
        judge_kind="machine",
        add_missing_pairs=True,
    )

    html = machines_page(client, lead, campaign)

    assert "Send for audit" in html
    checked = re.findall(r'<input type="radio" name="kind" value="(\w+)" checked>', html)
    assert checked == ["sample"]
    assert "— from 1 pair" in html
