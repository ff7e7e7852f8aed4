"""Which of our roles a provider's groups give (``OIDC_GROUP_ROLES``).

The setting is a list of ``group:role`` entries: ``relevance-leads:lead,
relevance-judges:judge,search-eng:engineer``. A group may give several roles (one entry each)
and several groups the same role. Group names are matched exactly, case and all (Keycloak's
full paths such as ``/relevance-leads`` included), because a provider's groups are
identifiers, not prose.

A grant is a role *in a team*: an entry may name the team after the role,
``search-eng:engineer@web-search`` (the team's slug); one that names none grants the role in
the default team (accounts/services/teams.py: the roles a user holds as groups). Both are
re-synced at each login.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

TEAM_SLUG = re.compile(r"[a-z0-9_-]{1,50}")  # a SlugField of 50, lowercase

MESSAGES = {
    "entry": "OIDC_GROUP_ROLES: {entry!r} is not group:role or group:role@team "
    "(e.g. relevance-leads:lead, search-eng:engineer@web-search)",
    "team": "OIDC_GROUP_ROLES: {entry!r} names the team {team!r}; a team is named by its "
    "slug: lowercase letters, digits, hyphens and underscores",
    "role": "OIDC_GROUP_ROLES: {entry!r} names the role {role!r}; the roles are {roles}",
    "claim": "the {claim!r} claim is neither a list of names nor one name",
}


@dataclass(frozen=True, order=True)
class Grant:
    """A role that a group gives, in the team whose slug is ``team`` (None: the default
    team)."""

    role: str
    team: str | None = None


type GroupRoles = Mapping[str, tuple[Grant, ...]]


def parse_group_roles(entries: Iterable[str], *, roles: Iterable[str] | None = None) -> GroupRoles:
    """``group -> grants`` from the setting's entries; ValueError names the first bad entry.
    ``roles``: the role names there are (None: not checked, for settings, which load before
    the app that defines them)."""
    known = None if roles is None else sorted(roles)
    mapping: dict[str, list[Grant]] = {}
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        group, separator, role = entry.rpartition(":")
        role, at, team = role.partition("@")
        group, role, team = group.strip(), role.strip(), team.strip()
        if not separator or not group or not role or (at and not team):
            raise ValueError(MESSAGES["entry"].format(entry=entry))
        if at and not TEAM_SLUG.fullmatch(team):
            raise ValueError(MESSAGES["team"].format(entry=entry, team=team))
        if known is not None and role not in known:
            raise ValueError(
                MESSAGES["role"].format(entry=entry, role=role, roles=", ".join(known))
            )
        grants = mapping.setdefault(group, [])
        grant = Grant(role, team or None)
        if grant not in grants:
            grants.append(grant)
    return {group: tuple(grants) for group, grants in mapping.items()}


def groups_in_claims(claims: Mapping, claim: str) -> list[str]:
    """The user's groups: the claim's list of names, or its one name (Google's ``hd``, a
    single-valued custom claim); none when the claim is absent or null. ValueError for any
    other shape (a number, an object, a list holding one)."""
    value = claims.get(claim)
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(dict.fromkeys(value))  # a provider may repeat a group
    raise ValueError(MESSAGES["claim"].format(claim=claim))


def grants_for(groups: Iterable[str], mapping: GroupRoles) -> set[Grant]:
    """The grants the groups give together."""
    return {grant for group in groups for grant in mapping.get(group, ())}


def groups_for_role(mapping: GroupRoles) -> dict[str, list[str]]:
    """``role -> groups that give it``, for the page that tells a user with no role which
    groups would give one."""
    wanted: dict[str, list[str]] = {}
    for group, grants in mapping.items():
        for grant in grants:
            wanted.setdefault(grant.role, []).append(group)
    return wanted
