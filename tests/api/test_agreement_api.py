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


# --- one gold pair: PUT / DELETE campaigns/{id}/gold/{pair}/ --------------------------------


def pair_of(campaign, qid, docno) -> Pair:
    return Pair.objects.get(campaign=campaign, topic__qid=qid, document__docno=docno)


def test_a_lead_marks_one_pool_pair_gold_and_unmarks_it(api, lead_user, campaign):
    pair = pair_of(campaign, "1", "d2")
    client = api(lead_user)
    path = f"/api/v1/campaigns/{campaign.pk}/gold/{pair.pk}/"

    response = client.put(path, {"grade": 1}, format="json")
    assert response.status_code == 200
    assert response.json() == {
        "pair": pair.pk,
        "qid": "1",
        "docno": "d2",
        "gold_grade": 1,
        "assigned": 0,  # all three judges already hold it
    }
    pair.refresh_from_db()
    assert pair.gold_grade == 1

    again = client.put(path, {"grade": 2}, format="json")
    assert again.status_code == 200 and again.json()["gold_grade"] == 2

    gone = client.delete(path)
    assert gone.status_code == 200 and gone.json()["gold_grade"] is None
    pair.refresh_from_db()
    assert pair.gold_grade is None
    assert client.delete(path).status_code == 200, "unmarking twice is no error"


def test_marking_gold_gives_the_pair_to_every_judge(api, lead_user, django_user_model):
    judges = [user_with(django_user_model, name, "judge") for name in ("ann", "bob", "cy")]
    campaign = make_campaign(lead_user, judges[:1], {("1", "d1"): {"ann": 2}})
    for judge in judges[1:]:
        campaign.judges.add(judge)
    pair = pair_of(campaign, "1", "d1")
    response = api(lead_user).put(
        f"/api/v1/campaigns/{campaign.pk}/gold/{pair.pk}/", {"grade": 3}, format="json"
    )
    assert response.status_code == 200 and response.json()["assigned"] == 2
    assert set(Assignment.objects.filter(pair=pair).values_list("judge__username", flat=True)) == {
        "ann",
        "bob",
        "cy",
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"grade": 7}, "Grade 7 is not on this campaign's scale (0, 1, 2, 3)."),
        ({"grade": "high"}, "A valid integer is required."),
        ({}, "This field is required."),
    ],
)
def test_a_bad_gold_grade_is_a_400_and_changes_nothing(api, lead_user, campaign, body, message):
    pair = pair_of(campaign, "1", "d2")
    response = api(lead_user).put(
        f"/api/v1/campaigns/{campaign.pk}/gold/{pair.pk}/", body, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {"grade": [message]}
    pair.refresh_from_db()
    assert pair.gold_grade is None


def test_a_pair_of_another_campaign_is_a_404(api, lead_user, campaign, django_user_model):
    judge = user_with(django_user_model, "dee", "judge")
    other = make_campaign(lead_user, [judge], {("1", "d1"): {"dee": 2}})
    foreign = pair_of(other, "1", "d1")
    response = api(lead_user).put(
        f"/api/v1/campaigns/{campaign.pk}/gold/{foreign.pk}/", {"grade": 1}, format="json"
    )
    assert response.status_code == 404
    assert response.json() == {"detail": "No such pair in this campaign."}
    foreign.refresh_from_db()
    assert foreign.gold_grade is None


def test_judges_and_other_leads_cannot_mark_gold(api, campaign, django_user_model):
    pair = pair_of(campaign, "1", "d2")
    path = f"/api/v1/campaigns/{campaign.pk}/gold/{pair.pk}/"
    judge = campaign.judges.get(username="ann")
    other_lead = user_with(django_user_model, "leo", "lead")
    assert api(judge).put(path, {"grade": 1}, format="json").status_code == 404
    assert api(judge).delete(path).status_code == 404
    assert api(other_lead).put(path, {"grade": 1}, format="json").status_code == 404
    assert api(other_lead).delete(path).status_code == 404
    assert api().put(path, {"grade": 1}, format="json").status_code == 403
    pair.refresh_from_db()
    assert pair.gold_grade is None


# --- calibration: GET campaigns/{id}/calibration/ -------------------------------------------


def test_calibration_is_each_judge_against_gold(api, lead_user, campaign):
    from annotation import services
    from annotation.services import gold as gold_service

    services.set_gold(campaign=campaign, entries=[("1", "d1", 3), ("1", "d2", 0), ("2", "d4", 1)])
    response = api(lead_user).get(f"/api/v1/campaigns/{campaign.pk}/calibration/?weights=linear")
    assert response.status_code == 200
    body = response.json()
    expected = gold_service.campaign_calibration(campaign=campaign, weights="linear")
    assert body["weights"] == "linear"
    assert body["min_accuracy"] == campaign.gold_min_accuracy
    assert [(g["qid"], g["docno"], g["grade"], g["graded_by"]) for g in body["gold"]] == [
        ("1", "d1", 3, 3),
        ("1", "d2", 0, 3),
        ("2", "d4", 1, 3),
    ]
    by_judge = {row["judge"]: row for row in body["judges"]}
    for row in expected.judges:
        got = by_judge[row.judge]
        assert got["status"] == row.status
        assert got["gold_pairs"] == row.calibration.n == 3
        assert got["accuracy"]["value"] == row.calibration.accuracy.value
        assert got["weighted_kappa"]["value"] == row.calibration.weighted_kappa.value
        assert got["mean_absolute_error"]["value"] == row.calibration.mean_absolute_error.value
    # ann gave the gold grades (3, 0, 1); bob gave 3, 1, 3.
    assert by_judge["ann"]["accuracy"]["value"] == 1.0
    assert by_judge["bob"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert "bob" in body["flagged"] and "ann" not in body["flagged"]


def test_calibration_without_gold_pairs_says_nobody_is_checked(api, lead_user, campaign):
    body = api(lead_user).get(f"/api/v1/campaigns/{campaign.pk}/calibration/").json()
    assert body["gold"] == [] and body["flagged"] == []
    assert {row["status"] for row in body["judges"]} == {"unchecked"}
    assert body["judges"][0]["accuracy"]["value"] is None
    assert (
        api(lead_user)
        .get(f"/api/v1/campaigns/{campaign.pk}/calibration/?weights=cubic")
        .status_code
        == 400
    )
