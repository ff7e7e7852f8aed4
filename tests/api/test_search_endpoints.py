"""Search endpoints with Django: configuring (keys and their rules), the test connection,
a query set made into a run (job, import path, provenance, failures), the API and the
command line, against loopback engines (tests/search_servers.py)."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from evaluation import services
from evaluation.models import Run, SearchEndpoint, SearchRun
from evaluation.services import endpoint_runs as runs_service
from evaluation.services import search as service
from tests.search_servers import EngineServer, Status

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


@pytest.fixture
def engine(outbound_allows_loopback, settings):
    settings.SEARCH_BACKOFF_SECONDS = 0.0
    with EngineServer("elasticsearch") as server:
        yield server


def make_endpoint(server, **changes) -> SearchEndpoint:
    fields = {"name": "es", "kind": "elasticsearch", "url": server.url, "max_retries": 0}
    fields.update(changes)
    return service.create_search_endpoint(**fields)


def test_an_endpoint_may_read_its_key_only_from_its_own_prefix(engine):
    for name in ("SECRET_KEY", "DATABASE_URL", "QRELSMITH_LLM_KEY_X", "qrelsmith_search_key_x"):
        with pytest.raises(ValidationError, match="QRELSMITH_SEARCH_KEY_"):
            make_endpoint(engine, api_key_env=name)
    endpoint = make_endpoint(engine, api_key_env="QRELSMITH_SEARCH_KEY_ES")
    assert service.key_source(endpoint) == "environment variable QRELSMITH_SEARCH_KEY_ES"


def test_a_stored_key_is_sealed_and_dropped_when_the_address_moves(engine, monkeypatch):
    endpoint = make_endpoint(engine, auth="bearer", api_key="k-123456")
    assert (
        endpoint.api_key_sealed.startswith("fernet:") and "k-123456" not in endpoint.api_key_sealed
    )
    service.update_search_endpoint(endpoint=endpoint, url="https://elsewhere.example/d/_search")
    assert endpoint.api_key_sealed == "" and endpoint.version == 2


def test_a_private_address_is_refused_when_saved(settings):
    with pytest.raises(ValidationError, match="OUTBOUND_ALLOW"):
        service.create_search_endpoint(
            name="x", kind="solr", url="http://192.168.1.5/solr/c/select"
        )


def test_the_connection_test_shows_the_hits_or_the_exact_error(engine):
    endpoint = make_endpoint(engine)
    check = service.test_connection(endpoint=endpoint, query="heat pumps")
    assert check.ok and check.hits[0].docno == "d1" and check.hits[0].title == "Heat pumps"
    engine.plan("storm", Status(503))
    check = service.test_connection(endpoint=endpoint, query="storm")
    assert not check.ok and check.kind == "server_error" and check.status == 503
    assert check.error == "the endpoint failed (HTTP 503)"


def test_an_unset_key_variable_is_a_configuration_error(engine, monkeypatch):
    monkeypatch.delenv("QRELSMITH_SEARCH_KEY_NONE", raising=False)
    endpoint = make_endpoint(engine, auth="bearer", api_key_env="QRELSMITH_SEARCH_KEY_NONE")
    check = service.test_connection(endpoint=endpoint, query="x")
    assert check.kind == "configuration" and "not set" in check.error


def test_a_campaigns_topics_become_a_run_with_its_provenance(engine, world):
    engine.plan("sourdough", Status(500))
    endpoint = make_endpoint(engine)
    made = runs_service.make_search_run(
        endpoint=endpoint, user=world.users["lead"], k=3, campaign=world.campaign.pk
    )
    run = made.run
    assert made.query_count == 2 and made.failed_count == 1
    assert made.failed[0]["qid"] == "2" and made.failed[0]["status"] == 500
    assert made.snapshot["template"] == endpoint.template and "api_key" not in str(made.snapshot)
    assert run.system.name == "es" and run.topic_count == 1 and len(run.checksum) == 64
    frame = services.load_run_frame(run)
    assert set(frame["qid"].to_list()) == {"1"} and frame["docno"].to_list()[0] == "d3"
    assert "1 of 2 queries failed" in run.description
    assert runs_service.summary(made).endswith("Failed queries: 2.")


def test_a_run_where_every_query_failed_is_not_stored(engine, world):
    engine.plan("cheap", Status(500))
    engine.plan("sourdough", Status(500))
    with pytest.raises(services.ImportRejected, match="Every query failed"):
        runs_service.make_search_run(
            endpoint=make_endpoint(engine),
            user=world.users["lead"],
            k=3,
            campaign=world.campaign.pk,
        )
    assert not SearchRun.objects.exists()


def test_another_leads_campaign_is_not_a_query_set(engine, world):
    with pytest.raises(ValidationError, match="No campaign you lead"):
        runs_service.make_search_run(
            endpoint=make_endpoint(engine),
            user=world.users["other_lead"],
            k=3,
            campaign=world.campaign.pk,
        )


def test_the_api_configures_tests_and_runs_an_endpoint(engine, world, api, run_jobs):
    client = api(world.users["lead"])
    created = client.post(
        "/api/v1/search-endpoints/",
        {
            "name": "es-api",
            "kind": "elasticsearch",
            "url": engine.url,
            "max_retries": 0,
            "auth": "bearer",
            "api_key": "sk-never-shown",
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    assert "sk-never-shown" not in created.content.decode()
    assert created.json()["key_source"] == "stored (hidden)"
    pk = created.json()["id"]
    tested = client.post(f"/api/v1/search-endpoints/{pk}/test/", {"query": "storm"}, format="json")
    assert tested.json()["ok"] and tested.json()["hits"][0]["docno"] == "d4"
    too_deep = client.post(
        f"/api/v1/search-endpoints/{pk}/runs/",
        {"campaign": world.campaign.pk, "k": 1001},
        format="json",
    )
    assert too_deep.status_code == 400
    with run_jobs():
        started = client.post(
            f"/api/v1/search-endpoints/{pk}/runs/",
            {"campaign": world.campaign.pk, "k": 5},
            format="json",
        )
    assert started.status_code in (200, 202), started.content
    run = Run.objects.get(search__endpoint_id=pk)
    shown = client.get(f"/api/v1/runs/{run.pk}/").json()["search"]
    assert shown["failed_count"] == 0 and shown["query_count"] == 2
    assert "sk-never-shown" not in client.get(f"/api/v1/search-endpoints/{pk}/").content.decode()


def test_the_command_adds_tests_and_runs(engine, world):
    out = io.StringIO()
    call_command(
        "search_endpoint",
        "add",
        "es-cli",
        "--kind",
        "elasticsearch",
        "--url",
        engine.url,
        "--retries",
        "0",
        stdout=out,
    )
    call_command("search_endpoint", "test", "es-cli", "heat pumps", stdout=out)
    assert "d1" in out.getvalue()
    engine.plan("sourdough", Status(500))
    err = io.StringIO()
    call_command(
        "search_endpoint",
        "run",
        "es-cli",
        "--campaign",
        str(world.campaign.pk),
        "--k",
        "5",
        "--user",
        world.users["lead"].username,
        stdout=out,
        stderr=err,
    )
    assert "1 failed" in out.getvalue() and "failed: 2:" in err.getvalue()
    with pytest.raises(CommandError, match="k must be"):
        call_command(
            "search_endpoint",
            "run",
            "es-cli",
            "--qrels",
            str(world.qrels.pk),
            "--k",
            "5000",
            "--user",
            world.users["lead"].username,
            stdout=out,
        )


def test_a_qrels_query_set_without_any_readable_text_is_refused_before_a_job(engine, world):
    """A qrels version's query texts come from the campaigns the user leads: an engineer who
    leads none would get a job whose every query fails; they are told why instead."""
    from jobs.models import Job

    jobs = Job.objects.count()
    with pytest.raises(ValidationError, match="has a query text you may read"):
        runs_service.make_search_run(
            endpoint=make_endpoint(engine), user=world.users["engineer"], k=3, qrels=world.qrels.pk
        )
    assert Job.objects.count() == jobs and not SearchRun.objects.exists()


def test_a_run_with_failures_says_so_on_its_pages(engine, world, client):
    engine.plan("sourdough", Status(500))
    made = runs_service.make_search_run(
        endpoint=make_endpoint(engine), user=world.users["lead"], k=3, campaign=world.campaign.pk
    )
    client.force_login(world.users["engineer"])
    for url in (made.run.get_absolute_url(), "/evaluation/runs/", "/"):
        page = client.get(url).content.decode()
        assert "1 of 2 queries failed" in page, url


def test_a_live_runs_unjudged_documents_go_to_judging_with_the_engines_texts(engine, world, client):
    """Item 4: a document the campaign lacks is added with the title and text the mapping
    read, so it can be judged at once; a text the campaign holds is kept."""
    campaign = world.campaign
    campaign.topics.create(qid="3", query="heat pumps")
    made = runs_service.make_search_run(
        endpoint=make_endpoint(engine), user=world.users["lead"], k=5, campaign=campaign.pk
    )
    client.force_login(world.users["lead"])
    response = client.post(
        "/evaluation/unjudged/send/",
        {"run": made.run.pk, "qrels": world.qrels.pk, "k": 5, "campaign": campaign.pk},
    )
    assert response.status_code == 302
    added = campaign.documents.get(docno="d5")
    assert (added.title, added.text) == (
        "Air source",
        "Air source heat pumps work in cold weather too.",
    )
    assert campaign.documents.get(docno="d1").text == "First."  # the campaign's own text
    assert campaign.pairs.filter(topic__qid="3", document__docno="d5").exists()


def test_an_uploaded_runs_documents_are_sent_without_texts(world):
    sent = services.send_unjudged_to_judging(
        campaign=world.campaign, pairs=[("1", "d9")], runs=[world.run]
    )
    assert sent.added == 1
    document = world.campaign.documents.get(docno="d9")
    assert (document.title, document.text) == ("", "")


def test_a_job_started_again_after_its_run_was_stored_stores_nothing_twice(engine, world, run_jobs):
    from evaluation.tasks import start_search_run
    from jobs.models import Job, JobStatus
    from jobs.services import retry_job

    endpoint = make_endpoint(engine)
    with run_jobs():
        job = start_search_run(
            endpoint=endpoint, user=world.users["lead"], k=3, campaign=world.campaign.pk
        )
    job.refresh_from_db()
    first = job.result["run"]
    # The worker died after the run's commit, before the job's end was recorded.
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED, retryable=True, result={})
    job.refresh_from_db()
    with run_jobs():
        retry_job(job=job)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.attempt == 2
    assert job.result["run"] == first
    assert SearchRun.objects.count() == 1 and Run.objects.filter(search__isnull=False).count() == 1


def test_a_change_to_the_request_is_a_new_version_and_a_change_of_pace_is_not(engine, api, world):
    client = api(world.users["engineer"])
    endpoint = make_endpoint(engine)
    url = f"/api/v1/search-endpoints/{endpoint.pk}/"
    assert client.patch(url, {"timeout": 5}, format="json").json()["version"] == 1
    changed = client.patch(
        url,
        {"template": '{"query": {"match": {"text": "{{query}}"}}, "size": {{k}}}'},
        format="json",
    )
    assert changed.json()["version"] == 2
    refused = client.patch(url, {"template": '{"q": "{{settings.SECRET_KEY}}"}'}, format="json")
    assert refused.status_code == 400 and "is not a placeholder" in refused.content.decode()
