"""GET /api/v1/campaigns/{id}/agreement/ and POST /api/v1/campaigns/{id}/gold/: the report
is the JSON download's (annotation.agreement's numbers), the gold import is all or nothing.
Who may call them is in test_permissions.py."""

import json

import pytest

from annotation.models import Assignment, Pair
from tests.annotation.test_agreement_views import (
    GRADES,
    expected_report,
    make_campaign,
    url,
    user_with,
)
from tests.api.conftest import upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead_user(django_user_model):
    return user_with(django_user_model, "lea", "lead")


@pytest.fixture
def campaign(lead_user, django_user_model):
    judges = [user_with(django_user_model, name, "judge") for name in ("ann", "bob", "cy")]
    return make_campaign(lead_user, judges, GRADES)


def test_the_report_is_the_json_download(api, client, lead_user, campaign):
    client.force_login(lead_user)
    download = json.loads(
        client.get(url(campaign, "agreement-download", "json") + "?weights=none").content
    )

    response = api(lead_user).get(f"/api/v1/campaigns/{campaign.pk}/agreement/?weights=none")

    assert response.status_code == 200
    assert response.json() == download
    _, report, _ = expected_report(campaign, GRADES, "none")
    body = response.json()
    assert body["weights"] == "none"
    assert body["overall"]["fleiss_kappa"]["value"] == report.fleiss.value
    assert body["overall"]["fleiss_kappa"]["band"] == "slight"
    assert body["pairwise"][0]["kappa"]["value"] == report.pairs[0].kappa.value
    assert body["pairwise"][0]["kappa_unweighted"]["se"] == report.pairs[0].kappa_unweighted.se


def test_quadratic_is_the_default_and_unknown_weights_are_a_400(api, lead_user, campaign):
    client = api(lead_user)
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/agreement/").json()["weights"] == (
        "quadratic"
    )
    response = client.get(f"/api/v1/campaigns/{campaign.pk}/agreement/?weights=cubic")
    assert response.status_code == 400
    assert "weights" in response.json()


def test_an_undefined_statistic_is_null_with_its_reason(api, lead_user, django_user_model):
    judge = user_with(django_user_model, "ann", "judge")
    campaign = make_campaign(lead_user, [judge], {("1", "d1"): {"ann": 1}})
    body = api(lead_user).get(f"/api/v1/campaigns/{campaign.pk}/agreement/").json()
    fleiss = body["overall"]["fleiss_kappa"]
    assert fleiss["value"] is None and fleiss["band"] == "undefined"
    assert fleiss["reason"] == "only one judge has graded pairs, so there is nothing to agree on"
    assert body["pairwise"] == []


def test_a_gold_file_marks_pairs(api, lead_user, campaign):
    response = api(lead_user).post(
        f"/api/v1/campaigns/{campaign.pk}/gold/",
        {"file": upload("gold.txt", b"1 d1 3\n2 d9 1\n")},
        format="multipart",
    )
    assert response.status_code == 200
    assert response.json() == {
        "marked": 2,
        "added": 1,
        "already": 1,
        "new_documents": 1,
        "assigned": 3,
    }
    assert dict(
        Pair.objects.filter(gold_grade__isnull=False).values_list("document__docno", "gold_grade")
    ) == {"d1": 3, "d9": 1}


def test_a_bad_gold_file_is_a_400_listing_its_lines_and_changes_nothing(api, lead_user, campaign):
    assignments = Assignment.objects.count()
    response = api(lead_user).post(
        f"/api/v1/campaigns/{campaign.pk}/gold/",
        {"file": upload("gold.txt", b"1 d1 3\n8 d2 1\n1 d3 9\n")},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            "gold.txt:2: topic '8' is not in this campaign (import it first)",
            "gold.txt:3: grade 9 is not on this campaign's scale (0, 1, 2, 3)",
        ],
        "total": 2,
    }
    assert not Pair.objects.filter(gold_grade__isnull=False).exists()
    assert Assignment.objects.count() == assignments


def test_a_gold_post_without_a_file_is_a_400(api, lead_user, campaign):
    response = api(lead_user).post(f"/api/v1/campaigns/{campaign.pk}/gold/", {}, format="json")
    assert response.status_code == 400
    assert "file" in response.json()
