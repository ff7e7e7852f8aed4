"""One request writes at most SYNC_WRITE_ROWS rows (jobs/services/limits.py; issue 27, finding 8):
larger work is refused with a 413 that names the limit and the path that takes any size,
or runs as a job. The limit is set to 3 here so that small worlds reach it."""

import pytest

from annotation.models import Assignment, ExternalGrade, Pair
from config.busy import DATABASE_BUSY, RETRY_AFTER_SECONDS
from evaluation.models import QrelsVersion
from jobs.models import JobStatus
from jobs.services.limits import MESSAGES as LIMIT_MESSAGES
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


# --- changes that write many assignments: jobs --------------------------------------------


@pytest.fixture
def big_pool(world):
    """A campaign of overlap 2 whose five pairs have one judge each (only ``judge`` judges
    it): a second judge gets five assignments, more than the limit of three."""
    from annotation import services
    from annotation.models import Topic

    campaign = services.create_campaign(
        lead=world.users["lead"], name="Short of judges", overlap=2, judges=[world.users["judge"]]
    )
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    services.add_pairs(
        campaign=campaign, pairs=[("1", f"p{i}") for i in range(5)], source="imported"
    )
    return campaign


def finished(client, response) -> dict:
    assert response.status_code == 202, response.content
    return client.get(response["Location"]).json()


def test_adding_a_judge_who_gets_more_than_the_limit_is_a_job(lead, world, big_pool, run_jobs):
    spare = world.users["spare_judge"]
    with run_jobs():
        response = lead.post(
            f"/api/v1/campaigns/{big_pool.pk}/judges/", {"judge": spare.pk}, format="json"
        )

    job = finished(lead, response)
    assert (job["status"], job["kind"]) == (JobStatus.SUCCEEDED, "annotation.edit_campaign")
    assert "5 assignments made" in job["result"]["summary"], job
    assert Assignment.objects.filter(pair__campaign=big_pool, judge=spare).count() == 5


def test_removing_or_reassigning_more_open_work_than_the_limit_is_a_job(
    lead, world, big_pool, run_jobs
):
    judge, other = world.users["judge"], world.users["other_judge"]
    big_pool.judges.add(other)  # no assignments yet
    with run_jobs():
        response = lead.post(
            f"/api/v1/campaigns/{big_pool.pk}/reassign/",
            {"from_judge": judge.pk, "to_judge": other.pk},
            format="json",
        )
    job = finished(lead, response)
    assert (job["status"], job["kind"]) == (JobStatus.SUCCEEDED, "annotation.reassign"), job
    mine = Assignment.objects.filter(pair__campaign=big_pool)
    assert mine.filter(judge=other).count() == 5

    with run_jobs():
        response = lead.delete(f"/api/v1/campaigns/{big_pool.pk}/judges/{other.pk}/")
    job = finished(lead, response)
    assert job["status"] == JobStatus.SUCCEEDED, job
    assert not big_pool.judges.filter(pk=other.pk).exists()
    assert mine.filter(judge=judge).count() == 5, "the open work went back to the other judge"


def test_a_larger_overlap_that_needs_more_than_the_limit_is_a_job(lead, world, big_pool, run_jobs):
    big_pool.judges.add(world.users["other_judge"])
    with run_jobs():
        response = lead.patch(
            f"/api/v1/campaigns/{big_pool.pk}/", {"overlap": 3, "name": "Wider"}, format="json"
        )
    job = finished(lead, response)
    assert job["status"] == JobStatus.SUCCEEDED, job
    big_pool.refresh_from_db()
    assert (big_pool.overlap, big_pool.name) == (3, "Wider")
    assert Assignment.objects.filter(pair__campaign=big_pool).count() == 10


def test_a_small_change_is_still_answered_in_the_request(lead, world, big_pool):
    response = lead.patch(f"/api/v1/campaigns/{big_pool.pk}/", {"name": "Renamed"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["name"] == "Renamed"


# --- uploads read in the request ----------------------------------------------------------


def test_a_judgments_file_of_more_grades_than_the_limit_is_imported_by_a_job(
    lead, world, run_jobs, media_root
):
    lines = "qid,docno,judge,grade\n" + "".join(f"1,d1,w{i},2\n" for i in range(LIMIT + 1))
    with run_jobs():
        response = lead.post(
            campaign_url(world, "judgment-imports/"),
            {"file": upload("crowd.csv", lines.encode())},
            format="multipart",
        )

    job = finished(lead, response)
    assert (job["status"], job["kind"]) == (JobStatus.SUCCEEDED, "annotation.import_judgments")
    assert job["result"]["summary"].startswith(f"{LIMIT + 1} grades added"), job
    assert ExternalGrade.objects.filter(pair__campaign=world.campaign).count() >= LIMIT + 1
    assert not [f for f in media_root() if f.startswith("staging/")]


def test_a_bad_judgments_file_over_the_limit_fails_its_job_with_the_lines(lead, world, run_jobs):
    lines = "qid,docno,judge,grade\n" + "".join(f"1,d1,w{i},9\n" for i in range(LIMIT + 1))
    with run_jobs():
        response = lead.post(
            campaign_url(world, "judgment-imports/"),
            {"file": upload("crowd.csv", lines.encode())},
            format="multipart",
        )

    job = finished(lead, response)
    assert job["status"] == JobStatus.FAILED, job
    assert job["can_retry"] is False


def test_a_gold_file_of_more_pairs_than_the_limit_is_a_413_saying_to_split_it(lead, world):
    gold = "".join(f"1 g{i} 1\n" for i in range(LIMIT + 1)).encode()
    before = Pair.objects.count()
    response = lead.post(
        campaign_url(world, "gold/"), {"file": upload("gold.txt", gold)}, format="multipart"
    )

    assert response.status_code == 413, response.content
    detail = response.json()["detail"]
    assert detail.startswith(f"{LIMIT + 1} gold pairs are more than one request may write")
    assert "in parts of at most that many lines" in detail
    assert Pair.objects.count() == before


def test_a_qrels_file_of_more_grades_than_the_limit_is_imported_by_a_job(
    api, world, run_jobs, media_root
):
    engineer = api(world.users["engineer"])
    lines = "".join(f"1 0 q{i} 1\n" for i in range(LIMIT + 1)).encode()
    with run_jobs():
        response = engineer.post(
            "/api/v1/qrels/",
            {"file": upload("big.qrels", lines), "name": "big"},
            format="multipart",
        )

    job = finished(engineer, response)
    assert (job["status"], job["kind"]) == (JobStatus.SUCCEEDED, "evaluation.import_qrels"), job
    qrels = QrelsVersion.objects.get(pk=job["result"]["qrels"])
    assert (qrels.name, qrels.version, qrels.judgment_count) == ("big", 1, LIMIT + 1)
    assert not [f for f in media_root() if f.startswith("staging/")]


def test_publishing_a_campaign_of_more_pairs_than_the_limit_is_a_job(lead, world, run_jobs):
    with run_jobs():
        response = lead.post(
            campaign_url(world, "publications/"),
            {"name": "large", "leave_out_undecided": True},
            format="json",
        )

    job = finished(lead, response)
    assert (job["status"], job["kind"]) == (JobStatus.SUCCEEDED, "annotation.publish"), job
    qrels = QrelsVersion.objects.get(pk=job["result"]["qrels"])
    assert qrels.name == "large"
    assert job["result"]["summary"].startswith(f"Published {qrels.label}: ")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("short_busy_timeout")
def test_a_lock_met_outside_the_view_is_a_503_too(lead, world):
    """With an Idempotency-Key the middleware opens the transaction before the view runs
    (accounts/services/idempotency.py): the lock is met there, and the 500 handler answers 503."""
    lead.raise_request_exception = False  # as a server: the handler's answer, not the error
    with write_lock_held():
        response = lead.post(
            campaign_url(world, "pairs/"),
            {"pairs": pairs_of(1)},
            format="json",
            headers={"Idempotency-Key": "a-key-of-sixteen-or-more"},
        )

    assert response.status_code == 503, response.content
    assert response.json() == {"detail": DATABASE_BUSY}
