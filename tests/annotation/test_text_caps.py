"""Caps on the free text people type in annotation (issue 27, finding 14; common.text_limits):
each enforced by the form, the serializer and the service, with the limit in the message, and
nothing stored when refused. The world is tests/api/conftest.py's: lea leads "Robust", ann
judges it."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation import services
from annotation.models import Campaign, Judgment, JudgmentChange, LeadDecision
from annotation.services import adjudication
from common import text_limits
from tests.api import conftest as shared

# tests/api/conftest.py's fixtures (the world: a campaign, users by role, qrels, a run).
api, make_user, world = shared.api, shared.make_user, shared.world

pytestmark = pytest.mark.django_db

OVER = {
    "name": "n" * (text_limits.NAME + 1),
    "description": "d" * (text_limits.DESCRIPTION + 1),
    "guidelines": "g" * (text_limits.GUIDELINES + 1),
}


def message(field: str) -> str:
    limit = {"name": text_limits.NAME, "description": text_limits.DESCRIPTION}
    limit["guidelines"] = text_limits.GUIDELINES
    return f"Keep this to {limit[field]:,} characters; it has {limit[field] + 1:,}."


# --- campaigns ---------------------------------------------------------------------------------


@pytest.mark.parametrize("field", OVER)
def test_the_service_refuses_a_campaign_text_over_its_cap(world, field):
    lead = world.users["lead"]
    texts = {"name": "Capped", field: OVER[field]}

    with pytest.raises(ValidationError) as refused:
        services.create_campaign(lead=lead, **texts)
    assert refused.value.message_dict == {field: [message(field)]}
    assert not Campaign.objects.filter(lead=lead).exclude(pk=world.campaign.pk).exists()

    with pytest.raises(ValidationError) as refused:
        services.update_campaign(campaign=world.campaign, **{field: OVER[field]})
    assert refused.value.message_dict == {field: [message(field)]}
    world.campaign.refresh_from_db()
    assert world.campaign.name == "Robust" and world.campaign.description == ""


def test_texts_at_their_caps_are_kept(world):
    texts = {field: text[:-1] for field, text in OVER.items()}

    campaign = services.create_campaign(lead=world.users["lead"], **texts)

    assert (campaign.name, campaign.description, campaign.guidelines) == tuple(texts.values())


@pytest.mark.parametrize("field", ["description", "guidelines"])
def test_the_api_answers_400_naming_the_field(api, world, field):
    lead = api(world.users["lead"])
    url = reverse("api:campaign-detail", args=[world.campaign.pk])

    created = lead.post(
        reverse("api:campaign-list"), {"name": "Big", field: OVER[field]}, format="json"
    )
    patched = lead.patch(url, {field: OVER[field]}, format="json")

    for response in (created, patched):
        assert response.status_code == 400
        assert list(response.json()) == [field]
        assert f"{len(OVER[field]) - 1}" in response.json()[field][0]
    assert not Campaign.objects.filter(name="Big").exists()


def test_the_campaign_form_refuses_a_long_description_and_says_so(client, world):
    client.force_login(world.users["lead"])
    edit = reverse("annotation:campaign-edit", args=[world.campaign.pk])
    data = {
        "name": "Robust",
        "description": OVER["description"],
        "scale": "0-3",
        "overlap": 1,
        "relevance_threshold": 1,
        **{f"label_{g}": f"Grade {g}" for g in range(4)},
    }

    response = client.post(edit, data)

    assert response.status_code == 400
    page = response.content.decode()
    assert "Ensure this value has at most 10000 characters (it has 10001)." in page
    assert 'maxlength="10000"' in page
    world.campaign.refresh_from_db()
    assert world.campaign.description == ""


# --- judging -----------------------------------------------------------------------------------


def test_the_service_refuses_a_long_skip_reason_and_a_long_note(world):
    assignment, judge = world.assignment, world.users["judge"]
    before = JudgmentChange.objects.count()

    with pytest.raises(ValidationError) as refused:
        services.skip_assignment(assignment_id=assignment.pk, judge=judge, reason="r" * 201)
    assert refused.value.message_dict == {"reason": ["Keep this to 200 characters; it has 201."]}
    with pytest.raises(ValidationError) as refused:
        services.set_note(assignment_id=assignment.pk, judge=judge, note="x" * 10_001)
    assert refused.value.message_dict == {
        "note": ["Keep this to 10,000 characters; it has 10,001."]
    }

    judgment = Judgment.objects.get(assignment=assignment)
    assert (judgment.grade, judgment.skip_reason, judgment.note) == (2, "", "")
    assert JudgmentChange.objects.count() == before


def test_the_api_refuses_a_long_skip_reason_and_a_long_note(api, world):
    judge = api(world.users["judge"])
    base = f"/api/v1/assignments/{world.assignment.pk}"

    skipped = judge.post(f"{base}/skip/", {"reason": "r" * 201}, format="json")
    noted = judge.post(f"{base}/note/", {"note": "x" * 10_001}, format="json")

    assert skipped.status_code == noted.status_code == 400
    assert "200 characters" in skipped.json()["reason"][0]
    assert "10000 characters" in noted.json()["note"][0]


# --- adjudication --------------------------------------------------------------------------------


def test_a_leads_reason_and_a_publications_description_are_capped(world):
    campaign, lead = world.campaign, world.users["lead"]
    pair = world.assignment.pair
    with pytest.raises(ValidationError, match=r"Keep the reason to 2,000 characters\."):
        adjudication.decide_pair(
            campaign=campaign, pair_id=pair.pk, lead=lead, grade=1, reason="r" * 2001, based_on=None
        )
    assert not LeadDecision.objects.exists()
    with pytest.raises(ValidationError) as refused:
        adjudication.publish(
            campaign=campaign, user=lead, description=OVER["description"], leave_out_undecided=True
        )
    assert refused.value.message_dict == {"description": [message("description")]}
    with pytest.raises(ValidationError) as refused:
        adjudication.publish(campaign=campaign, user=lead, name="q" * 101)
    assert refused.value.message_dict == {"name": ["Keep this to 100 characters; it has 101."]}


def test_the_publish_page_refuses_a_long_description_with_a_400(client, world):
    client.force_login(world.users["lead"])
    response = client.post(
        reverse("annotation:publish", args=[world.campaign.pk]),
        {"name": "robust", "description": OVER["description"], "leave_out": "on"},
    )

    assert response.status_code == 400
    assert message("description") in response.content.decode()
