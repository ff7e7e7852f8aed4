"""Teams through the API (issue 32, parts 2 and 3): what a user makes goes to a team of
theirs, another team's things are 404s, a qrels version is shared read-only, and service
tokens of a team read, or read and upload runs, and nothing else. The world
(tests/api/conftest.py) is in the default team; "Web search" has a lead, an engineer and a
judge of its own."""

import pytest
from rest_framework.test import APIClient

from accounts.models import Membership, ServiceScope, ServiceToken, Team
from accounts.services import service_tokens
from accounts.services.teams import MESSAGES as TEAM_MESSAGES
from accounts.services.tokens import create_token
from evaluation import services
from evaluation.models import Run, System
from tests.api.conftest import OTHER_RUN, QRELS, RUN, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


def bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


# --- what belongs to a team ------------------------------------------------------------------


def test_what_a_user_makes_goes_to_their_only_team(api, world):
    olga = api(world.users["other_team_lead"])
    made = olga.post("/api/v1/campaigns/", {"name": "Web relevance"}, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["team"] == "web-search"
    qrels = olga.post(
        "/api/v1/qrels/", {"file": upload("w.qrels", QRELS), "name": "web"}, format="multipart"
    )
    assert qrels.status_code == 201, qrels.content
    assert qrels.json()["team"] == "web-search"
    system = api(world.users["other_team_engineer"]).post(
        "/api/v1/systems/", {"name": "bm25"}, format="json"
    )
    # The world has a system named bm25 too: names are unique within a team only.
    assert system.status_code == 201, system.content
    assert system.json()["team"] == "web-search"


def test_a_user_of_several_teams_names_one_and_only_one_of_theirs(api, world):
    lea = world.users["lead"]  # a lead of the default team (a group)
    Membership.objects.create(team=world.other_team, user=lea, role="lead")
    client = api(lea)
    asked = client.post("/api/v1/campaigns/", {"name": "Which team?"}, format="json")
    assert asked.status_code == 400
    assert asked.json()["team"] == [
        TEAM_MESSAGES["pick"].format(roles="lead", teams="default, web-search")
    ]
    made = client.post("/api/v1/campaigns/", {"name": "Web", "team": "web-search"}, format="json")
    assert made.status_code == 201 and made.json()["team"] == "web-search"
    elsewhere = Team.objects.create(name="Ads", slug="ads")
    refused = client.post("/api/v1/campaigns/", {"name": "Ads", "team": "ads"}, format="json")
    assert refused.status_code == 400
    # A team they are not in is unknown, whether it exists or not.
    assert refused.json()["team"] == [TEAM_MESSAGES["unknown"].format(team="ads", roles="lead")]
    assert not elsewhere.memberships.exists()


def test_a_run_uploaded_by_another_team_makes_its_own_system_of_the_same_name(api, world, run_jobs):
    otto = api(world.users["other_team_engineer"])
    with run_jobs():
        answer = otto.post(
            "/api/v1/runs/",
            {"file": upload("dense.run", OTHER_RUN), "system": "bm25"},
            format="multipart",
        )
    assert answer.status_code in (200, 202), answer.content
    theirs = System.objects.get(name="bm25", team=world.other_team)
    assert theirs.pk != world.system.pk
    assert list(theirs.runs.values_list("name", flat=True)) == ["dense"]
    # ...and the world's engineer does not see it, nor they the world's.
    assert api(world.users["engineer"]).get(f"/api/v1/systems/{theirs.pk}/").status_code == 404
    listed = otto.get("/api/v1/runs/").json()["results"]
    assert [run["system"] for run in listed] == [theirs.pk]


def test_the_same_run_file_in_another_team_is_refused_without_naming_the_run(api, world):
    answer = api(world.users["other_team_engineer"]).post(
        "/api/v1/runs/", {"file": upload("bm25.run", RUN), "system": "mine"}, format="multipart"
    )
    assert answer.status_code == 400
    assert "bm25" not in answer.content.decode()
    assert answer.json()["file"] == [
        "This run file is stored already, in a team you are not in: the same file cannot be "
        "stored twice."
    ]


def test_a_campaign_takes_judges_of_its_team_only(api, world):
    olga = api(world.users["other_team_lead"])
    ann = world.users["judge"]  # a judge of the default team
    made = olga.post("/api/v1/campaigns/", {"name": "Web", "judges": [ann.pk]}, format="json")
    assert made.status_code == 400
    assert made.json()["judges"] == ["Not a judge of the team Web search: ann."]
    oona = world.users["other_team_judge"]
    made = olga.post("/api/v1/campaigns/", {"name": "Web", "judges": [oona.pk]}, format="json")
    assert made.status_code == 201, made.content
    added = olga.post(
        f"/api/v1/campaigns/{made.json()['id']}/judges/", {"judge": ann.pk}, format="json"
    )
    assert added.status_code == 400


def test_the_dashboards_show_a_teams_runs_alone_on_a_shared_version(api, world):
    """Another team scores its run against the world's qrels once shared: each team's
    leaderboard lists its own run only."""
    world.qrels.shared_with.add(world.other_team)
    theirs = services.import_run(
        source=OTHER_RUN, filename="dense.run", system="dense", team=world.other_team.pk
    )
    services.evaluate_run(run=theirs, qrels=world.qrels, measure_specs=["ndcg_cut.10", "map"])
    query = {"qrels": world.qrels.pk, "measures": ["ndcg_cut.10", "map"]}
    rows = api(world.users["other_team_lead"]).get("/api/v1/leaderboard/", query).json()["rows"]
    assert [row["run"] for row in rows] == [theirs.pk]
    rows = api(world.users["lead"]).get("/api/v1/leaderboard/", query).json()["rows"]
    assert [row["run"] for row in rows] == [world.run.pk]
    rows = api(world.users["admin"]).get("/api/v1/leaderboard/", query).json()["rows"]
    assert sorted(row["run"] for row in rows) == sorted([world.run.pk, theirs.pk])


# --- sharing qrels ---------------------------------------------------------------------------


def test_a_shared_version_is_read_only_for_the_other_team(api, world):
    olga = api(world.users["other_team_lead"])
    url = f"/api/v1/qrels/{world.qrels.pk}/"
    assert olga.get(url).status_code == 404
    shared = api(world.users["lead"]).put(
        url + "sharing/", {"teams": ["web-search"]}, format="json"
    )
    assert shared.status_code == 200, shared.content
    assert shared.json()["shared_with"] == ["web-search"]
    for path in ("", "download/", "download/?binary=1", f"diff/{world.qrels.pk}/"):
        assert olga.get(url + path).status_code == 200, path
    assert olga.get(url).json()["shared_with"] == []  # whom else it is shared with: not theirs
    # Read-only: they may not share it on, and its team's campaigns stay out of reach.
    assert olga.put(url + "sharing/", {"teams": []}, format="json").status_code == 404
    assert olga.get(f"/api/v1/campaigns/{world.campaign.pk}/").status_code == 404
    assert api(world.users["other_team_judge"]).get(url).status_code == 404
    unshared = api(world.users["lead"]).put(url + "sharing/", {"teams": []}, format="json")
    assert unshared.json()["shared_with"] == []
    assert olga.get(url).status_code == 404


def test_sharing_with_a_team_that_does_not_exist_is_refused_by_name(api, world):
    url = f"/api/v1/qrels/{world.qrels.pk}/sharing/"
    answer = api(world.users["lead"]).put(url, {"teams": ["nope"]}, format="json")
    assert answer.status_code == 400
    assert answer.json() == {"teams": ["No team named nope."]}
    answer = api(world.users["lead"]).put(url, {"teams": "web-search"}, format="json")
    assert answer.status_code == 400  # a list, not a string


# --- API tokens --------------------------------------------------------------------------------


def test_a_personal_token_sees_what_its_users_teams_allow(world):
    _, key = create_token(user=world.users["other_team_engineer"], name="ci")
    client = bearer(key)
    assert client.get(f"/api/v1/runs/{world.run.pk}/").status_code == 404
    assert client.get("/api/v1/runs/").json()["count"] == 0
    _, key = create_token(user=world.users["engineer"], name="ci")
    assert bearer(key).get(f"/api/v1/runs/{world.run.pk}/").status_code == 200


def test_a_read_service_token_reads_its_team_and_changes_nothing(world):
    token, key = service_tokens.create_service_token(
        team=world.other_team,
        name="ci gate",
        scope=ServiceScope.READ,
        created_by=world.users["other_team_lead"],
    )
    assert key.startswith("rss_") and token.key_hash != key and key not in token.prefix + "…"
    assert ServiceToken.objects.get(pk=token.pk).key_hash == service_tokens.hash_key(key)
    client = bearer(key)
    assert client.get("/api/v1/runs/").status_code == 200
    assert client.get(f"/api/v1/runs/{world.run.pk}/").status_code == 404  # the world's
    refused = client.post(
        "/api/v1/runs/", {"file": upload("x.run", OTHER_RUN), "system": "x"}, format="multipart"
    )
    assert refused.status_code == 403
    assert refused.json()["detail"] == (
        "This service token may read; POST /api/v1/runs/ is not among that."
    )
    assert client.post("/api/v1/systems/", {"name": "x"}, format="json").status_code == 403
    assert not System.objects.filter(name="x").exists()


def test_an_upload_service_token_uploads_runs_into_its_team(world, run_jobs):
    _, key = service_tokens.create_service_token(
        team=world.other_team,
        name="nightly",
        scope=ServiceScope.UPLOAD_RUNS,
        created_by=world.users["admin"],
    )
    client = bearer(key)
    with run_jobs():
        answer = client.post(
            "/api/v1/runs/",
            {"file": upload("dense.run", OTHER_RUN), "system": "dense"},
            format="multipart",
        )
    assert answer.status_code in (200, 202), answer.content
    run = Run.objects.get(name="dense")
    assert run.system.team == world.other_team
    assert run.uploaded_by.username == "service-web-search-nightly"
    assert client.get(f"/api/v1/runs/{run.pk}/").status_code == 200
    # Uploading is all it may change.
    assert client.delete(f"/api/v1/runs/{run.pk}/").status_code == 403
    assert client.post("/api/v1/systems/", {"name": "y"}, format="json").status_code == 403


def test_only_a_teams_lead_or_an_admin_makes_its_service_tokens(world):
    from django.core.exceptions import ValidationError

    for user in ("other_team_engineer", "lead", "other_team_judge"):
        with pytest.raises(ValidationError) as refused:
            service_tokens.create_service_token(
                team=world.other_team,
                name="x",
                scope=ServiceScope.READ,
                created_by=world.users[user],
            )
        assert refused.value.messages == [service_tokens.MESSAGES["not_lead"]]
    with pytest.raises(ValidationError):
        service_tokens.create_service_token(
            team=world.other_team, name="x", scope="write", created_by=world.users["admin"]
        )


def test_a_revoked_service_token_is_refused_and_its_account_cannot_log_in(client, world):
    token, key = service_tokens.create_service_token(
        team=world.other_team,
        name="ci",
        scope=ServiceScope.READ,
        created_by=world.users["other_team_lead"],
    )
    assert not token.user.has_usable_password()
    assert not client.login(username=token.user.username, password="")
    assert service_tokens.revoke_service_token(token=token, by=world.users["other_team_lead"])
    answer = bearer(key).get("/api/v1/runs/")
    # Refused as a revoked personal token is (403: session authentication comes first).
    assert answer.status_code == 403
    assert answer.json() == {"detail": "Invalid token."}


def test_the_import_commands_put_files_into_the_team_named(world, tmp_path):
    from django.core.management import CommandError, call_command

    run_file, qrels_file = tmp_path / "dense.run", tmp_path / "web.qrels"
    run_file.write_bytes(OTHER_RUN)
    qrels_file.write_bytes(QRELS)
    call_command("import_run", str(run_file), "--system", "dense", "--team", "web-search")
    call_command("import_qrels", str(qrels_file), "--name", "web", "--team", "web-search")
    assert Run.objects.get(name="dense").system.team == world.other_team
    assert world.other_team.pk == services.find_qrels("web").team_id
    with pytest.raises(CommandError, match="--team: no team 'nope'"):
        call_command("import_qrels", str(qrels_file), "--name", "web", "--team", "nope")


def test_create_campaign_takes_the_team_among_the_leads(world):
    from django.core.management import CommandError, call_command

    lea = world.users["lead"]
    Membership.objects.create(team=world.other_team, user=lea, role="lead")
    with pytest.raises(CommandError, match="--team: You are a lead in several teams"):
        call_command("create_campaign", "--name", "Web", "--lead", "lea")
    call_command("create_campaign", "--name", "Web", "--lead", "lea", "--team", "web-search")
    from annotation.models import Campaign

    assert Campaign.objects.get(name="Web").team == world.other_team
    with pytest.raises(CommandError, match="--team: No team “default”"):
        call_command("create_campaign", "--name", "X", "--lead", "olga", "--team", "default")


@pytest.mark.parametrize(
    "team", [["web-search"], "w" * 61, {"slug": "web-search"}, "web-search\x00"]
)
def test_a_team_that_is_no_slug_is_a_clear_400(api, world, team):
    answer = api(world.users["other_team_lead"]).post(
        "/api/v1/campaigns/", {"name": "Odd", "team": team}, format="json"
    )
    assert answer.status_code == 400
    assert list(answer.json()) == ["team"]


def test_publishing_the_grades_another_team_published_names_none_of_theirs(world):
    """Another team's campaign with the very grades of the world's "robust" v1 publishes
    under the same name: the identical version elsewhere is not named (nor refused)."""
    from annotation import services as annotation
    from annotation.models import Assignment, PairSource, Topic
    from annotation.services import adjudication

    olga, oona = world.users["other_team_lead"], world.users["other_team_judge"]
    theirs = annotation.create_campaign(
        lead=olga, name="Copy", judges=[oona], team=world.other_team
    )
    for qid in ("1", "2"):
        Topic.objects.create(campaign=theirs, qid=qid, query=f"topic {qid}")
    graded = [world.assignment, world.other_assignment]
    pairs = [(a.pair.topic.qid, a.pair.document.docno) for a in graded]
    annotation.add_pairs(campaign=theirs, pairs=pairs, source=PairSource.IMPORTED)
    theirs.documents.update(text="A passage to grade.")
    for assignment, original in zip(
        Assignment.objects.filter(judge=oona).order_by("pair__topic__qid", "pair__document__docno"),
        sorted(graded, key=lambda a: (a.pair.topic.qid, a.pair.document.docno)),
        strict=True,
    ):
        annotation.record_judgment(
            assignment_id=assignment.pk, judge=oona, grade=original.judgment.grade
        )
    publication = adjudication.publish(
        campaign=theirs, user=olga, name=world.publication.qrels.name, leave_out_undecided=True
    )
    assert publication.qrels.checksum == world.publication.qrels.checksum
    assert publication.qrels.team == world.other_team


def test_a_service_token_outside_its_scope_with_an_idempotency_key_is_a_403(world):
    _, key = service_tokens.create_service_token(
        team=world.other_team,
        name="ci",
        scope=ServiceScope.READ,
        created_by=world.users["other_team_lead"],
    )
    client = bearer(key)
    answer = client.post(
        "/api/v1/systems/", {"name": "x"}, format="json", HTTP_IDEMPOTENCY_KEY="retry-1"
    )
    assert answer.status_code == 403
    assert "This service token may read" in answer.json()["detail"]
