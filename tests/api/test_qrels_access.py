"""Who may read qrels (issue 12 part 7): leads, engineers and admins every version; judges
only the versions of campaigns that have closed for them (no open assignment left), or none
with QRELS_FOR_JUDGES=none; an imported file never. Through the API and the pages."""

import pytest

from accounts.services.tokens import create_token
from annotation import services
from annotation.models import Assignment, AssignmentStatus
from evaluation.access import readable_qrels
from evaluation.models import QrelsVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


def close_for(user):
    """Grade every open assignment of the user: the campaign closes for them."""
    for assignment in Assignment.objects.filter(judge=user, status=AssignmentStatus.OPEN):
        services.record_judgment(assignment_id=assignment.pk, judge=user, grade=1)


def test_a_judge_reads_their_campaigns_qrels_once_it_has_closed_for_them(api, client, world):
    judge, published = world.users["judge"], world.publication.qrels
    client.force_login(judge)
    assert api(judge).get(f"/api/v1/qrels/{published.pk}/").status_code == 404
    assert client.get(f"/evaluation/qrels/{published.pk}/").status_code == 404
    close_for(judge)
    assert api(judge).get(f"/api/v1/qrels/{published.pk}/").status_code == 200
    assert api(judge).get(f"/api/v1/qrels/{published.pk}/download/").status_code == 200
    assert client.get(f"/evaluation/qrels/{published.pk}/").status_code == 200
    listed = api(judge).get("/api/v1/qrels/").json()["results"]
    assert [item["id"] for item in listed] == [published.pk]  # not the imported file
    page = client.get("/evaluation/qrels/")
    assert [v.pk for v in page.context["page"].object_list] == [published.pk]
    # Diffing against a version they may not read is refused too.
    other = world.qrels.pk
    assert api(judge).get(f"/api/v1/qrels/{published.pk}/diff/{other}/").status_code == 404
    assert client.get(f"/evaluation/qrels/{published.pk}/diff/{other}/").status_code == 404


def test_with_none_judges_read_no_qrels_at_all(api, world, settings):
    settings.QRELS_FOR_JUDGES = "none"
    judge, published = world.users["judge"], world.publication.qrels
    close_for(judge)
    assert api(judge).get(f"/api/v1/qrels/{published.pk}/").status_code == 404
    assert api(judge).get("/api/v1/qrels/").json()["results"] == []


def test_a_judge_of_another_campaign_reads_nothing_of_this_one(world, make_user):
    stranger = make_user("sam", "judge")
    assert not readable_qrels(stranger, QrelsVersion.objects.all()).exists()


def test_a_bearer_token_is_the_user_the_guard_checks(api, world):
    judge, published = world.users["judge"], world.publication.qrels
    _, key = create_token(user=judge, name="t")
    client = api()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get(f"/api/v1/qrels/{published.pk}/").status_code == 404
    close_for(judge)
    assert client.get(f"/api/v1/qrels/{published.pk}/").status_code == 200


def test_leads_and_engineers_read_every_version(api, world):
    for role in ("lead", "engineer", "admin", "other_lead"):
        user = world.users[role]
        assert api(user).get(f"/api/v1/qrels/{world.qrels.pk}/").status_code == 200
        assert len(api(user).get("/api/v1/qrels/").json()["results"]) == 2
