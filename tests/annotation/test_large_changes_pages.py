"""The lead's pages with changes larger than one request may write (SYNC_WRITE_ROWS, here 3;
jobs/services/limits.py, issue 27 finding 8): they go to a job, whose page the lead is sent to, or
are refused (a gold file) with a message naming the limit and what to do instead."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import services
from annotation.models import Assignment, ExternalGrade, Pair, Topic
from jobs.models import Job, JobStatus
from tests.annotation.test_campaign_views import campaign_post, user_with

pytestmark = pytest.mark.django_db

LIMIT = 3


@pytest.fixture(autouse=True)
def small_limit(settings, media_root):
    settings.SYNC_WRITE_ROWS = LIMIT


@pytest.fixture
def judges(django_user_model):
    return [user_with(django_user_model, name, "judge") for name in ("ann", "bob", "cy")]


@pytest.fixture
def post(client, lead, django_capture_on_commit_callbacks):
    """``post(url, data)`` as the lead; a job started runs when the request commits."""
    client.force_login(lead)

    def send(url, data):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(url, data)

    return send


@pytest.fixture
def campaign(lead, judges):
    campaign = services.create_campaign(lead=lead, name="Robust", overlap=2, judges=judges[:1])
    for qid in ("1", "2"):
        Topic.objects.create(campaign=campaign, qid=qid, query=f"query {qid}")
    return campaign


@pytest.fixture
def short_of_judges(campaign):
    """Overlap 2, one judge, five pairs: a second judge would get five assignments."""
    services.add_pairs(
        campaign=campaign, pairs=[("1", f"p{i}") for i in range(5)], source="imported"
    )
    return campaign


def the_job(response) -> Job:
    assert response.status_code == 302, response.content[:500]
    job = Job.objects.latest("created_at")
    assert response["Location"] == job.get_absolute_url()
    job.refresh_from_db()
    return job


def test_adding_a_judge_who_gets_many_pairs_runs_as_a_job(post, short_of_judges, judges):
    response = post(
        f"/campaigns/{short_of_judges.pk}/judges/", {"action": "add", "judge": judges[2].pk}
    )
    job = the_job(response)
    assert (job.status, job.kind) == (JobStatus.SUCCEEDED, "annotation.edit_campaign"), job.step
    assert Assignment.objects.filter(judge=judges[2]).count() == 5


def test_reassigning_much_open_work_runs_as_a_job(post, short_of_judges, judges):
    services.add_judge(campaign=short_of_judges, judge=judges[2])  # now holds all five too
    mover, taker = judges[0], judges[1]
    short_of_judges.judges.add(taker)
    response = post(
        f"/campaigns/{short_of_judges.pk}/reassign/",
        {"from_judge": mover.pk, "to_judge": taker.pk},
    )
    job = the_job(response)
    assert (job.status, job.kind) == (JobStatus.SUCCEEDED, "annotation.reassign"), job.step
    assert Assignment.objects.filter(judge=taker).count() == 5


def test_an_edit_that_adds_a_judge_to_a_large_pool_is_saved_by_a_job(post, short_of_judges, judges):
    data = campaign_post([judges[0], judges[1]], name="Renamed by a job")
    response = post(f"/campaigns/{short_of_judges.pk}/edit/", data)

    job = the_job(response)
    assert job.status == JobStatus.SUCCEEDED, job.step
    short_of_judges.refresh_from_db()
    assert short_of_judges.name == "Renamed by a job"
    assert Assignment.objects.filter(judge=judges[1]).count() == 5


def test_a_judgments_file_of_many_grades_is_imported_by_a_job(post, campaign):
    services.add_pairs(campaign=campaign, pairs=[("1", "d1")], source="imported")
    lines = "qid,docno,judge,grade\n" + "".join(f"1,d1,w{i},2\n" for i in range(LIMIT + 1))
    response = post(
        f"/campaigns/{campaign.pk}/judgments/import/",
        {"file": SimpleUploadedFile("crowd.csv", lines.encode()), "format": ""},
    )
    job = the_job(response)
    assert (job.status, job.kind) == (JobStatus.SUCCEEDED, "annotation.import_judgments")
    assert ExternalGrade.objects.filter(pair__campaign=campaign).count() == LIMIT + 1


def test_a_gold_file_over_the_limit_is_refused_on_the_page_with_the_limit(post, campaign):
    gold = "".join(f"1 g{i} 1\n" for i in range(LIMIT + 1)).encode()
    response = post(
        f"/campaigns/{campaign.pk}/calibration/gold/",
        {"file": SimpleUploadedFile("gold.txt", gold)},
    )
    assert response.status_code == 413
    page = response.content.decode()
    assert "4 gold pairs are more than one request may write: at most 3" in page
    assert "(SYNC_WRITE_ROWS)" in page
    assert not Pair.objects.filter(document__docno__startswith="g").exists()


def test_publishing_a_large_campaign_runs_as_a_job_that_says_why_it_cannot(post, short_of_judges):
    """Five pairs, none decided: the job is refused for the reason the page would give."""
    response = post(f"/campaigns/{short_of_judges.pk}/publish/", {"leave_out": "on"})

    job = the_job(response)
    assert (job.status, job.kind) == (JobStatus.FAILED, "annotation.publish")
    assert job.step == "No pair has a final grade yet: there is nothing to publish."
    assert job.can_retry is False
