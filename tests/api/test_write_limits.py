"""One request writes at most SYNC_WRITE_ROWS rows (jobs/limits.py; issue 27, finding 8):
larger work is refused with a 413 that names the limit and the path that takes any size,
or runs as a job. The limit is set to 3 here so that small worlds reach it."""

import pytest

from annotation.models import Pair
from config.busy import DATABASE_BUSY, RETRY_AFTER_SECONDS
from jobs.limits import MESSAGES as LIMIT_MESSAGES
from jobs.models import JobStatus
from tests.api.conftest import upload
from tests.jobs.locks import short_busy_timeout, write_lock_held  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

LIMIT = 3


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.SYNC_WRITE_ROWS = LIMIT


@pytest.fixture
def lead(api, world):
    return api(world.users["lead"])


def campaign_url(world, rest: str = "") -> str:
    return f"/api/v1/campaigns/{world.campaign.pk}/{rest}"


def pairs_of(n: int) -> list[dict]:
    return [{"qid": "1", "docno": f"new{i}"} for i in range(n)]


def test_a_list_of_pairs_at_the_limit_is_added_in_the_request(lead, world):
    response = lead.post(campaign_url(world, "pairs/"), {"pairs": pairs_of(LIMIT)}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["added"] == LIMIT


def test_a_list_of_pairs_over_the_limit_is_a_413_naming_the_limit_and_the_file_import(lead, world):
    before = Pair.objects.count()
    response = lead.post(
        campaign_url(world, "pairs/"), {"pairs": pairs_of(LIMIT + 1)}, format="json"
    )

    assert response.status_code == 413, response.content
    detail = response.json()["detail"]
    assert detail.startswith(
        LIMIT_MESSAGES["too_large"].split("{count")[0]
        + f"{LIMIT + 1:,} pairs are more than one request may write: at most {LIMIT:,} "
        "(SYNC_WRITE_ROWS)"
    ), detail
    assert "multipart/form-data with a `file`" in detail
    assert f"/api/v1/campaigns/{world.campaign.pk}/pairs/" in detail
    assert Pair.objects.count() == before, "nothing was added"


def test_a_list_over_the_limit_is_refused_before_its_pairs_are_checked(lead, world):
    """A long list of bad pairs: 413 at once, not a 400 listing every bad pair."""
    bad = [{"qid": "1", "docno": "two words"}] * (LIMIT + 1)
    response = lead.post(campaign_url(world, "pairs/"), {"pairs": bad}, format="json")

    assert response.status_code == 413


def test_a_file_of_pairs_of_any_size_is_imported_by_a_job(lead, world, run_jobs, media_root):
    lines = "".join(f"2 big{i}\n" for i in range(LIMIT * 4)).encode()
    with run_jobs():
        response = lead.post(
            campaign_url(world, "pairs/"), {"file": upload("pairs.tsv", lines)}, format="multipart"
        )

    assert response.status_code == 202, response.content
    job = lead.get(response["Location"]).json()
    assert job["status"] == JobStatus.SUCCEEDED, job
    assert job["kind"] == "annotation.import_pairs"
    added = Pair.objects.filter(campaign=world.campaign, document__docno__startswith="big")
    assert added.count() == LIMIT * 4
    assert not [f for f in media_root() if f.startswith("staging/")], "the staged file is gone"


def test_a_multipart_request_without_a_file_is_a_400(lead, world):
    response = lead.post(campaign_url(world, "pairs/"), {"source": "imported"}, format="multipart")

    assert response.status_code == 400
    assert response.json() == {"file": ["No file was submitted."]}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("short_busy_timeout")
def test_a_database_locked_by_another_write_is_a_503_to_try_again(lead, world):
    with write_lock_held():
        response = lead.post(campaign_url(world, "pairs/"), {"pairs": pairs_of(1)}, format="json")

    assert response.status_code == 503, response.content
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response.json() == {"detail": DATABASE_BUSY}
    assert not Pair.objects.filter(document__docno="new0").exists()
