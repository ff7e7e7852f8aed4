"""Service tokens: a team's API keys for machines (CI gates), made by an admin or a lead of
the team, scoped to reading or to uploading runs. As with personal tokens
(accounts/services/tokens.py) the key is returned once and only its SHA-256 hash is kept.

A service token acts as its own service account: a user that is an engineer of the token's
team alone and has no usable password (it cannot log in), so every access rule treats it as
one of the team's engineers, and what it uploads is recorded under its name. Its scope is
checked on every request (:func:`allows`): READ lets safe methods through, UPLOAD_RUNS also
``POST /api/v1/runs/``; anything else is a 403 that names the scope."""

from __future__ import annotations

import re
import secrets

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Membership, ServiceScope, ServiceToken
from accounts.services.roles import Role
from accounts.services.teams import holds
from accounts.services.tokens import ActiveKeys, hash_key

KEY_PREFIX = "rss_"  # personal tokens' keys start rs_: the two never collide
SHOWN_LENGTH = len(KEY_PREFIX) + 8
NAME_MAX_LENGTH = ServiceToken._meta.get_field("name").max_length
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
UPLOAD_PATHS = frozenset({"/api/v1/runs/"})
USERNAME_UNSAFE = re.compile(r"[^\w.@+-]")

MESSAGES = {
    "name_required": "Give the token a name, e.g. the CI job that will use it.",
    "name_too_long": f"A token name has at most {NAME_MAX_LENGTH} characters.",
    "duplicate_name": "The team has a token named “{name}” already: revoke it or pick another name.",
    "scope": "Choose what the token may do: {scopes}.",
    "not_lead": "Only an admin or a lead of the team makes or revokes its service tokens.",
    "refused": "This service token may {scope}; {method} {path} is not among that.",
}


def may_manage(user, team) -> bool:
    """Whether ``user`` makes and revokes ``team``'s service tokens: an admin or its lead."""
    return user.is_superuser or holds(user, team.pk, Role.LEAD)


def create_service_token(*, team, name: str, scope: str, created_by) -> tuple[ServiceToken, str]:
    """A new token of ``team`` and its key, which is never available again. ValidationError
    when ``created_by`` may not (an admin or a lead of the team may), or for a bad name or
    scope."""
    if not may_manage(created_by, team):
        raise ValidationError(MESSAGES["not_lead"], code="not_lead")
    name = (name or "").strip()
    if not name:
        raise ValidationError(MESSAGES["name_required"], code="name_required")
    if len(name) > NAME_MAX_LENGTH:
        raise ValidationError(MESSAGES["name_too_long"], code="name_too_long")
    if scope not in ServiceScope.values:
        scopes = ", ".join(ServiceScope.values)
        raise ValidationError(MESSAGES["scope"].format(scopes=scopes), code="scope")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    try:
        with transaction.atomic():
            user = _service_user(team, name)
            token = ServiceToken.objects.create(
                team=team,
                name=name,
                scope=scope,
                user=user,
                prefix=key[:SHOWN_LENGTH],
                key_hash=hash_key(key),
                created_by=created_by,
            )
    except IntegrityError:
        raise ValidationError(
            MESSAGES["duplicate_name"].format(name=name), code="duplicate_name"
        ) from None
    return token, key


def _service_user(team, name: str):
    """The token's service account: an engineer of ``team`` alone, without a password."""
    User = get_user_model()
    base = USERNAME_UNSAFE.sub("-", f"service-{team.slug}-{name}")[:140]
    username, number = base, 1
    while User.objects.filter(username__iexact=username).exists():
        number += 1
        username = f"{base}-{number}"
    user = User(username=username, first_name="Service token")
    user.set_unusable_password()
    user.save()
    Membership.objects.create(team=team, user=user, role=Role.ENGINEER)
    return user


def revoke_service_token(*, token: ServiceToken, by) -> bool:
    """Revoke ``token`` (an admin or a lead of its team); False if it already was."""
    if not may_manage(by, token.team):
        raise ValidationError(MESSAGES["not_lead"], code="not_lead")
    if token.revoked_at is not None:
        return False
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    return True


def find_active_service_token(key: str) -> ServiceToken | None:
    return _ACTIVE_SERVICE_TOKENS.find(key)


_ACTIVE_SERVICE_TOKENS = ActiveKeys(ServiceToken, "user", "team")


def allows(scope: str, method: str, path: str) -> bool:
    """Whether a token of ``scope`` may make this request."""
    if method.upper() in SAFE_METHODS:
        return True
    return scope == ServiceScope.UPLOAD_RUNS and method.upper() == "POST" and path in UPLOAD_PATHS


def refusal(token: ServiceToken, method: str, path: str) -> str:
    scope = "read" if token.scope == ServiceScope.READ else "read and upload runs"
    return MESSAGES["refused"].format(scope=scope, method=method, path=path[:200])
