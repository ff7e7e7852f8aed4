"""The judgments-import endpoints (issue 12 part 1): upload, list with provenance, the
campaign's outside and machine judges, and the machine settings on the campaign."""

import pytest

from annotation.models import ExternalGrade
from tests.api.conftest import upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


CROWD = b"qid,docno,judge,grade,note\n1,d1,w1,2,fine\n1,d2,w1,0,\n2,d3,w2,1,\n"


def imports_url(world, rest=""):
    return f"/api/v1/campaigns/{world.campaign.pk}/judgment-imports/{rest}"


def test_an_upload_is_imported_once_and_listed_with_its_provenance(api, world):
    client = api(world.users["lead"])
    response = client.post(
        imports_url(world), {"file": upload("crowd.csv", CROWD)}, format="multipart"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["added"], body["changed"], body["unchanged"]) == (3, 0, 0)
    assert body["judges"] == ["outside:w1", "outside:w2"]
    record = body["record"]
    assert record["file_name"] == "crowd.csv" and record["imported_by"] == "lea"
    assert len(record["sha256"]) == 64 and record["format"] == "table"

    again = client.post(
        imports_url(world), {"file": upload("crowd.csv", CROWD)}, format="multipart"
    )
    assert again.status_code == 200
    assert again.json()["record"] is None and again.json()["unchanged"] == 3
    listed = client.get(imports_url(world)).json()
    assert [item["id"] for item in listed["results"]] == [record["id"], world.judgment_import.pk]
    assert client.get(imports_url(world, f"{record['id']}/")).json() == record

    judges = client.get(f"/api/v1/campaigns/{world.campaign.pk}/external-judges/").json()
    assert [(j["label"], j["grades"]) for j in judges["results"]] == [
        ("machine:judge-7b-qrelsmith-umbrela-v1", 0),  # the world's configured machine judge
        ("machine:world-machine", 1),
        ("outside:w1", 2),
        ("outside:w2", 1),
    ]


def test_a_bad_file_is_a_400_listing_its_lines_and_stores_nothing(api, world):
    response = api(world.users["lead"]).post(
        imports_url(world),
        {"file": upload("bad.csv", b"qid,docno,judge,grade\n9,d1,w,2\n1,d1,w,7\n")},
        format="multipart",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["errors"][0] == "bad.csv:2: topic '9' is not in this campaign (import it first)"
    # The real line of the grade off the scale, no made-up line 0 before it (issue 28).
    assert body["errors"][1].startswith("bad.csv:3: grade '7' is not on this campaign's scale")
    assert len(body["errors"]) == 2
    assert ExternalGrade.objects.count() == 1  # the world's machine grade only


def test_a_qrels_file_with_a_mapping_and_a_named_machine_judge(api, world):
    response = api(world.users["lead"]).post(
        imports_url(world),
        {
            "file": upload("llm.qrels", b"1 0 d1 4\n2 0 d3 0\n"),
            "judge_name": "umbrela gpt-4o",
            "judge_kind": "machine",
            "mapping": "0:0,1:1,2:1,3:2,4:3",
        },
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json()["judges"] == ["machine:umbrela gpt-4o"]
    grades = ExternalGrade.objects.filter(judge__name="umbrela gpt-4o")
    assert sorted(grades.values_list("grade", flat=True)) == [0, 3]


def test_a_qrels_file_without_a_judge_and_a_bad_mapping_are_400s(api, world):
    client = api(world.users["lead"])
    response = client.post(
        imports_url(world), {"file": upload("x.qrels", b"1 0 d1 2\n")}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json() == {"detail": ["Name the judge whose grades this qrels file holds."]}
    response = client.post(
        imports_url(world),
        {"file": upload("c.csv", CROWD), "mapping": "2 to 1"},
        format="multipart",
    )
    assert response.status_code == 400 and "Grade mapping" in response.json()["detail"][0]


def test_the_campaign_carries_the_machine_settings_and_a_lead_changes_them(api, world):
    client = api(world.users["lead"])
    url = f"/api/v1/campaigns/{world.campaign.pk}/"
    body = client.get(url).json()
    assert (body["machine_grades_adjudicate"], body["machine_grades_fill"]) == (False, False)
    changed = client.patch(url, {"machine_grades_fill": True}, format="json").json()
    assert changed["machine_grades_fill"] is True and changed["machine_grades_adjudicate"] is False
