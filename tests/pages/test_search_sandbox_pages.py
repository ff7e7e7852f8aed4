"""The query sandbox's pages: the sandbox form starts a trial (a job), the trial's page shows
the means, per-query deltas, the diff link (which opens) and saves the edit; the versions
page diffs two templates; hostile posts get their reason, never a 500. Against the
loopback Elasticsearch (tests/search_servers.py)."""

from __future__ import annotations

import pytest

from evaluation.models import SearchTrial
from evaluation.services import search as service
from tests.api.test_search_sandbox import BETTER
from tests.search_servers import EngineServer, Status

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


@pytest.fixture
def endpoint(outbound_allows_loopback, settings, world):
    settings.SEARCH_BACKOFF_SECONDS = 0.0
    with EngineServer("elasticsearch") as server:
        yield service.create_search_endpoint(
            name="es", kind="elasticsearch", url=server.url, max_retries=0
        )


def form(world, endpoint, **changes):
    data = {
        "template": BETTER,
        **endpoint.mapping,
        "versions": [endpoint.version],
        "query_set": f"campaign:{world.campaign.pk}",
        "qrels": world.qrels.pk,
        "measure": "nDCG@10",
        "k": 10,
    }
    data.update(changes)
    return data


def test_a_trial_from_the_page_to_a_saved_version(client, world, endpoint, run_jobs):
    client.force_login(world.users["lead"])
    page = client.get(f"/evaluation/search/{endpoint.pk}/sandbox/")
    assert page.status_code == 200 and b"sandbox-form" in page.content
    with run_jobs():
        started = client.post(f"/evaluation/search/{endpoint.pk}/sandbox/", form(world, endpoint))
    assert started.status_code == 302 and "/jobs/" in started.url
    trial = SearchTrial.objects.get(endpoint=endpoint)
    shown = client.get(trial.get_absolute_url())
    text = shown.content.decode()
    assert shown.status_code == 200 and "v1 (saved)" in text and 'data-testid="mean-delta"' in text
    assert "2 better" in text and "heat storm" in text  # the edit's diff against v1
    diff_url = shown.context["links"]["diff"]
    diff = client.get(diff_url)
    assert diff.status_code == 200 and diff.context["view"] is not None, diff_url
    saved = client.post(trial.get_absolute_url() + "save/", {"note": "heat storm"})
    assert saved.status_code == 302 and saved.url == endpoint.get_absolute_url()
    endpoint.refresh_from_db()
    assert endpoint.version == 2 and endpoint.template == BETTER
    again = client.post(trial.get_absolute_url() + "save/", {})
    assert again.status_code == 302 and again.url == trial.get_absolute_url()
    assert "saved already" in client.get(again.url).content.decode()
    versions = client.get(f"/evaluation/search/{endpoint.pk}/versions/?a=1&b=2")
    assert versions.status_code == 200 and "heat storm" in versions.content.decode()
    assert client.get(f"/evaluation/search/{endpoint.pk}/versions/?a=1&b=9").status_code == 400
    # Another lead shares the endpoint but not the trial.
    client.force_login(world.users["other_lead"])
    assert client.get(trial.get_absolute_url()).status_code == 404
    assert client.post(trial.get_absolute_url() + "save/", {}).status_code == 404


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"template": '{"query": {{nope}}}'}, "not a field a template can use"),
        ({"template": "{" + " " * 20_001 + "}"}, "at most 20000 characters"),
        ({"k": 1001}, "less than or equal to 1000"),
        ({"measure": "nDCG@ten"}, "measure cannot be used"),
        ({"template": None, "versions": [1]}, "Compare at least two things"),
    ],
)
def test_hostile_trials_are_refused_on_the_page(client, world, endpoint, changes, words):
    client.force_login(world.users["lead"])
    data = form(world, endpoint, **changes)
    if data["template"] is None:
        data["template"] = endpoint.template
    answer = client.post(f"/evaluation/search/{endpoint.pk}/sandbox/", data)
    assert answer.status_code == 400 and words in answer.content.decode()


def test_another_leads_campaign_is_not_found(client, world, endpoint):
    client.force_login(world.users["other_lead"])
    answer = client.post(f"/evaluation/search/{endpoint.pk}/sandbox/", form(world, endpoint))
    assert answer.status_code == 404


def test_a_huge_body_is_refused_not_a_500(client, world, endpoint):
    client.force_login(world.users["lead"])
    answer = client.post(
        f"/evaluation/search/{endpoint.pk}/sandbox/",
        form(world, endpoint, template="{" + " " * 5_000_000 + "}"),
    )
    assert answer.status_code in (400, 413)


def test_a_run_with_failed_queries_says_so_on_every_page_that_shows_it(
    client, world, outbound_allows_loopback, settings
):
    from evaluation import services
    from evaluation.services import endpoint_runs

    settings.SEARCH_BACKOFF_SECONDS = 0.0
    with EngineServer("elasticsearch") as server:
        server.plan("sourdough", Status(500))
        live = service.create_search_endpoint(
            name="live", kind="elasticsearch", url=server.url, max_retries=0
        )
        made = endpoint_runs.make_search_run(
            endpoint=live, user=world.users["lead"], k=10, campaign=world.campaign.pk
        )
    for run in (world.run, made.run):
        services.score_run(
            run=run, qrels=world.qrels, measure_specs=list(services.DASHBOARD_MEASURES)
        )
    client.force_login(world.users["lead"])
    flag = "⚠ 1 of 2 queries failed"
    q = f"qrels={world.qrels.pk}"
    pages = {
        "diff": f"/evaluation/diff/?{q}&a={world.run.pk}&b={made.run.pk}",
        "compare": f"/evaluation/compare/?{q}&baseline={world.run.pk}&runs={made.run.pk}",
        "topic": f"/evaluation/topics/1/?{q}",
        "leaderboard": f"/evaluation/leaderboard/?{q}",
        "runs": "/evaluation/runs/",
    }
    for name, url in pages.items():
        page = client.get(url)
        assert page.status_code == 200, (name, page.status_code)
        assert flag in page.content.decode(), f"{name} does not flag the failed queries"
