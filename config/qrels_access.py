"""Who may read which qrels version (issue 12 part 7).

Leads, engineers and admins read every version. Anyone else (judges, users without a role)
reads only the versions published from campaigns they judge and that have closed for them:
they hold no open assignment there any more. With ``QRELS_FOR_JUDGES=none`` they read none.
Imported qrels files belong to no campaign, so only leads and engineers read them. A version
a user may not read is a 404, as every object they may not see.

Lives below both apps: the campaign lookups are strings (QrelsVersion's reverse relation
``publication`` to annotation.Publication), so evaluation can call :func:`readable_qrels`
without importing annotation. Until evaluation's qrels views filter with it themselves,
:class:`QrelsAccessMiddleware` guards the routes that show a version's grades (its page,
download and diff, and the same in the API) and :class:`QrelsVisibilityFilter` (a DRF
default filter backend) filters the API's list.
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, JsonResponse
from rest_framework.exceptions import APIException
from rest_framework.filters import BaseFilterBackend
from rest_framework.request import Request
from rest_framework.settings import api_settings

from accounts.roles import Role, has_role

CLOSED = "closed"
NONE = "none"
CHOICES = (CLOSED, NONE)

# The routes that show a version's grades, with the keyword arguments naming versions.
GUARDED_ROUTES = {
    "evaluation:qrels-detail": ("pk",),
    "evaluation:qrels-download": ("pk",),
    "evaluation:qrels-diff": ("pk", "other"),
    "api:qrels-detail": ("pk",),
    "api:qrels-download": ("pk",),
    "api:qrels-diff": ("pk", "other"),
}
NOT_FOUND = "No QrelsVersion matches the given query."


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


def may_read_qrels(user, pk) -> bool:
    from evaluation.models import QrelsVersion

    return readable_qrels(user, QrelsVersion.objects.filter(pk=pk)).exists()


class QrelsVisibilityFilter(BaseFilterBackend):
    """The API's lists and object lookups of qrels versions hold only the readable ones."""

    def filter_queryset(self, request, queryset, view):
        if queryset.model._meta.label != "evaluation.QrelsVersion":
            return queryset
        return readable_qrels(request.user, queryset)


class QrelsAccessMiddleware:
    """404 for a qrels version's page, download or diff that the user may not read."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        match = request.resolver_match
        keys = GUARDED_ROUTES.get(match.view_name if match else "")
        if not keys or request.method not in ("GET", "HEAD"):
            return None  # other methods: the view answers (these routes only read)
        api = match.view_name.startswith("api:")
        user = _api_user(request) if api else request.user
        if user is None or not user.is_authenticated:
            return None  # the view itself refuses anonymous requests (login page, 403)
        if all(may_read_qrels(user, view_kwargs[key]) for key in keys if key in view_kwargs):
            return None
        if api:
            return JsonResponse({"detail": NOT_FOUND}, status=404)
        raise Http404(NOT_FOUND)


def _api_user(request):
    """The API's user (a session or a token), as DRF will authenticate the request."""
    authenticators = [cls() for cls in api_settings.DEFAULT_AUTHENTICATION_CLASSES]
    try:
        return Request(request, authenticators=authenticators).user
    except APIException:
        return None  # a bad token: the view answers 401/403 itself
