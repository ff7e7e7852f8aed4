"""DRF permission classes, one per role of DESIGN.md (admins are superusers and hold every
role, see accounts/services/roles.py).

These answer "may this kind of user call this endpoint at all" (403 when not). Which
*objects* a user may see is decided by each viewset's ``get_queryset`` through the access
helpers (annotation/access.py), so a guessed id of someone else's object is a 404, never a
403 that would confirm it exists.
"""

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.permissions import BasePermission, IsAuthenticated

from accounts.services.roles import Role, has_role
from accounts.services.teams import choose_team
from common.uploads import UPLOAD_TOO_LARGE, max_upload_bytes


class _HasRole(BasePermission):
    role: Role

    def has_permission(self, request, view) -> bool:
        return bool(request.user and has_role(request.user, self.role))


class IsJudge(_HasRole):
    message = "Only judges may do this."
    role = Role.JUDGE


class IsLead(_HasRole):
    message = "Only leads may do this."
    role = Role.LEAD


class IsEngineer(_HasRole):
    message = "Only engineers may do this."
    role = Role.ENGINEER


class IsLeadOrEngineer(BasePermission):
    message = "Only leads and engineers may do this."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and (has_role(user, Role.LEAD) or has_role(user, Role.ENGINEER)))


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


BODY_TOO_LARGE = (
    "The request body is larger than the limit of {limit:,} bytes; send files as uploads."
)


def refuse_large_body(request, *, upload: bool) -> None:
    """413 when the declared body is over the limit: settings.MAX_UPLOAD_MB for file uploads,
    DATA_UPLOAD_MAX_MEMORY_SIZE for everything else (DRF reads JSON bodies without Django's
    check). Called before authentication, which for a session would parse the body looking
    for the CSRF token."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if upload:
        if length > max_upload_bytes():
            raise PayloadTooLarge(UPLOAD_TOO_LARGE.format(limit=settings.MAX_UPLOAD_MB))
        return
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is not None and length > limit:
        raise PayloadTooLarge(BODY_TOO_LARGE.format(limit=limit))


class RolePermissionsMixin:
    """For viewsets: ``action_permissions = {"create": [IsEngineer], …}`` names the extra
    permission classes of each action. Every action needs a logged-in user; an action that is
    not listed needs nothing more, and which objects it reaches is up to ``get_queryset``.
    A method the viewset does not offer is then a 405 for every logged-in user.

    ``upload_actions`` take file uploads up to MAX_UPLOAD_MB; other bodies are capped at
    DATA_UPLOAD_MAX_MEMORY_SIZE. Both are checked before the body is read."""

    action_permissions: dict[str, list[type[BasePermission]]] = {}
    upload_actions: frozenset[str] = frozenset()

    def initial(self, request, *args, **kwargs):
        refuse_large_body(request, upload=self.action in self.upload_actions)
        super().initial(request, *args, **kwargs)

    def get_permissions(self):
        extra = self.action_permissions.get(self.action, [])
        return [IsAuthenticated(), *(permission() for permission in extra)]


TEAM_HELP = (
    "The team it belongs to (its id or slug), among the teams where you may make it; "
    "default: your only such team."
)


def team_field() -> serializers.CharField:
    """The ``team`` field of what a user makes through the API (accounts/services/teams.py)."""
    return serializers.CharField(
        required=False, allow_blank=True, allow_null=True, max_length=60, help_text=TEAM_HELP
    )


def team_for(user, value, *roles: str):
    """teams.choose_team, its refusal a 400 keyed ``team``."""
    try:
        return choose_team(user, value, *roles)
    except DjangoValidationError as error:
        raise ValidationError({"team": error.messages}) from None
