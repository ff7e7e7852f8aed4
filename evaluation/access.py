"""Who may see which qrels version, system, run, evaluation and search endpoint: the one
home of evaluation's access rules. Each of them belongs to a team (a run and its
evaluations to their system's; accounts/services/teams.py); what a user may not see is a
404, as every object they may not see.

Qrels (issue 12 part 7): leads, engineers and admins read every version of their teams and
the versions shared with their teams (read-only: only the owning team's lead shares). Anyone else (judges, users without a role)
reads only the versions published from campaigns they judge and that have closed for them:
they hold no open assignment there any more. With ``QRELS_FOR_JUDGES=none`` they read none.
Imported qrels files belong to no campaign, so only leads and engineers read them. A version
a user may not read is a 404, as every object they may not see.

The campaign lookups are strings (QrelsVersion's reverse relation ``publication`` to
annotation.Publication), so evaluation imports no annotation module. Every page and API
endpoint that shows qrels versions takes its queryset through :func:`readable_qrels`.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q

from accounts.services.roles import Role, has_role
from accounts.services.teams import holds, in_teams, team_ids

# Who works with systems, runs, evaluations, search endpoints and the qrels of a team.
READERS = (Role.LEAD, Role.ENGINEER)

CLOSED = "closed"
NONE = "none"
CHOICES = (CLOSED, NONE)


def reads_every_qrels(user) -> bool:
    return bool(
        user is not None
        and user.is_authenticated
        and (user.is_superuser or has_role(user, Role.LEAD) or has_role(user, Role.ENGINEER))
    )


def readable_qrels(user, queryset):
    """The versions of ``queryset`` (of QrelsVersion) that ``user`` may read."""
    if user is None or not user.is_authenticated:
        return queryset.none()
    if user.is_superuser:
        return queryset
    model = queryset.model
    teams = team_ids(user, *READERS)
    readable = Q(team__in=teams) | Q(
        pk__in=model.objects.filter(shared_with__in=teams).values("pk")
    )
    if settings.QRELS_FOR_JUDGES != NONE:
        still_judging = model.objects.filter(
            publication__campaign__pairs__assignments__judge=user,
            publication__campaign__pairs__assignments__status="open",
        ).values("pk")
        closed = (
            model.objects.filter(publication__campaign__judges=user)
            .exclude(pk__in=still_judging)
            .values("pk")
        )
        readable |= Q(pk__in=closed)
    return queryset.filter(readable)


def owns_qrels(user, qrels) -> bool:
    """Whether ``user`` may act on ``qrels`` as its team (share it): a lead of its team."""
    return holds(user, qrels.team_id, Role.LEAD)


def visible_systems(user, queryset, *roles: str):
    """The systems of ``queryset`` in the teams where ``user`` holds one of ``roles``
    (leads and engineers by default: who reads systems; engineers alone change them)."""
    return in_teams(queryset, user, *(roles or READERS))


def visible_runs(user, queryset, *roles: str):
    """The runs of ``queryset`` whose system ``user`` sees (:func:`visible_systems`)."""
    return in_teams(queryset, user, *(roles or READERS), field="system__team")


def visible_evaluations(user, queryset):
    """The evaluations of ``queryset`` whose run ``user`` sees."""
    return in_teams(queryset, user, *READERS, field="run__system__team")


def visible_endpoints(user, queryset):
    """The search endpoints of ``queryset`` in the teams of ``user``'s that use them."""
    return in_teams(queryset, user, *READERS)
