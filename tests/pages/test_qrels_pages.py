"""The qrels pages as each role meets them (issue 28, items 4 and 9): a published version
says where it came from and offers its downloads and the other versions of its name; a
judge is told why versions are missing instead of "import one with manage.py"."""

import pytest

from annotation.models import Assignment, AssignmentStatus
from annotation.services import adjudication, record_judgment
from evaluation import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


def page(client, user, url: str) -> str:
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def test_a_published_version_names_its_campaign_and_offers_every_download(client, world):
    published = world.publication.qrels

    html = page(client, world.users["lead"], f"/evaluation/qrels/{published.pk}/")

    campaign = world.publication.campaign
    assert f'the campaign <a href="/campaigns/{campaign.pk}/">Robust</a>' in html
    assert "Majority (a tie goes to the lead); relevant from grade 1" in html
    assert f'href="/evaluation/qrels/{published.pk}/download/?binary=1"' in html
    provenance = f"/campaigns/{campaign.pk}/download/provenance/"
    assert f'href="{provenance}?publication={world.publication.pk}"' in html
    assert "—" not in html.split('data-testid="qrels-origin">')[1].split("</dd>")[0]
    csv = client.get(f"{provenance}?publication={world.publication.pk}")
    assert csv.status_code == 200 and b"basis" in csv.content.splitlines()[0]


def test_engineers_and_other_leads_read_the_campaigns_name_without_its_lead_only_links(
    client, world
):
    published = world.publication.qrels
    for role in ("engineer", "other_lead"):
        html = page(client, world.users[role], f"/evaluation/qrels/{published.pk}/")

        assert "the campaign <strong>Robust</strong>" in html
        assert "download/provenance" not in html
        assert "The campaign's lead can download the provenance of each grade." in html


def test_an_imported_version_names_its_file(client, world):
    html = page(client, world.users["engineer"], f"/evaluation/qrels/{world.qrels.pk}/")

    assert "the file <code>dl.qrels</code> (imported from a trec qrels file)" in html
    assert "download/provenance" not in html
    assert "dl v1 is the only version of dl." in html


def test_any_two_versions_of_a_name_are_compared_from_their_pages(client, world):
    lead = world.users["lead"]
    first = world.publication.qrels
    second = adjudication.publish(
        campaign=world.publication.campaign,
        user=lead,
        leave_out_undecided=True,
        identical_to=first.pk,  # the same grades: a confirmed copy
    ).qrels
    third = services.import_qrels(source=b"1 0 d1 3\n", filename="x.qrels", name=first.name)

    html = page(client, lead, f"/evaluation/qrels/{second.pk}/")
    assert (
        f'href="/evaluation/qrels/{second.pk}/diff/{first.pk}/">changes since {first.label}' in html
    )
    assert f'href="/evaluation/qrels/{third.pk}/diff/{second.pk}/">changes in {third.label}' in html
    assert f'<option value="{first.pk}" selected>{first.label}</option>' in html  # the previous

    # The compare form: older first whichever way round it is asked.
    answer = client.get(f"/evaluation/qrels/{first.pk}/compare/", {"other": third.pk})
    assert answer.status_code == 302
    assert answer.url == f"/evaluation/qrels/{third.pk}/diff/{first.pk}/"
    assert client.get(answer.url).status_code == 200
    assert client.get(f"/evaluation/qrels/{first.pk}/compare/", {"other": "x"}).status_code == 404

    listing = page(client, lead, "/evaluation/qrels/")
    assert (
        f'href="/evaluation/qrels/{third.pk}/diff/{second.pk}/">since v{second.version}' in listing
    )


def test_a_judge_is_told_why_qrels_are_missing_not_to_import_them(client, world):
    judge = world.users["judge"]  # an open assignment left in Robust: nothing to read yet

    html = page(client, judge, "/evaluation/qrels/")
    assert "manage.py import_qrels" not in html and "No qrels yet" not in html
    assert "once you have no open assignment left there" in html
    assert "None for you yet." in html
    home = page(client, judge, "/")
    assert 'data-testid="qrels-count"' not in home  # no "0 qrels versions"

    for assignment in Assignment.objects.filter(judge=judge, status=AssignmentStatus.OPEN):
        record_judgment(assignment_id=assignment.pk, judge=judge, grade=1)
    home = page(client, judge, "/")
    assert "<strong>1</strong><span>qrels version of your finished campaigns</span>" in home
    html = page(client, judge, "/evaluation/qrels/")
    assert "None for you yet." not in html and world.publication.qrels.name in html


def test_with_none_a_judge_reads_that_judges_do_not_read_qrels_here(client, world, settings):
    settings.QRELS_FOR_JUDGES = "none"

    html = page(client, world.users["judge"], "/evaluation/qrels/")

    assert "judges do not read them (the operator's setting" in html
    assert "QRELS_FOR_JUDGES=none" in html
    assert "None for you yet." not in html and "No qrels yet" not in html
    assert 'data-testid="qrels-count"' not in page(client, world.users["judge"], "/")


def test_leads_still_read_how_to_import_qrels_when_there_is_none(client, make_user):
    html = page(client, make_user("lee", "lead"), "/evaluation/qrels/")

    assert "No qrels yet. Import a TREC qrels file (<code>manage.py import_qrels</code>" in html
