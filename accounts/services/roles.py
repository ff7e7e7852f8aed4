"""The three roles of DESIGN.md. A user holds them per team (accounts/services/teams.py):
as memberships of a team, and as Django groups, which are their roles in the default team.
Admins are superusers."""

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Subquery

from common.compiled import Statement

DEFAULT_TEAM_SLUG = "default"  # accounts.models.Team.DEFAULT_SLUG


class Role(models.TextChoices):
    JUDGE = "judge", "Judge"
    LEAD = "lead", "Lead"
    ENGINEER = "engineer", "Engineer"


def roles_of(user) -> set[str]:
    """The role names a user holds in any team (accounts/services/teams.py): their groups
    (their roles in the default team) and their memberships' roles; a superuser holds every
    role. What kind of user they are; which objects they reach is the team axis's answer."""
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(Role.values)
    return {role for _, role in role_rows(user)}


def role_rows(user) -> list[tuple[int | None, str]]:
    """(team pk, role) for every role ``user`` holds: their memberships, and their groups as
    roles in the default team (None when there is no default team yet). One query, cached on
    the user object: every page asks (the navigation, the access rules). The query is
    compiled once and, on PostgreSQL, prepared (common.compiled): the ORM built its joins and
    subquery again on every request, about a fifth of a plain 404 page's CPU (issue 35)."""
    cached = getattr(user, "_role_rows", None)
    if cached is None:
        found = set()
        rows = _ROLE_ROWS.rows(user.pk) if user.pk is not None else []  # unsaved: no roles
        for default_team, team, role, group in rows:
            if team is not None:
                found.add((team, role))
            if group in Role.values:
                found.add((default_team, group))
        cached = sorted(found, key=lambda row: (row[0] or 0, row[1]))
        user._role_rows = cached
    return cached


def _role_rows_of(pk):
    # By name: accounts.models imports this module for Role.
    Team = apps.get_model("accounts", "Team")
    default = Team.objects.filter(slug=DEFAULT_TEAM_SLUG).order_by().values("pk")[:1]
    # One row per (membership, group) pair of the user (both joined outer): a few rows.
    return (
        get_user_model()
        .objects.filter(pk=pk)
        .annotate(default_team=Subquery(default))
        .values_list("default_team", "memberships__team_id", "memberships__role", "groups__name")
    )


_ROLE_ROWS = Statement("accounts.role_rows", _role_rows_of, 1)


def has_role(user, role: Role) -> bool:
    return role in roles_of(user)


def set_roles(user, roles: set[str]) -> None:
    """Make ``roles`` exactly the role groups ``user`` holds, their roles in the default team
    (other groups are left alone): single sign-on re-syncs them from the provider's groups
    at each login."""
    wanted = set(roles) & set(Role.values)
    held = set(user.groups.filter(name__in=Role.values).values_list("name", flat=True))
    if wanted - held:
        user.groups.add(*Group.objects.filter(name__in=wanted - held))
    if held - wanted:
        user.groups.remove(*Group.objects.filter(name__in=held - wanted))
    user.__dict__.pop("_role_rows", None)  # role_rows' cache
