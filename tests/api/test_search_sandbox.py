"""The query sandbox (issue 31, item 3): an edit of an endpoint's template tried on a query
set against the saved version, scored with any measure, per-query deltas, the trial's runs
hidden from the leaderboard and lists, saved as the next version; versions kept and
compared. Against the loopback Elasticsearch (tests/search_servers.py), through the
service, the API and the command line."""

from __future__ import annotations

import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from evaluation import dashboards
from evaluation.models import Run, SearchEndpointVersion, SearchRun, SearchTrial
from evaluation.search import sandbox as arithmetic
from evaluation.services import sandbox
from evaluation.services import search as service
from tests.search_servers import EngineServer, Status

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


# The loopback engine ranks by term overlap: adding "heat storm" to every query brings d1
# (topic 1's relevant document) and d4 (topic 2's best) into the lists.
BETTER = (
    '{"query": {"multi_match": {"query": "{{query}} heat storm", "fields": ["title", "text"]}},'
    ' "size": {{k}}}'
)


@pytest.fixture
def engine(outbound_allows_loopback, settings):
    settings.SEARCH_BACKOFF_SECONDS = 0.0
    with EngineServer("elasticsearch") as server:
        yield server


@pytest.fixture
def endpoint(engine, world):
    return service.create_search_endpoint(
        name="es",
        kind="elasticsearch",
        url=engine.url,
        max_retries=0,
        created_by=world.users["lead"],
    )


def trial_of(endpoint, world, **changes):
    asked = {"template": BETTER, "campaign": world.campaign.pk, "qrels": world.qrels.pk, "k": 10}
    asked.update(changes)
    plan = sandbox.plan_trial(endpoint=endpoint, user=world.users["lead"], **asked)
    plan.pop("endpoint")
    return sandbox.run_trial(endpoint=endpoint, user=world.users["lead"], **plan)


def test_an_edit_is_scored_against_the_saved_version_query_by_query(endpoint, world):
    trial = trial_of(endpoint, world)
    name, table = sandbox.table(trial)
    assert name == "ndcg_cut_10" and [arm["label"] for arm in trial.arms] == ["v1 (saved)", "edit"]
    # Saved: topic 1 finds d3 (unjudged there), topic 2 finds d2 (unjudged): both 0.
    assert [row.qid for row in table.rows] == ["1", "2"]
    assert table.means[0] == 0.0 and table.means[1] > 0.3
    assert all(row.deltas[1] > 0 for row in table.rows)
    assert table.counts() == {"better": 2, "worse": 0, "same": 0}
    # Each arm is a run through the upload's path, hidden from lists and the leaderboard.
    runs = Run.objects.filter(pk__in=[arm["run"] for arm in trial.arms])
    assert runs.count() == 2 and all(run.search.trial for run in runs)
    assert not Run.objects.listed().filter(pk__in=[r.pk for r in runs]).exists()
    assert "edit" in runs.get(search__snapshot__trial="edit").search.snapshot["trial"]
    scoring = dashboards.make_scoring(qrels=world.qrels, measure_specs=["nDCG@10"], complete=True)
    board = dashboards.build_leaderboard(scoring)
    assert [row.run for row in board.rows] == [] and board.unscored == Run.objects.listed().count()


def test_a_failed_query_counts_zero_and_is_marked(endpoint, world, engine):
    engine.plan("sourdough", Status(500))  # the saved version's topic 2 fails
    trial = trial_of(endpoint, world)
    _, table = sandbox.table(trial)
    row = next(row for row in table.rows if row.qid == "2")
    assert row.failed == [True, False] and row.values[0] == 0.0
    assert trial.arms[0]["failed_count"] == 1


def test_any_measure_the_product_knows_in_either_dialect(endpoint, world):
    trial = trial_of(endpoint, world, measure="P.5,10")
    assert trial.result["measures"] == ["P_5", "P_10"]
    name, _ = sandbox.table(trial, "P_10")
    assert name == "P_10"
    with pytest.raises(ValidationError, match="measure cannot be used"):
        trial_of(endpoint, world, measure="nDCG@ten")


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"template": '{"query": {{nope}}}'}, "not a field a template can use"),
        ({"template": '{"size": {{k}}'}, "not JSON"),
        ({"template": "{" + " " * 20_001 + "}"}, "at most 20,000 characters"),
        ({"k": 1001}, "k must be a whole number from 1 to 1000"),
        ({"template": "", "versions": [1]}, "Compare at least two things"),
        ({"versions": [7]}, "has no version 7"),
        ({"measure": "map", "qrels": None}, "Choose the qrels version"),
    ],
)
def test_unfit_trials_are_refused_with_the_reason(endpoint, world, changes, words):
    with pytest.raises(ValidationError, match=words):
        trial_of(endpoint, world, **changes)


def test_an_unchanged_edit_is_refused(endpoint, world):
    with pytest.raises(ValidationError, match="change something"):
        trial_of(endpoint, world, template=endpoint.template)


def test_another_leads_campaign_and_unreadable_qrels_are_not_found(endpoint, world):
    with pytest.raises(ValidationError) as refused:
        sandbox.plan_trial(
            endpoint=endpoint,
            user=world.users["other_lead"],
            template=BETTER,
            campaign=world.campaign.pk,
            qrels=world.qrels.pk,
        )
    assert refused.value.code == "no_campaign"
    with pytest.raises(ValidationError) as refused:
        sandbox.plan_trial(
            endpoint=endpoint,
            user=world.users["lead"],
            template=BETTER,
            campaign=world.campaign.pk,
            qrels=10**17,
        )
    assert refused.value.code == "no_qrels"


def test_saving_makes_the_next_version_kept_with_who_and_when(endpoint, world):
    trial = trial_of(endpoint, world)
    saved = sandbox.save_trial(trial=trial, user=world.users["engineer"], note="heat storm")
    assert saved.version == 2 and saved.template == BETTER and trial.saved_as == 2
    kept = list(SearchEndpointVersion.objects.filter(endpoint=endpoint).order_by("number"))
    assert [v.number for v in kept] == [1, 2]
    assert (
        kept[0].created_by == world.users["lead"] and kept[1].created_by == world.users["engineer"]
    )
    assert kept[1].note == "heat storm" and kept[0].template != kept[1].template
    with pytest.raises(ValidationError, match="saved already, as version 2"):
        sandbox.save_trial(trial=trial, user=world.users["lead"])
    # Versions are compared on the same query set and qrels: v1 against v2.
    endpoint.refresh_from_db()
    compared = trial_of(endpoint, world, template="", versions=[1, 2])
    assert [arm["label"] for arm in compared.arms] == ["v1", "v2 (saved)"]
    _, table = sandbox.table(compared)
    assert table.means[1] > table.means[0]
    lines = arithmetic.text_diff(kept[0].template, kept[1].template, old_label="v1", new_label="v2")
    assert any(line.kind == "add" and "heat storm" in line.text for line in lines)


def test_a_trial_older_than_the_endpoint_cannot_be_saved(endpoint, world):
    trial = trial_of(endpoint, world)
    service.update_search_endpoint(endpoint=endpoint, mapping={**endpoint.mapping, "title": ""})
    with pytest.raises(ValidationError, match="is at version 2 now"):
        sandbox.save_trial(trial=trial, user=world.users["lead"])


def test_old_trials_and_their_runs_are_pruned(endpoint, world):
    first = trial_of(endpoint, world)
    runs = [arm["run"] for arm in first.arms]
    trial_of(endpoint, world)
    assert sandbox.prune_trials(endpoint, keep=1) == 1
    assert not SearchTrial.objects.filter(pk=first.pk).exists()
    assert not Run.objects.filter(pk__in=runs).exists()


def test_the_api_runs_a_trial_as_a_job_and_saves_it(endpoint, world, api, run_jobs, engine):
    client = api(world.users["lead"])
    base = f"/api/v1/search-endpoints/{endpoint.pk}"
    with run_jobs():
        started = client.post(
            f"{base}/trials/",
            {"template": BETTER, "campaign": world.campaign.pk, "qrels": world.qrels.pk, "k": 10},
            format="json",
        )
    assert started.status_code in (200, 202), started.content
    trial = SearchTrial.objects.get(endpoint=endpoint)
    shown = client.get(f"{base}/trials/{trial.pk}/").json()
    assert shown["measure"] == "ndcg_cut_10" and shown["measure_shown"] == "nDCG@10"
    assert shown["arms"][1]["mean_delta"] > 0 and shown["counts"]["better"] == 2
    assert [q["qid"] for q in shown["queries"]] == ["1", "2"]
    # Every request went through the engine (and so through the outbound client).
    assert len(engine.requests) == 4
    # Another lead's view of it: not found; the endpoint itself they share.
    other = api(world.users["other_lead"])
    assert other.get(f"{base}/trials/{trial.pk}/").status_code == 404
    assert other.post(f"{base}/trials/{trial.pk}/save/", {}, format="json").status_code == 404
    assert client.get(f"{base}/trials/99999999999999999999/").status_code == 404
    saved = client.post(f"{base}/trials/{trial.pk}/save/", {"note": "more"}, format="json")
    assert saved.status_code == 200 and saved.json()["version"] == 2
    versions = client.get(f"{base}/versions/").json()["results"]  # paged, as every list
    assert [v["number"] for v in versions] == [2, 1] and versions[0]["created_by"] == "lea"
    diff = client.get(f"{base}/versions/diff/?a=1&b=2").json()
    assert any(line["kind"] == "add" for line in diff["template"])
    assert client.get(f"{base}/versions/diff/?a=1&b=9").status_code == 404


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"template": '{"q": {{query}'}, 400, "template is not JSON"),
        ({"template": "{" + " " * 30_000 + "}"}, 400, "no more than 20000"),
        ({"k": 5000}, 400, "less than or equal to 1000"),
        ({"measure": "bogus@1"}, 400, "measure cannot be used"),
        ({"campaign": 10**6}, 404, "No campaign you lead"),
        ({"qrels": 10**6}, 404, "No qrels version you may read"),
    ],
)
def test_the_api_refuses_hostile_trials_clearly(endpoint, world, api, body, code, words):
    asked = {"template": BETTER, "campaign": world.campaign.pk, "qrels": world.qrels.pk, **body}
    answer = api(world.users["lead"]).post(
        f"/api/v1/search-endpoints/{endpoint.pk}/trials/", asked, format="json"
    )
    assert answer.status_code == code and words in answer.content.decode(), answer.content


def test_another_leads_campaign_is_not_found_over_the_api(endpoint, world, api):
    answer = api(world.users["other_lead"]).post(
        f"/api/v1/search-endpoints/{endpoint.pk}/trials/",
        {"template": BETTER, "campaign": world.campaign.pk, "qrels": world.qrels.pk},
        format="json",
    )
    assert answer.status_code == 404


def test_the_command_line_tries_lists_diffs_and_saves(endpoint, world, tmp_path):
    path = tmp_path / "better.json"
    path.write_text(BETTER)
    out = io.StringIO()
    call_command(
        "search_endpoint",
        "try",
        "es",
        "--template",
        str(path),
        "--campaign",
        str(world.campaign.pk),
        "--qrels",
        str(world.qrels.pk),
        "--k",
        "10",
        "--user",
        "lea",
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    assert "nDCG@10" in text and "edit" in text and "+0." in text
    trial = SearchTrial.objects.get(endpoint=endpoint)
    out = io.StringIO()
    call_command("search_endpoint", "save", "es", str(trial.pk), "--user", "lea", stdout=out)
    assert "version 2" in out.getvalue()
    out = io.StringIO()
    call_command("search_endpoint", "versions", "es", stdout=out)
    assert out.getvalue().splitlines()[0].startswith("v2")
    out = io.StringIO()
    call_command("search_endpoint", "version-diff", "es", "1", "2", stdout=out)
    assert "+" in out.getvalue() and "heat storm" in out.getvalue()
    with pytest.raises(CommandError, match="from 1 to 1000"):
        call_command(
            "search_endpoint",
            "try",
            "es",
            "--versions",
            "1",
            "2",
            "--campaign",
            str(world.campaign.pk),
            "--qrels",
            str(world.qrels.pk),
            "--k",
            "5000",
            "--user",
            "lea",
        )
    with pytest.raises(CommandError, match="No campaign you lead"):
        call_command(
            "search_endpoint",
            "try",
            "es",
            "--versions",
            "1",
            "2",
            "--campaign",
            str(world.campaign.pk),
            "--qrels",
            str(world.qrels.pk),
            "--user",
            "leo",
        )
    assert json.loads(json.dumps(trial.result))  # plain JSON
    assert SearchRun.objects.filter(trial=True).count() == 2
