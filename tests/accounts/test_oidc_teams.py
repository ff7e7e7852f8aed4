"""Single sign-on and teams (issue 32, part 2): an OIDC_GROUP_ROLES entry may name a team,
``group:role@team``; the grant then makes the user a member of that team with that role,
re-synced at every login like the roles of the default team. Against the real provider on
loopback (tests/oidc_server.py), as tests/accounts/test_oidc_sign_in.py."""

import pytest
from django.contrib.auth.models import Group

from accounts.models import Membership, Team
from accounts.oidc.mapping import Grant, parse_group_roles
from accounts.services.roles import Role, roles_of
from accounts.services.teams import team_roles
from annotation import services as annotation
from tests.accounts.test_oidc_sign_in import sign_in, signed_in_user

pytestmark = pytest.mark.django_db

ROLES = ["judge", "lead", "engineer"]


def test_an_entry_may_name_the_team_of_its_role():
    mapping = parse_group_roles(
        ["search-eng:engineer@web-search", "search-eng:judge", "/org/ads:lead@ads_2"], roles=ROLES
    )
    assert mapping == {
        "search-eng": (Grant("engineer", "web-search"), Grant("judge")),
        "/org/ads": (Grant("lead", "ads_2"),),
    }


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("eng:engineer@", "is not group:role or group:role@team"),
        ("eng:engineer@Web Search", "names the team 'Web Search'; a team is named by its slug"),
        ("eng:boss@web", "names the role 'boss'"),
    ],
)
def test_a_bad_team_in_an_entry_is_named(entry, words):
    with pytest.raises(ValueError, match=words):
        parse_group_roles([entry], roles=ROLES)


def test_a_group_of_a_team_makes_the_user_a_member_of_it_and_nothing_more(sso, django_user_model):
    lea = django_user_model.objects.create_user("lea")
    lea.groups.add(Group.objects.get(name="lead"))
    default_campaign = annotation.create_campaign(lead=lea, name="Default team's")
    login = sso.add_user(groups=["web-leads"])

    client, answer = sign_in(sso, login)

    assert answer.status_code == 302
    user = signed_in_user(client)
    web = Team.objects.get(slug="web-search")  # made at the first login naming it
    assert team_roles(user) == {web.pk: frozenset({Role.LEAD})}
    assert roles_of(user) == {Role.LEAD}
    assert not user.groups.exists()  # no role in the default team
    assert client.get(f"/campaigns/{default_campaign.pk}/").status_code == 404
    assert client.get("/campaigns/new/").status_code == 200  # a lead, of their team


def test_team_memberships_follow_the_groups_at_every_login(sso):
    login = sso.add_user(groups=["web-leads", "relevance-judges"])
    client, _ = sign_in(sso, login)
    user = signed_in_user(client)
    web = Team.objects.get(slug="web-search")
    assert team_roles(user)[web.pk] == {Role.LEAD}

    sso.write_user(login, groups=["web-eng"], email=f"{login}@example.com")
    client, _ = sign_in(sso, login)

    user.refresh_from_db()
    assert team_roles(signed_in_user(client)) == {web.pk: frozenset({Role.ENGINEER})}
    assert not user.groups.exists()  # the judge role of the default team went too


def test_memberships_an_admin_made_are_left_alone(sso):
    login = sso.add_user(groups=["web-eng"])
    client, _ = sign_in(sso, login)
    user = signed_in_user(client)
    ads = Team.objects.create(name="Ads", slug="ads")
    Membership.objects.create(team=ads, user=user, role=Role.JUDGE)  # by hand, in the admin

    client, _ = sign_in(sso, login)

    assert team_roles(signed_in_user(client))[ads.pk] == {Role.JUDGE}


def test_losing_every_group_of_a_team_loses_the_membership_and_the_sign_in(sso):
    login = sso.add_user(groups=["web-eng"])
    client, _ = sign_in(sso, login)
    user = signed_in_user(client)
    sso.write_user(login, groups=["marketing"], email=f"{login}@example.com")

    client, answer = sign_in(sso, login)

    assert answer.status_code == 403
    assert not Membership.objects.filter(user=user).exists()
