"""Teams on the pages (issue 32, parts 2 and 3): lists show a user's teams' things alone, a
qrels version is shared read-only from its page, a new campaign or system goes to a team
picked from the user's, and the Teams page makes a team's service tokens (the key shown
once). The world is in the default team; "Web search" has users of its own."""

import re

import pytest
from django.test import Client

from accounts.models import Membership, ServiceToken
from accounts.services import service_tokens
from accounts.services.tokens import hash_key
from annotation.models import Campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_copy):
    """build_world()'s world, made once for the module (tests/api/conftest.py)."""
    return world_copy


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_another_teams_lead_finds_none_of_the_worlds_things_listed(world):
    olga = logged_in(world.users["other_team_lead"])
    for url, hidden in (
        ("/campaigns/", world.campaign.name),
        ("/evaluation/qrels/", world.qrels.label),
        ("/evaluation/runs/", world.run.name),
        ("/evaluation/search/", "world-search"),
        ("/", world.run.name),
    ):
        page = olga.get(url)
        assert page.status_code == 200, url
        assert hidden not in page.content.decode(), url
    world_lead = logged_in(world.users["lead"]).get("/evaluation/runs/").content.decode()
    assert world.run.name in world_lead


def test_a_lead_shares_a_version_from_its_page_and_the_other_team_reads_it(world):
    lea, olga = logged_in(world.users["lead"]), logged_in(world.users["other_team_lead"])
    page = f"/evaluation/qrels/{world.qrels.pk}/"
    assert olga.get(page).status_code == 404
    shown = lea.get(page).content.decode()
    assert 'data-testid="qrels-sharing"' in shown and "Web search" in shown

    answer = lea.post(page + "sharing/", {"teams": ["web-search"]})

    assert answer.status_code == 302
    read = olga.get(page)
    assert read.status_code == 200
    text = read.content.decode()
    assert "shared with your team, read-only" in text
    assert 'data-testid="qrels-sharing"' not in text  # theirs to read, not to share
    assert olga.get(page + "download/").status_code == 200
    assert olga.post(page + "sharing/", {"teams": []}).status_code == 404
    # The world's engineer reads it but shares nothing either.
    eng = logged_in(world.users["engineer"]).get(page).content.decode()
    assert 'data-testid="qrels-sharing"' not in eng


def test_a_lead_of_two_teams_picks_the_new_campaigns_team(world):
    lea = world.users["lead"]
    Membership.objects.create(team=world.other_team, user=lea, role="lead")
    client = logged_in(lea)
    form = client.get("/campaigns/new/").content.decode()
    assert 'data-testid="team-picker"' in form and "Web search" in form
    fields = {
        "name": "Web relevance",
        "scale": "0-3",
        "overlap": 1,
        "relevance_threshold": 1,
        "adjudication_rule": "majority",
        "gold_min_accuracy": 0.7,
        **{f"label_{g}": str(g) for g in range(4)},
        **{f"definition_{g}": "d" for g in range(4)},
    }
    refused = client.post("/campaigns/new/", fields)
    assert refused.status_code == 400
    assert "say which one" in refused.content.decode()
    made = client.post("/campaigns/new/", {**fields, "team": "web-search"})
    assert made.status_code == 302
    assert Campaign.objects.get(name="Web relevance").team == world.other_team
    # A lead of one team is asked nothing.
    alone = logged_in(world.users["other_team_lead"]).get("/campaigns/new/").content.decode()
    assert 'data-testid="team-picker"' not in alone


def test_the_upload_page_offers_the_teams_own_systems(world):
    mine = logged_in(world.users["other_team_engineer"]).get("/evaluation/runs/upload/")
    assert mine.status_code == 200
    assert list(mine.context["systems"]) == []
    assert ">bm25</option>" not in mine.content.decode()
    theirs = logged_in(world.users["engineer"]).get("/evaluation/runs/upload/")
    assert list(theirs.context["systems"]) == [world.system]
    assert ">bm25</option>" in theirs.content.decode()


def test_a_lead_makes_a_service_token_on_the_teams_page_and_sees_its_key_once(world):
    olga = logged_in(world.users["other_team_lead"])
    made = olga.post(
        "/accounts/teams/", {"team": "web-search", "name": "nightly", "scope": "upload_runs"}
    )
    assert made.status_code == 201
    key = re.search(r'value="(rss_[^"]+)"', made.content.decode()).group(1)
    token = ServiceToken.objects.get(name="nightly")
    assert token.key_hash == hash_key(key) and token.team == world.other_team
    again = olga.get("/accounts/teams/").content.decode()
    assert key not in again and token.prefix in again
    # Its team's engineer and another team's lead may neither make nor revoke one.
    otto = logged_in(world.users["other_team_engineer"])
    assert otto.post("/accounts/teams/", {"team": "web-search", "name": "x"}).status_code == 404
    assert "Create a service token" not in otto.get("/accounts/teams/").content.decode()
    lea = logged_in(world.users["lead"])
    assert lea.post("/accounts/teams/", {"team": "web-search", "name": "x"}).status_code == 404
    revoke = f"/accounts/teams/tokens/{token.pk}/revoke/"
    assert lea.post(revoke).status_code == 404
    assert olga.post(revoke).status_code == 302
    assert service_tokens.find_active_service_token(key) is None


def test_a_service_token_name_taken_in_the_team_is_said(world):
    olga = logged_in(world.users["other_team_lead"])
    body = {"team": "web-search", "name": "ci", "scope": "read"}
    assert olga.post("/accounts/teams/", body).status_code == 201
    again = olga.post("/accounts/teams/", body)
    assert again.status_code == 400
    assert "The team has a token named “ci” already" in again.content.decode()


def test_the_admin_manages_teams_and_their_members(world):
    admin = logged_in(world.users["admin"])
    service_tokens.create_service_token(
        team=world.other_team, name="ci", scope="read", created_by=world.users["admin"]
    )
    for url in (
        "/admin/accounts/team/",
        "/admin/accounts/team/add/",
        f"/admin/accounts/team/{world.other_team.pk}/change/",
        "/admin/accounts/servicetoken/",
        f"/admin/auth/user/{world.users['other_team_lead'].pk}/change/",
    ):
        assert admin.get(url).status_code == 200, url
    page = admin.get(f"/admin/accounts/team/{world.other_team.pk}/change/").content.decode()
    assert "olga" in page and "otto" in page
