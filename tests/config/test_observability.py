"""Request ids, JSON logs and Prometheus metrics (config/request_ids.py, config/metrics.py)."""

import logging
import re

import pytest

from annotation import services
from annotation.models import Assignment, PairSource, Topic
from config.request_ids import RequestIdFilter
from jobs.models import Job, JobStatus

pytestmark = pytest.mark.django_db

TOKEN = "scrape-token-for-tests"


def scrape(client, token=TOKEN):
    return client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")


def sample(text: str, name: str, **labels) -> float:
    """The value of one sample line of the Prometheus text format."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split(" ")[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no sample {name}{labels} in:\n{text}")


# --- request ids -------------------------------------------------------------------------


def test_every_answer_carries_a_fresh_request_id(client):
    first, second = client.get("/accounts/login/"), client.get("/accounts/login/")
    assert re.fullmatch(r"[0-9a-f]{32}", first["X-Request-ID"])
    assert first["X-Request-ID"] != second["X-Request-ID"]


def test_a_sane_client_request_id_is_kept_and_a_hostile_one_replaced(client):
    kept = client.get("/healthz", HTTP_X_REQUEST_ID="lb-7f3a:42")
    replaced = client.get("/healthz", HTTP_X_REQUEST_ID="x\r\nSet-Cookie: a=b")
    assert kept["X-Request-ID"] == "lb-7f3a:42"
    assert re.fullmatch(r"[0-9a-f]{32}", replaced["X-Request-ID"])


def test_log_lines_written_while_serving_carry_the_request_id(client, settings):
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    handler.addFilter(RequestIdFilter())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        response = client.get("/no-such-page/", HTTP_X_REQUEST_ID="trace-1")
    finally:
        logger.removeHandler(handler)
    assert response.status_code == 404
    assert [r.request_id for r in records] == ["trace-1"]  # "Not Found: /no-such-page/"


# --- metrics -----------------------------------------------------------------------------


def test_metrics_do_not_exist_without_a_token(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404


def test_metrics_need_the_scrape_token(client, settings):
    settings.METRICS_TOKEN = TOKEN
    refused = scrape(client, token="wrong")
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert client.get("/metrics").status_code == 401


def test_metrics_time_requests_by_route_and_count_jobs_by_status(
    client, settings, django_user_model
):
    settings.METRICS_TOKEN = TOKEN
    settings.ALLOWED_HOSTS = ["judging.example"]
    before = scrape(client, token=TOKEN).content.decode()
    try:
        was = sample(
            before,
            "http_request_duration_seconds_count",
            route="accounts/login/",
            method="GET",
            status="200",
        )
    except AssertionError:
        was = 0.0
    for _ in range(3):
        client.get("/accounts/login/", HTTP_HOST="judging.example")
    user = django_user_model.objects.create_user("eng")
    Job.objects.create(kind="evaluation.import_run", title="a", created_by=user)
    Job.objects.create(kind="evaluation.import_run", title="b", created_by=user)
    Job.objects.create(
        kind="evaluation.import_run", title="c", created_by=user, status=JobStatus.FAILED
    )

    # Prometheus scrapes by the node's address: no host check.
    response = client.get("/metrics", HTTP_HOST="10.0.0.7", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    count = sample(
        text,
        "http_request_duration_seconds_count",
        route="accounts/login/",
        method="GET",
        status="200",
    )
    assert count == was + 3
    assert sample(text, "jobs", status="queued") == 2
    assert sample(text, "jobs", status="failed") == 1
    assert sample(text, "jobs", status="running") == 0


def test_grades_are_counted_when_they_commit(
    client, settings, django_user_model, django_capture_on_commit_callbacks
):
    settings.METRICS_TOKEN = TOKEN
    lead = django_user_model.objects.create_user("lead")
    judge = django_user_model.objects.create_user("judge")
    campaign = services.create_campaign(lead=lead, name="c", overlap=1, judges=[judge])
    Topic.objects.create(campaign=campaign, qid="1", query="q")
    services.add_pairs(campaign=campaign, pairs=[("1", "d1")], source=PairSource.IMPORTED)
    assignment = Assignment.objects.get()

    def graded() -> float:
        try:
            return sample(scrape(client).content.decode(), "judging_grades_total", action="graded")
        except AssertionError:
            return 0.0

    before = graded()
    with django_capture_on_commit_callbacks(execute=True):
        services.record_judgment(assignment_id=assignment.pk, judge=judge, grade=2)
    assert graded() == before + 1
