"""The "Judgments from elsewhere" page: judges of three kinds, the import form with its
file:line refusals, the machine settings; the formats it offers are the registry's, as the
API's, the command's and the model's are."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.api.external import JudgmentUploadSerializer
from annotation.formats import JUDGMENT_FORMAT_LIST
from annotation.forms import JudgmentsImportForm
from annotation.management.commands.import_judgments import Command
from annotation.models import Campaign, ExternalGrade, ImportFormat, JudgmentImport
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


def test_every_registered_format_is_offered_by_the_page_the_api_the_command_and_the_model(
    lead_client,
):
    client, campaign = lead_client
    page = client.get(reverse("annotation:judgments", args=[campaign.pk])).content.decode()
    form_choices = dict(JudgmentsImportForm().fields["format"].choices)
    api = JudgmentUploadSerializer()
    command = Command().create_parser("manage.py", "import_judgments")
    [format_option] = [a for a in command._actions if a.dest == "format"]
    model_choices = dict(JudgmentImport._meta.get_field("format").choices)
    for fmt in JUDGMENT_FORMAT_LIST:
        assert f"<code>{fmt.name}</code>: {fmt.description}" in page, fmt.name
        assert form_choices[fmt.name] == fmt.description
        assert fmt.name in api.fields["format"].choices
        assert fmt.description in api.fields["file"].help_text
        assert fmt.name in format_option.choices and fmt.description in Command.help
        assert model_choices[fmt.name] == fmt.label == ImportFormat(fmt.name).label
    assert len(form_choices) == len(JUDGMENT_FORMAT_LIST) + 1  # and "Detect from the file"
    assert set(api.fields["format"].choices) == {f.name for f in JUDGMENT_FORMAT_LIST}
