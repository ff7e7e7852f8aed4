"""The job page's "Try again" button and POST /api/v1/jobs/{id}/retry/: the owner (and
admins) may start again a job that crashed or whose worker died; anyone else gets a 404."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from evaluation.models import Run
from jobs.models import JobStatus
from jobs.services import MESSAGES
from tests.jobs.conftest import make_stalled

pytestmark = pytest.mark.django_db


def api_for(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def test_the_job_page_offers_a_retry_when_the_worker_stopped(client, engineer, start_import):
    job = make_stalled(start_import(run=False))
    client.force_login(engineer)
    page = client.get(job.get_absolute_url()).content.decode()
    assert 'data-testid="job-stalled"' in page
    assert reverse("jobs:job-retry", args=[job.pk]) in page
    assert "hx-get" not in page, "a stalled job is not polled"


def test_the_job_page_offers_no_retry_for_a_queued_job(client, engineer, start_import):
    job = start_import(run=False)
    client.force_login(engineer)
    page = client.get(job.get_absolute_url()).content.decode()
    assert 'data-testid="job-retry"' not in page


def test_the_owner_retries_from_the_job_page(
    client, engineer, start_import, media_root, django_capture_on_commit_callbacks
):
    job = make_stalled(start_import(run=False))
    client.force_login(engineer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("jobs:job-retry", args=[job.pk]))
    assert response.status_code == 302
    assert response["Location"] == job.get_absolute_url()
    job.refresh_from_db()
    assert (job.status, job.attempt) == (JobStatus.SUCCEEDED, 2)
    assert Run.objects.count() == 1
    page = client.get(job.get_absolute_url()).content.decode()
    assert "(attempt 2)" in page


def test_a_refused_retry_from_the_page_says_why(client, engineer, start_import):
    job = start_import(run=False)
    client.force_login(engineer)
    response = client.post(reverse("jobs:job-retry", args=[job.pk]), follow=True)
    assert MESSAGES["not_retryable_queued"] in response.content.decode()


def test_the_retry_page_wants_post_and_the_owner(client, engineer, start_import, django_user_model):
    job = make_stalled(start_import(run=False))
    url = reverse("jobs:job-retry", args=[job.pk])
    assert client.post(url).status_code == 302, "anonymous: to the login page"
    client.force_login(django_user_model.objects.create_user("someone"))
    assert client.post(url).status_code == 404
    client.force_login(engineer)
    assert client.get(url).status_code == 405
    job.refresh_from_db()
    assert job.attempt == 1


def test_the_api_retries_for_the_owner_and_admins(
    engineer, start_import, media_root, django_user_model, django_capture_on_commit_callbacks
):
    job = make_stalled(start_import(run=False))
    url = reverse("api:job-retry", args=[job.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = api_for(engineer).post(url)
    assert response.status_code == 202, response.content
    assert response["Location"].endswith(reverse("api:job-detail", args=[job.pk]))
    assert response.json()["attempt"] == 2
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED

    admin = django_user_model.objects.create_superuser("root", password=None)
    other = make_stalled(start_import(run=False, filename="other.run"))
    with django_capture_on_commit_callbacks(execute=True):
        response = api_for(admin).post(reverse("api:job-retry", args=[other.pk]))
    assert response.status_code == 202, response.content
    other.refresh_from_db()
    assert (other.status, other.attempt) == (JobStatus.FAILED, 2), (
        "the same bytes are already run 1: refused, but started again all the same"
    )
    assert Run.objects.count() == 1


def test_the_api_refuses_a_retry_with_the_reason(engineer, start_import, django_user_model):
    job = start_import(run=False)
    url = reverse("api:job-retry", args=[job.pk])
    response = api_for(engineer).post(url)
    assert response.status_code == 409
    assert response.json() == {"detail": MESSAGES["not_retryable_queued"]}
    make_stalled(job)
    stranger = django_user_model.objects.create_user("someone")
    assert api_for(stranger).post(url).status_code == 404
    assert APIClient().post(url).status_code in (401, 403)
    job.refresh_from_db()
    assert job.attempt == 1


def test_the_api_lists_whether_a_job_can_be_retried(engineer, start_import):
    job = make_stalled(start_import(run=False))
    body = api_for(engineer).get(reverse("api:job-detail", args=[job.pk])).json()
    assert (body["can_retry"], body["attempt"]) == (True, 1)


@pytest.mark.django_db(transaction=True)
def test_an_api_retry_run_before_the_answer_is_200_with_the_finished_job(
    engineer, start_import, media_root, settings
):
    # Committed as on a server: the first attempt is queued (a queue nobody drains, or the
    # import would run at once) and its worker dies; the retry runs inline before answering.
    inline = settings.TASKS
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    job = make_stalled(start_import(run=False))
    settings.TASKS = inline

    response = api_for(engineer).post(reverse("api:job-retry", args=[job.pk]))

    assert response.status_code == 200, response.content
    assert (response.json()["status"], response.json()["attempt"]) == ("succeeded", 2)
    assert response["Location"].endswith(reverse("api:job-detail", args=[job.pk]))
