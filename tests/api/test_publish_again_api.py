"""POST /campaigns/<id>/publications/ with grades equal to the newest version of the name
(issue 28, item 5): a 409 naming that version, a copy only with ``identical_to`` set to
it, and never two copies from one request sent twice."""

import pytest
import yaml
from django.core.management import call_command

from evaluation.models import QrelsVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


@pytest.fixture
def lead(api, world):
    return api(world.users["lead"])


def url(world) -> str:
    return f"/api/v1/campaigns/{world.campaign.pk}/publications/"


SAME = {"name": "robust", "leave_out_undecided": True}  # what the world published as v1


def test_the_same_grades_again_are_a_409_naming_the_version(lead, world):
    v1 = world.publication.qrels

    response = lead.post(url(world), SAME, format="json")

    assert response.status_code == 409
    assert response.json() == {
        "detail": "These grades are exactly those of robust v1, the newest version of 'robust': "
        "publishing them would make robust v2, an identical copy. "
        f"Send identical_to={v1.pk} to publish it anyway.",
        "identical_to": {"id": v1.pk, "label": "robust v1", "checksum": v1.checksum},
    }
    assert QrelsVersion.objects.filter(name="robust").count() == 1


def test_identical_to_publishes_one_copy_and_a_resent_request_is_refused(lead, world):
    v1 = world.publication.qrels
    body = {**SAME, "identical_to": v1.pk}

    first = lead.post(url(world), body, format="json")
    again = lead.post(url(world), body, format="json")

    assert first.status_code == 201 and first.json()["label"] == "robust v2"
    assert first.json()["checksum"] == v1.checksum
    assert again.status_code == 409
    assert again.json()["identical_to"]["label"] == "robust v2"
    assert QrelsVersion.objects.filter(name="robust").count() == 2


def test_a_retry_with_its_idempotency_key_gets_the_first_answer(lead, world):
    body = {**SAME, "identical_to": world.publication.qrels.pk}
    first = lead.post(url(world), body, format="json", HTTP_IDEMPOTENCY_KEY="pub-1")
    retry = lead.post(url(world), body, format="json", HTTP_IDEMPOTENCY_KEY="pub-1")
    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json()
    assert QrelsVersion.objects.filter(name="robust").count() == 2


@pytest.mark.parametrize("value", ["v1", 0, -3, 2**63])
def test_a_malformed_identical_to_is_a_400(lead, world, value):
    response = lead.post(url(world), {**SAME, "identical_to": value}, format="json")
    assert response.status_code == 400 and "identical_to" in response.json()


def test_the_schema_documents_identical_to(tmp_path):
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    schema = yaml.safe_load(target.read_text())
    publish = schema["components"]["schemas"]["Publish"]["properties"]
    assert "equal this qrels version" in publish["identical_to"]["description"]
    refused = schema["components"]["schemas"]["PublishBlocked"]["properties"]
    assert "Send identical_to=id" in refused["identical_to"]["description"]
