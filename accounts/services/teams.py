"""Teams: which teams a user belongs to and with which roles, the one home of the team axis
of every access rule (annotation/access.py and evaluation/access.py ask here), and which
team a new thing goes to.

A user's roles in a team are their memberships (accounts.models.Membership) there; the
roles they hold as Django groups (accounts/services/roles.py: local accounts, ``create_user``,
single sign-on grants that name no team) are their roles in the default team, where
everything made before teams existed was put. Superusers are in every team with every role.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from accounts.models import Membership, Team
from accounts.services.roles import Role, role_rows

DEFAULT_NAME = "Default team"

MESSAGES = {
    "no_team": "You are not a {roles} in any team, so you cannot make this.",
    "pick": "You are a {roles} in several teams: say which one ({teams}).",
    "unknown": "No team “{team}” among the teams where you are a {roles}.",
}


def default_team() -> Team:
    """The default team, made if missing (a fresh database makes it in a migration; a test
    that empties the database makes it again here)."""
    team, _ = Team.objects.get_or_create(slug=Team.DEFAULT_SLUG, defaults={"name": DEFAULT_NAME})
    return team


def default_team_pk() -> int:
    """The default of every ``team`` field: what code that names no team makes goes there."""
    return default_team().pk


def team_roles(user) -> dict[int, frozenset[str]]:
    """``team pk -> roles`` of ``user`` (empty for anonymous users)."""
    if user is None or not user.is_authenticated:
        return {}
    found: dict[int, set[str]] = {}
    for team, role in role_rows(user):
        if team is not None:
            found.setdefault(team, set()).add(role)
    return {team: frozenset(roles) for team, roles in found.items()}


def forget_teams(user) -> None:
    """Drop the cached answer after a user's memberships or groups changed."""
    user.__dict__.pop("_role_rows", None)


def team_ids(user, *roles: str) -> set[int]:
    """The teams where ``user`` holds one of ``roles`` (any role when none is named). Not for
    superusers, who are in every team: use :func:`in_teams`."""
    wanted = set(roles)
    return {team for team, held in team_roles(user).items() if not wanted or held & wanted}


def holds(user, team_id: int | None, *roles: str) -> bool:
    """Whether ``user`` holds one of ``roles`` (any, when none) in team ``team_id``."""
    if user is not None and user.is_superuser:
        return True
    held = team_roles(user).get(team_id, frozenset())
    return bool(held and (not roles or held & set(roles)))


def in_teams(queryset, user, *roles: str, field: str = "team"):
    """``queryset`` limited to the rows whose ``field`` (a lookup path to a team) is a team
    where ``user`` holds one of ``roles``; all of it for a superuser. The team axis of every
    access rule is this one filter."""
    if user is not None and user.is_superuser:
        return queryset
    return queryset.filter(**{f"{field}__in": team_ids(user, *roles)})


def teams_of(user, *roles: str):
    """The teams (a queryset, by name) where ``user`` holds one of ``roles``: the choices of
    a page's team picker; every team for a superuser."""
    return in_teams(Team.objects.all(), user, *roles, field="pk")


def choose_team(user, value, *roles: str) -> Team:
    """The team a new thing of ``user`` goes to: ``value`` (a team's id or slug, as a page's
    picker or the API's ``team`` field sends it) among the teams where they hold one of
    ``roles``; with no value, their only such team (a superuser's default: the default team).
    ValidationError says what to do otherwise; a team they are not in is named as unknown,
    whether it exists or not."""
    options = list(teams_of(user, *roles))
    label = " or ".join(sorted(set(roles))) or "member"
    if value in (None, ""):
        if len(options) == 1:
            return options[0]
        if user is not None and user.is_superuser:
            return default_team()
        if not options:
            raise ValidationError(MESSAGES["no_team"].format(roles=label), code="no_team")
        teams = ", ".join(team.slug for team in options)
        raise ValidationError(MESSAGES["pick"].format(roles=label, teams=teams), code="pick")
    text = str(value).strip()
    for team in options:
        if text in (str(team.pk), team.slug):
            return team
    raise ValidationError(
        MESSAGES["unknown"].format(team=text[:60], roles=label), code="unknown_team"
    )


def team_named(slug: str) -> Team:
    """The team whose slug is ``slug`` (the default team for an empty one), for commands run
    by an operator; ValueError names a team that does not exist."""
    if not slug:
        return default_team()
    team = Team.objects.filter(slug=slug).first()
    if team is None:
        known = ", ".join(Team.objects.values_list("slug", flat=True)[:20])
        raise ValueError(f"no team {slug!r} (teams: {known})")
    return team


def set_memberships(user, grants: set[tuple[str, str]], *, from_sso: bool = True) -> set[str]:
    """Make ``grants`` (team slug, role) exactly the memberships single sign-on gave
    ``user`` (rows an admin made are left alone); teams that do not exist are made. Returns
    the roles granted."""
    wanted = {(slug, role) for slug, role in grants if role in Role.values}
    held = {
        (slug, role): pk
        for pk, slug, role in Membership.objects.filter(user=user, from_sso=True).values_list(
            "pk", "team__slug", "role"
        )
    }
    stale = [pk for grant, pk in held.items() if grant not in wanted]
    if stale:
        Membership.objects.filter(pk__in=stale).delete()
    for slug, role in wanted - held.keys():
        team, _ = Team.objects.get_or_create(slug=slug, defaults={"name": slug})
        Membership.objects.get_or_create(
            team=team, user=user, role=role, defaults={"from_sso": from_sso}
        )
    forget_teams(user)
    return {role for _, role in wanted}
