"""API authentication by personal token: ``Authorization: Bearer <key>``, or
``Authorization: Token <key>`` (Django REST Framework's spelling, which older scripts send);
and the password backend, which LOCAL_LOGIN=0 closes to all but superusers."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied

from accounts.services import service_tokens
from accounts.services.tokens import find_active_token, note_token_use
from common.compiled import Statement

KEYWORDS = (b"bearer", b"token")
MESSAGES = {
    "no_key": "Invalid token header. No credentials provided.",
    "spaces": "Invalid token header. Token string should not contain spaces.",
    "encoding": "Invalid token header. Token string should not contain invalid characters.",
    "invalid": "Invalid token.",
    "inactive": "User inactive or deleted.",
}


class PersonalTokenAuthentication(BaseAuthentication):
    """Finds the active token by the key's hash; a revoked or unknown key is refused.
    ``request.auth`` is the ``PersonalToken``, or a team's ``ServiceToken`` (its key starts
    ``rss_``; accounts/services/service_tokens.py), whose service account is the user and
    whose scope is checked here: a request outside it is a 403."""

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None  # not ours: another scheme, or no header at all
        if len(parts) == 1:
            raise AuthenticationFailed(MESSAGES["no_key"])
        if len(parts) > 2:
            raise AuthenticationFailed(MESSAGES["spaces"])
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed(MESSAGES["encoding"]) from None
        if key.startswith(service_tokens.KEY_PREFIX):
            return self._service(request, key)
        token = find_active_token(key)
        if token is None:
            raise AuthenticationFailed(MESSAGES["invalid"])
        if not token.user.is_active:
            raise AuthenticationFailed(MESSAGES["inactive"])
        note_token_use(token)
        return token.user, token

    def _service(self, request, key: str):
        token = service_tokens.find_active_service_token(key)
        if token is None:
            raise AuthenticationFailed(MESSAGES["invalid"])
        if not token.user.is_active:
            raise AuthenticationFailed(MESSAGES["inactive"])
        if not service_tokens.allows(token.scope, request.method, request.path):
            raise PermissionDenied(service_tokens.refusal(token, request.method, request.path))
        note_token_use(token)
        return token.user, token

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class PasswordBackend(ModelBackend):
    """Django's username and password check, refused for everyone but superusers when
    LOCAL_LOGIN is off (single sign-on only). Superusers keep the admin site's login as the
    way in when the provider is down; the login page itself takes no password then
    (accounts/views.py). Users who signed in through the provider have no usable password.
    Sessions of either kind load their user through this backend's ``get_user``, on every
    logged-in request: its query is compiled once and, on PostgreSQL, prepared
    (common.compiled; issue 34), the user the same as Django's ``get_user`` gives."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None and not settings.LOCAL_LOGIN and not user.is_superuser:
            return None
        return user

    def get_user(self, user_id):
        found = _USER.instances(user_id)
        if not found:
            return None
        return found[0] if self.user_can_authenticate(found[0]) else None


_USER = Statement("accounts.user", lambda pk: get_user_model()._default_manager.filter(pk=pk), 1)
