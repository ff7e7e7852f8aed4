"""Who may read which qrels version (issue 12 part 7).

Leads, engineers and admins read every version. Anyone else (judges, users without a role)
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

from accounts.services.roles import Role, has_role

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
    if reads_every_qrels(user):
        return queryset
    if user is None or not user.is_authenticated or settings.QRELS_FOR_JUDGES == NONE:
        return queryset.none()
    still_judging = queryset.model.objects.filter(
        publication__campaign__pairs__assignments__judge=user,
        publication__campaign__pairs__assignments__status="open",
    ).values("pk")
    return (
        queryset.filter(publication__campaign__judges=user).exclude(pk__in=still_judging).distinct()
    )
