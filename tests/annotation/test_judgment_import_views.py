"""The "Judgments from elsewhere" page: judges of three kinds, the import form with its
file:line refusals, the machine settings."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Campaign, ExternalGrade, JudgmentImport
from tests.annotation.test_agreement_views import user_with

pytestmark = pytest.mark.django_db


def csv_file(data: bytes, name="crowd.csv"):
    return SimpleUploadedFile(name, data, content_type="text/csv")


@pytest.fixture
def lead_client(client, setup, django_user_model):
    campaign, lead, _ = setup
    lead.groups.add(*user_with(django_user_model, "probe", "lead").groups.all())
    client.force_login(lead)
    return client, campaign


def test_the_page_lists_judges_of_every_kind_and_the_imports(lead_client):
    client, campaign = lead_client
    url = reverse("annotation:judgments-import", args=[campaign.pk])
    data = b"qid,docno,judge,grade\n1,d0,w1,2\n1,d1,w1,3\n"
    response = client.post(url, {"file": csv_file(data)})
    assert response.status_code == 302
    page = client.get(reverse("annotation:judgments", args=[campaign.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    assert "outside:w1" in text and "j0" in text and "crowd.csv" in text
    assert "2 grades added, 0 changed, 0 unchanged" in text


def test_a_bad_file_is_shown_with_its_lines_and_nothing_is_stored(lead_client):
    client, campaign = lead_client
    url = reverse("annotation:judgments-import", args=[campaign.pk])
    data = b"qid,docno,judge,grade\n1,d0,w1,2\n9,d1,w1,3\n"
    response = client.post(url, {"file": csv_file(data, "bad.csv")})
    assert response.status_code == 400
    text = response.content.decode()
    assert "Nothing imported: bad.csv has 1 problem." in text
    assert "bad.csv:3: topic &#x27;9&#x27; is not in this campaign" in text
    assert not ExternalGrade.objects.exists() and not JudgmentImport.objects.exists()


def test_a_qrels_file_without_a_judge_is_refused_on_the_page(lead_client):
    client, campaign = lead_client
    url = reverse("annotation:judgments-import", args=[campaign.pk])
    response = client.post(url, {"file": csv_file(b"1 0 d0 2\n", "x.qrels")})
    assert response.status_code == 400
    assert "Name the judge whose grades this qrels file holds." in response.content.decode()


def test_the_machine_settings_are_saved(lead_client):
    client, campaign = lead_client
    url = reverse("annotation:machine-settings", args=[campaign.pk])
    assert client.post(url, {"machine_grades_adjudicate": "on"}).status_code == 302
    campaign = Campaign.objects.get(pk=campaign.pk)
    assert campaign.machine_grades_adjudicate and not campaign.machine_grades_fill
