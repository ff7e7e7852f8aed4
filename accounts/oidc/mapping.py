"""Which of our roles a provider's groups give (``OIDC_GROUP_ROLES``).

The setting is a list of ``group:role`` entries: ``relevance-leads:lead,
relevance-judges:judge,search-eng:engineer``. A group may give several roles (one entry each)
and several groups the same role. Group names are matched exactly, case and all (Keycloak's
full paths such as ``/relevance-leads`` included), because a provider's groups are
identifiers, not prose.

A grant is a role *in a scope*: today the only scope is the whole site (``team`` is None).
When teams come (issue 32, part 2) an entry will name one, ``group:team/role``, and the
grants a user holds will be (team, role) pairs; the parsing and the re-sync at each login
stay as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MESSAGES = {
    "entry": "OIDC_GROUP_ROLES: {entry!r} is not group:role (e.g. relevance-leads:lead)",
    "role": "OIDC_GROUP_ROLES: {entry!r} names the role {role!r}; the roles are {roles}",
    "claim": "the {claim!r} claim is neither a list of names nor one name",
}


@dataclass(frozen=True, order=True)
class Grant:
    """A role that a group gives, on the whole site (``team`` None: the only scope so far)."""

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
        group, role = group.strip(), role.strip()
        if not separator or not group or not role:
            raise ValueError(MESSAGES["entry"].format(entry=entry))
        if known is not None and role not in known:
            raise ValueError(
                MESSAGES["role"].format(entry=entry, role=role, roles=", ".join(known))
            )
        grants = mapping.setdefault(group, [])
        if Grant(role) not in grants:
            grants.append(Grant(role))
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
