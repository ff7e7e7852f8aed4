"""Over the API, a lead's bad pairs or gold file answers with every problem at once (issue
28, item 10): field counts, topics the campaign does not have and repeats together, each with
file:line; a header line naming the columns is accepted."""

import pytest

from annotation.models import Pair
from jobs.models import JobStatus
from tests.api.conftest import upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


@pytest.fixture
def lead(api, world):
    return api(world.users["lead"])


def pairs_url(world) -> str:
    return f"/api/v1/campaigns/{world.campaign.pk}/pairs/"


def test_a_bad_pairs_file_fails_its_job_with_every_problem(lead, world, run_jobs):
    before = Pair.objects.count()
    data = b"qid docno\n1 d1 extra\n1099 d2\n2 d9\n2 d9\n"
    with run_jobs():
        response = lead.post(
            pairs_url(world), {"file": upload("pool.tsv", data)}, format="multipart"
        )

    assert response.status_code == 202
    job = lead.get(response["Location"]).json()
    assert job["status"] == JobStatus.FAILED
    assert job["errors"] == [
        "pool.tsv:2: expected 2 fields (qid docno), found 3",
        "pool.tsv:3: topic '1099' is not in this campaign (import it first)",
        "pool.tsv:5: pair '2' 'd9' already appears on line 4",
    ]
    assert job["error_total"] == 3
    assert Pair.objects.count() == before


def test_a_pairs_file_with_a_header_is_imported(lead, world, run_jobs):
    with run_jobs():
        response = lead.post(
            pairs_url(world),
            {"file": upload("pool.tsv", b"topic_id\tdoc_id\n2\td9\n")},
            format="multipart",
        )
    job = lead.get(response["Location"]).json()
    assert job["status"] == JobStatus.SUCCEEDED, job
    assert world.campaign.pairs.filter(topic__qid="2", document__docno="d9").exists()


def test_a_bad_gold_file_is_a_400_with_every_problem(lead, world):
    data = b"qid docno grade\n1 d1\n1099 d1 1\n2 d3 7\n"
    response = lead.post(
        f"/api/v1/campaigns/{world.campaign.pk}/gold/",
        {"file": upload("gold.tsv", data)},
        format="multipart",
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [
        "gold.tsv:2: expected 3 fields (qid docno grade) or 4 (qid iter docno grade), found 2",
        "gold.tsv:3: topic '1099' is not in this campaign (import it first)",
        "gold.tsv:4: grade 7 is not on this campaign's scale (0, 1, 2, 3)",
    ]
