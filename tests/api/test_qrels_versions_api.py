"""Qrels versions over the API beyond the plain download: the binary file at a relevance
threshold (``download/?binary=1``) and the diff between two versions (``diff/{other}/``).
Who may call them is in test_permissions.py."""

import pytest

from annotation import services as annotation
from annotation.services import adjudication
from evaluation import services
from tests.api.conftest import QRELS

pytestmark = pytest.mark.django_db

NEWER = b"1 0 d1 3\n1 0 d5 1\n2 0 d3 1\n2 0 d4 0\n"  # d1 2->3, d2 gone, d5 new, d4 3->0


@pytest.fixture
def reader(make_user, api):
    # Leads and engineers read every qrels version; judges only their closed campaigns'
    # (tests/api/test_qrels_access.py).
    return api(make_user("eng", "engineer"))


@pytest.fixture
def versions(media_root):
    old = services.import_qrels(source=QRELS, filename="dl.qrels", name="dl")
    new = services.import_qrels(source=NEWER, filename="dl2.qrels", name="dl")
    return old, new


def text(response) -> str:
    return response.content.decode()


def test_binary_download_maps_grades_at_1_by_default_for_imported_qrels(reader, versions):
    old, _ = versions
    response = reader.get(f"/api/v1/qrels/{old.pk}/download/?binary=1", HTTP_ACCEPT="text/plain")
    assert response.status_code == 200
    assert text(response) == "1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n2 0 d4 1\n"
    assert response["Content-Disposition"] == 'attachment; filename="dl-v1-binary-at-1.qrels"'
    graded = reader.get(f"/api/v1/qrels/{old.pk}/download/?binary=0", HTTP_ACCEPT="text/plain")
    assert text(graded) == "1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n2 0 d4 3\n"


def test_binary_download_takes_a_threshold(reader, versions):
    old, _ = versions
    response = reader.get(
        f"/api/v1/qrels/{old.pk}/download/?binary=true&threshold=3", HTTP_ACCEPT="text/plain"
    )
    assert text(response) == "1 0 d1 0\n1 0 d2 0\n2 0 d3 0\n2 0 d4 1\n"
    assert "binary-at-3" in response["Content-Disposition"]


@pytest.mark.parametrize("query", ["binary=maybe", "binary=1&threshold=-1", "binary=1&threshold=x"])
def test_a_bad_binary_parameter_is_a_400_naming_it(reader, versions, query):
    old, _ = versions
    response = reader.get(f"/api/v1/qrels/{old.pk}/download/?{query}")
    assert response.status_code == 400
    assert set(response.json()) <= {"binary", "threshold"} and response.json()


def test_a_published_versions_binary_file_keeps_the_threshold_it_was_published_at(
    make_user, api, media_root
):
    lead = make_user("lea", "lead")
    judge = make_user("ann", "judge")
    campaign = annotation.create_campaign(
        lead=lead, name="Robust", judges=[judge], relevance_threshold=2
    )
    from annotation.models import Assignment, Topic

    Topic.objects.create(campaign=campaign, qid="1", query="q")
    annotation.add_pairs(campaign=campaign, pairs=[("1", "d1"), ("1", "d2")], source="imported")
    for assignment, grade in zip(
        Assignment.objects.order_by("pair__document__docno"), (1, 2), strict=True
    ):
        annotation.record_judgment(assignment_id=assignment.pk, judge=judge, grade=grade)
    qrels = adjudication.publish(campaign=campaign, user=lead).qrels
    url = f"/api/v1/qrels/{qrels.pk}/download/?binary=1"
    before = api(judge).get(url, HTTP_ACCEPT="text/plain")
    assert text(before) == "1 0 d1 0\n1 0 d2 1\n"

    annotation.update_campaign(campaign=campaign, relevance_threshold=1)
    after = api(judge).get(url, HTTP_ACCEPT="text/plain")
    assert after.content == before.content
    assert "binary-at-2" in after["Content-Disposition"]


def test_the_diff_lists_added_removed_and_changed_grades(reader, versions):
    old, new = versions
    response = reader.get(f"/api/v1/qrels/{new.pk}/diff/{old.pk}/")
    assert response.status_code == 200
    assert response.json() == {
        "old": {"id": old.pk, "label": "dl v1"},
        "new": {"id": new.pk, "label": "dl v2"},
        "added": [{"qid": "1", "docno": "d5", "grade": 1}],
        "removed": [{"qid": "1", "docno": "d2", "grade": 0}],
        "changed": [
            {"qid": "1", "docno": "d1", "old_grade": 2, "new_grade": 3},
            {"qid": "2", "docno": "d4", "old_grade": 3, "new_grade": 0},
        ],
        "unchanged": 1,
    }
    same = reader.get(f"/api/v1/qrels/{old.pk}/diff/{old.pk}/").json()
    assert (same["added"], same["removed"], same["changed"], same["unchanged"]) == ([], [], [], 4)


def test_a_diff_with_a_missing_version_is_a_404(reader, versions):
    old, _ = versions
    assert reader.get(f"/api/v1/qrels/{old.pk}/diff/999999/").status_code == 404
    assert reader.get(f"/api/v1/qrels/999999/diff/{old.pk}/").status_code == 404


def test_anonymous_users_cannot_read_a_diff(api, versions):
    old, new = versions
    assert api().get(f"/api/v1/qrels/{new.pk}/diff/{old.pk}/").status_code == 403
