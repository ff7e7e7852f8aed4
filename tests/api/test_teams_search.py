"""Teams and what landed beside them (issue 32, part 2): a search endpoint's sandbox trials and
its schedules (with their firings and alerts) follow the endpoint's team; the runs an
endpoint makes land in its team, so whoever makes them (a person, a schedule's owner, a
command's --user) must be a lead or engineer there. The world (tests/api/conftest.py) is in
the default team; "Web search" has a lead, an engineer and a judge of its own."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from accounts.models import Membership
from evaluation.models import FiringStatus, ScheduleFiring, SearchEndpoint
from evaluation.services import endpoint_runs, sandbox, schedule_runs
from evaluation.services import schedules as schedule_service
from evaluation.services import search as search_service
from evaluation.services.search import MESSAGES as SEARCH_MESSAGES

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


def ids(answer) -> list[int]:
    assert answer.status_code == 200, answer.content
    return [row["id"] for row in answer.json()["results"]]


def test_another_teams_readers_list_none_of_the_worlds_trials_schedules_or_alerts(api, world):
    endpoint = world.ids["search_endpoint"]
    for role in ("other_team_lead", "other_team_engineer"):
        client = api(world.users[role])
        assert ids(client.get("/api/v1/schedules/")) == []
        assert ids(client.get("/api/v1/schedule-alerts/")) == []
        assert client.get(f"/api/v1/search-endpoints/{endpoint}/trials/").status_code == 404
    lea = api(world.users["lead"])
    assert ids(lea.get("/api/v1/schedules/")) == [world.schedule.pk]
    assert ids(lea.get("/api/v1/schedule-alerts/")) == [world.schedule_alert.pk]


def test_a_schedule_and_a_trial_go_with_their_owner_leaving_the_team(api, world):
    lea = world.users["lead"]
    assert sandbox.visible_trials(lea).count() == 1
    lea.groups.clear()  # no longer a lead of the default team
    Membership.objects.create(team=world.other_team, user=lea, role="lead")
    lea = type(lea).objects.get(pk=lea.pk)
    assert not schedule_service.visible_schedules(lea).exists()
    assert not schedule_service.open_alerts(lea).exists()
    assert not sandbox.visible_trials(lea).exists()
    assert api(lea).get(f"/api/v1/schedules/{world.schedule.pk}/").status_code == 404


def test_a_schedule_whose_owner_left_the_team_fails_its_firing_and_says_why(world, run_jobs):
    schedule = world.schedule
    world.users["lead"].groups.clear()
    with run_jobs():
        tick = schedule_runs.tick(now=schedule.next_run_at + timedelta(minutes=1))
    firing = ScheduleFiring.objects.get(pk=tick.fired[0].pk)
    assert firing.status == FiringStatus.FAILED
    assert firing.message == SEARCH_MESSAGES["not_in_team"].format(
        user="lea", team=world.search_endpoint.team, endpoint="world-search"
    )
    assert firing.run is None


def test_an_endpoint_makes_no_run_for_a_user_outside_its_team(world):
    olga = world.users["other_team_lead"]
    for make in (
        lambda: endpoint_runs.make_search_run(
            endpoint=world.search_endpoint, user=olga, k=10, qrels=world.qrels.pk
        ),
        lambda: sandbox.plan_trial(
            endpoint=world.search_endpoint, user=olga, versions=[1], query_qrels=world.qrels.pk
        ),
    ):
        with pytest.raises(ValidationError) as refused:
            make()
        assert refused.value.code == "not_in_team"


def test_scheduling_another_teams_endpoint_is_refused_as_unknown(api, world):
    olga = api(world.users["other_team_lead"])
    asked = olga.post(
        "/api/v1/schedules/",
        {
            "name": "theirs",
            "endpoint": world.ids["search_endpoint"],
            "campaign": world.ids["campaign"],
            "qrels": world.ids["qrels"],
            "k": 10,
            "cron": "0 3 * * *",
        },
        format="json",
    )
    assert asked.status_code == 400
    assert schedule_service.MESSAGES["no_endpoint"] in str(asked.json())


def test_the_schedule_form_offers_the_endpoints_of_the_users_teams_only(client, world):
    mine = search_service.create_search_endpoint(
        name="web-es",
        kind="elasticsearch",
        url="https://web.example.invalid/_search",
        team=world.other_team,
    )
    client.force_login(world.users["other_team_lead"])
    page = client.get("/evaluation/schedules/").content.decode()
    assert f'value="{mine.pk}"' in page and "web-es" in page
    assert "world-search" not in page and "world-nightly" not in page
    client.force_login(world.users["other_team_engineer"])
    sandbox_page = client.get(f"/evaluation/search/{world.search_endpoint.pk}/sandbox/")
    assert sandbox_page.status_code == 404


def test_the_endpoint_command_names_endpoints_within_a_team(world, capsys):
    url = "https://es.example.invalid/docs/_search"
    call_command(
        "search_endpoint",
        "add",
        "world-search",
        "--team",
        "web-search",
        "--kind",
        "elasticsearch",
        "--url",
        url,
    )
    assert SearchEndpoint.objects.filter(name="world-search").count() == 2
    theirs = SearchEndpoint.objects.get(name="world-search", team=world.other_team)
    call_command("search_endpoint", "versions", "world-search", "--team", "web-search")
    assert "v1" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no team 'ads'"):
        call_command("search_endpoint", "versions", "world-search", "--team", "ads")
    # The world's lead runs the default team's endpoint; another team's is not theirs to run.
    with pytest.raises(CommandError, match="is not a lead or engineer of the team"):
        call_command(
            "search_endpoint",
            "run",
            "world-search",
            "--team",
            "web-search",
            "--qrels",
            str(world.qrels.pk),
            "--user",
            "lea",
        )
    call_command("search_endpoint", "list")
    listed = capsys.readouterr().out
    assert f"world-search\tweb-search\t{theirs.kind}" in listed
    assert "world-search\tdefault\t" in listed


def test_the_schedule_command_finds_the_endpoint_among_the_owners_teams(world):
    Membership.objects.create(team=world.other_team, user=world.users["lead"], role="lead")
    search_service.create_search_endpoint(
        name="world-search",
        kind="elasticsearch",
        url="https://web.example.invalid/_search",
        team=world.other_team,
    )
    args = ["search_schedule", "add", "again", "--endpoint", "world-search", "--cron", "0 4 * * *"]
    args += ["--qrels", str(world.qrels.pk), "--campaign", str(world.campaign.pk)]
    with pytest.raises(CommandError, match=r"several of lea's teams .*: default, web-search"):
        call_command(*args, "--user", "lea")
    with pytest.raises(CommandError, match="olga has no search endpoint named 'world-search'"):
        Membership.objects.filter(team=world.other_team, user=world.users["lead"]).delete()
        SearchEndpoint.objects.filter(team=world.other_team).delete()
        call_command(*args, "--user", "olga")
    call_command(*args, "--user", "lea")
    made = schedule_service.visible_schedules(world.users["lead"]).get(name="again")
    assert made.endpoint == world.search_endpoint
