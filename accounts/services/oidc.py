"""Sign-in through the company's OpenID Connect provider (settings.OIDC_PROVIDER).

Authlib's Django client does the protocol: the provider's discovery document, the
authorization request with a fresh ``state`` (kept in the session, checked and spent on the
way back), a ``nonce`` (checked in the ID token) and PKCE (S256); the code exchanged for
tokens with the client's secret; the ID token's signature checked against the provider's
keys and its claims against what we expect: our issuer exactly, our client id in the
audience, not expired, our nonce. Every request to the provider goes through the outbound
policy (accounts/oidc/transport.py).

Then ``sign_in_user`` finds the user by (issuer, subject), never by e-mail or username,
creates them at their first login, and re-syncs their roles from the groups claim at every
login (OIDC_GROUP_ROLES, accounts/oidc/mapping.py): the roles in the default team as groups,
the roles in named teams as memberships (a team named for the first time is made).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field

import requests
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.base_client import MismatchingStateError, OAuthError
from authlib.integrations.django_client import DjangoIntegration, DjangoOAuth2App
from authlib.integrations.requests_client import OAuth2Session
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.http import HttpResponseRedirect
from django.utils import timezone
from joserfc.errors import ClaimError, ExpiredTokenError, JoseError

from accounts.models import OIDCIdentity
from accounts.oidc.config import ProviderConfig
from accounts.oidc.mapping import grants_for, groups_for_role, groups_in_claims, parse_group_roles
from accounts.oidc.transport import ProviderUnreachable, mount, policy_for_issuer
from accounts.services.roles import Role, set_roles
from accounts.services.teams import set_memberships
from common.outbound import Policy, policy_from_settings

logger = logging.getLogger(__name__)

CLIENT_NAME = "oidc"
METADATA_SECONDS = 3600  # the discovery document is fetched again after an hour
USERNAME_CLAIMS = ("preferred_username", "email", "name")
USERNAME_UNSAFE = re.compile(r"[^\w.@+-]")
USERNAME_MAX = 150

# What a refused sign-in tells the person (accounts/sso_error.html). Constants, so tests
# assert the words.
MESSAGES = {
    "state": "This sign-in answer does not belong to a sign-in started in this browser (it "
    "was used already, it is too old, or it came from somewhere else). Start again.",
    "provider": "The sign-in provider did not sign you in ({error}).",
    "code": "The sign-in provider refused to confirm this sign-in: its code was already used "
    "or has expired. Start again.",
    "token": "The sign-in provider's answer could not be trusted: {reason}. Start again; if "
    "it happens again, tell your administrator.",
    "unreachable": "The sign-in provider could not be reached: {reason}. Try again in a "
    "moment; if it lasts, tell your administrator.",
    "claims": "The sign-in provider's answer could not be read: {reason}. Tell your administrator.",
    "setup": "Single sign-on is not set up correctly on this server: {reason}. Tell your "
    "administrator.",
    "inactive": "Your account here is disabled. Ask an administrator.",
    "no_role": "You signed in at {provider}, but none of your groups there gives you a role "
    "here, so no account was opened for you.",
    "no_role_left": "You signed in at {provider}, but none of your groups there gives you a "
    "role here any more; the roles you had were taken away.",
}
# Why an ID token was not trusted, by the claim that failed.
TOKEN_REASONS = {
    "iss": "the ID token was issued by another provider",
    "aud": "the ID token was issued for another application",
    "azp": "the ID token was issued for another application",
    "nonce": "the ID token belongs to another sign-in (its nonce does not match)",
    "exp": "the ID token has expired",
    "iat": "the ID token's time of issue is wrong",
    "sub": "the ID token names no user",
    "at_hash": "the ID token does not match its access token",
    "signature": "the ID token's signature does not verify with the provider's keys",
    "missing": "the provider sent no ID token",
    "userinfo": "the user info belongs to another user than the ID token",
}


class SignInRefused(Exception):
    """A sign-in that did not happen: ``kind`` is a key of MESSAGES, ``message`` the words
    for the person, ``status`` the page's HTTP status; ``details`` what the page may add."""

    def __init__(self, kind: str, status: int = 400, **details) -> None:
        self.kind = kind
        self.status = status
        self.details = details
        template = MESSAGES[kind]
        self.message = template.format(**details) if details else template
        super().__init__(self.message)


@dataclass
class SignedIn:
    user: object
    id_token: str
    next_url: str = ""
    groups: list[str] = field(default_factory=list)


# --- the client ---------------------------------------------------------------------------


def _session_class(policy: Policy) -> type[OAuth2Session]:
    class ProviderSession(OAuth2Session):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            mount(self, policy)

    return ProviderSession


class _Client(DjangoOAuth2App):
    """Authlib's Django client, whose every session goes through the outbound policy."""

    def __init__(self, provider: ProviderConfig, policy: Policy) -> None:
        self.client_cls = _session_class(policy)
        super().__init__(
            DjangoIntegration(CLIENT_NAME),
            name=CLIENT_NAME,
            client_id=provider.client_id,
            client_secret=provider.client_secret,
            server_metadata_url=provider.discovery_url,
            client_kwargs={
                "scope": provider.scope,
                "code_challenge_method": "S256",
                "token_endpoint_auth_method": "client_secret_basic",
            },
        )
        self.provider = provider

    def load_server_metadata(self):
        loaded = self.server_metadata.get("_loaded_at")
        if loaded is not None and time.time() - loaded > METADATA_SECONDS:
            self.server_metadata = {}
        metadata = super().load_server_metadata()
        # OpenID Connect Discovery 1.0, 4.3: the document must name the issuer we asked, or
        # its tokens would be checked against an issuer nobody configured.
        issuer = metadata.get("issuer")
        if not isinstance(issuer, str) or issuer.rstrip("/") != self.provider.issuer.rstrip("/"):
            self.server_metadata = {}
            raise SignInRefused(
                "setup",
                status=502,
                reason=f"the provider's discovery document names the issuer {issuer!r}, "
                f"not OIDC_ISSUER={self.provider.issuer!r}",
            )
        return metadata


_clients: dict[tuple, _Client] = {}
_clients_lock = threading.Lock()


def provider_client() -> _Client:
    """The client for the configured provider (one per configuration, kept for the process,
    so the discovery document and keys are fetched once an hour, not at every login)."""
    provider = settings.OIDC_PROVIDER
    if provider is None:
        raise SignInRefused("setup", status=404, reason="single sign-on is off (no OIDC_ISSUER)")
    policy = policy_for_issuer(policy_from_settings(settings), provider.issuer)
    key = (provider, policy)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            _clients.clear()  # settings changed (tests): the old client is of no more use
            client = _clients[key] = _Client(provider, policy)
    return client


# --- the two legs -------------------------------------------------------------------------


def authorization_redirect(request, *, redirect_uri: str, next_url: str):
    """The redirect to the provider's authorization endpoint; the state (with its nonce,
    PKCE verifier and where to go afterwards) waits in the session."""
    client = provider_client()
    with _translated_errors():
        found = client.create_authorization_url(redirect_uri)
    client.save_authorize_data(request, redirect_uri=redirect_uri, next_url=next_url, **found)
    return HttpResponseRedirect(found["url"])


def complete_sign_in(request) -> SignedIn:
    """The provider's answer at our callback, checked (state, code, ID token) and turned
    into a user; SignInRefused says why not."""
    client = provider_client()
    state = request.GET.get("state") or ""
    saved = client.framework.get_state_data(request.session, state) if state else None
    next_url = (saved or {}).get("next_url", "")
    with _translated_errors():
        # RFC 9207: a provider that names itself in its answer must name our issuer (an
        # answer from another provider, mixed up with ours, stops here).
        named = request.GET.get("iss")
        if named is not None and named != client.load_server_metadata()["issuer"]:
            raise SignInRefused("token", reason=TOKEN_REASONS["iss"])
        token = client.authorize_access_token(
            request,
            claims_options={
                "iss": {"essential": True, "value": client.load_server_metadata()["issuer"]},
                "aud": {"essential": True, "value": client.client_id},
                "sub": {"essential": True},
            },
        )
        claims = token.get("userinfo")
        if not claims or "id_token" not in token:
            raise SignInRefused("token", reason=TOKEN_REASONS["missing"])
        claims = dict(claims)
        if client.load_server_metadata().get("userinfo_endpoint"):
            claims = _with_userinfo(client, token, claims)
    user, groups = sign_in_user(provider=client.provider, claims=claims)
    return SignedIn(user=user, id_token=token["id_token"], next_url=next_url, groups=groups)


def _with_userinfo(client, token, claims: dict) -> dict:
    """The ID token's claims, with what only the UserInfo endpoint tells (many providers put
    e-mail and groups there, not in the ID token). The ID token's own claims win; a UserInfo
    answer about another subject is refused (OpenID Connect Core 5.3.2)."""
    info = client.userinfo(token=token)
    if info.get("sub") != claims.get("sub"):
        raise SignInRefused("token", reason=TOKEN_REASONS["userinfo"])
    return {**dict(info), **claims}


def end_session_url(*, id_token: str, post_logout_redirect_uri: str) -> str | None:
    """Where to send the browser to end the provider's session too (RP-initiated logout),
    or None when the provider offers no end_session_endpoint or cannot be asked now."""
    try:
        client = provider_client()
        with _translated_errors():
            if not client.load_server_metadata().get("end_session_endpoint"):
                return None
            found = client.create_logout_url(
                post_logout_redirect_uri=post_logout_redirect_uri,
                id_token_hint=id_token,
                client_id=client.client_id,
            )
    except SignInRefused as refused:
        logger.warning("Single sign-on logout: %s", refused.message)
        return None
    return found["url"]


class _translated_errors:
    """Authlib's, joserfc's and the transport's errors as SignInRefused."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if error is None or isinstance(error, SignInRefused):
            return False
        refused = _refusal(error)
        if refused is None:
            return False
        logger.warning("Single sign-on refused (%s): %s", refused.kind, error)
        raise refused from None


def _refusal(error: BaseException) -> SignInRefused | None:
    if isinstance(error, MismatchingStateError):
        return SignInRefused("state")
    if isinstance(error, ProviderUnreachable):
        return SignInRefused("unreachable", status=502, reason=error.message)
    if isinstance(error, requests.HTTPError):
        status = error.response.status_code if error.response is not None else "?"
        return SignInRefused("unreachable", status=502, reason=f"it answered HTTP {status}")
    if isinstance(error, ExpiredTokenError):
        return SignInRefused("token", reason=TOKEN_REASONS["exp"])
    if isinstance(error, ClaimError):
        reason = TOKEN_REASONS.get(error.claim, f"its {error.claim!r} claim is wrong")
        return SignInRefused("token", reason=reason)
    if isinstance(error, JoseError):
        return SignInRefused("token", reason=TOKEN_REASONS["signature"])
    if isinstance(error, OAuthError) and error.error == "invalid_grant":
        return SignInRefused("code")
    if isinstance(error, AuthlibBaseError):
        code = error.error if isinstance(error.error, str) else "error"
        return SignInRefused("provider", error=re.sub(r"[^\w.-]", "", code)[:60] or "error")
    if isinstance(error, ValueError):  # an answer that is not the JSON it should be
        return SignInRefused("unreachable", status=502, reason="its answer could not be read")
    return None


# --- users and roles ----------------------------------------------------------------------


def sign_in_user(*, provider: ProviderConfig, claims: dict, retry: bool = True):
    """The user the verified claims name, created at their first login, with their roles
    re-synced from the groups claim; SignInRefused("no_role") when the groups give no role
    (no account is opened for a new user; a known user loses the roles they had)."""
    try:
        mapping = parse_group_roles(provider.group_roles, roles=Role.values)
    except ValueError as error:
        raise SignInRefused("setup", status=503, reason=str(error)) from None
    try:
        groups = groups_in_claims(claims, provider.groups_claim)
    except ValueError as error:
        raise SignInRefused("claims", reason=str(error)) from None
    grants = grants_for(groups, mapping)
    roles = {grant.role for grant in grants if grant.team is None}
    in_teams = {(grant.team, grant.role) for grant in grants if grant.team is not None}
    issuer, subject = str(claims["iss"]), str(claims["sub"])
    wanted = groups_for_role(mapping)
    try:
        with transaction.atomic():
            identity = _identity(issuer, subject)
            if identity is None and not grants:
                raise _no_role(provider, groups, wanted, "no_role")
            if identity is None:
                identity = _new_identity(issuer, subject, claims)
            user = identity.user
            _update_profile(user, claims)
            set_roles(user, roles)  # their roles in the default team
            set_memberships(user, in_teams)  # and in the teams the grants name
            identity.groups = groups
            identity.last_login_at = timezone.now()
            identity.save(update_fields=["groups", "last_login_at"])
    except IntegrityError:
        # Two first logins of one user at once: the other made the identity (or took the
        # username); once more finds it.
        if not retry:
            raise
        return sign_in_user(provider=provider, claims=claims, retry=False)
    if not user.is_active:
        raise SignInRefused("inactive", status=403)
    if not grants and not user.is_superuser:
        raise _no_role(provider, groups, wanted, "no_role_left")
    return user, groups


def _no_role(provider, groups, wanted, kind) -> SignInRefused:
    return SignInRefused(kind, status=403, provider=provider.name, groups=groups, wanted=wanted)


def _identity(issuer: str, subject: str) -> OIDCIdentity | None:
    found = OIDCIdentity.objects.select_for_update().select_related("user")
    return found.filter(issuer=issuer, subject=subject).first()


def _new_identity(issuer: str, subject: str, claims: dict) -> OIDCIdentity:
    User = get_user_model()
    user = User(username=_free_username(claims))
    user.set_unusable_password()  # signs in through the provider only
    user.save()
    return OIDCIdentity.objects.create(user=user, issuer=issuer, subject=subject)


def _free_username(claims: dict) -> str:
    """A username for a new user, from their preferred username or e-mail, unused here (a
    taken name gets -2, -3...: it is only a label; the user is found by issuer and subject)."""
    User = get_user_model()
    base = ""
    for name in USERNAME_CLAIMS:
        value = claims.get(name)
        if isinstance(value, str) and value.strip():
            base = USERNAME_UNSAFE.sub("-", value.strip())[: USERNAME_MAX - 8]
            break
    base = base or "sso-user"
    candidate, number = base, 1
    while User.objects.filter(username__iexact=candidate).exists():
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def _update_profile(user, claims: dict) -> None:
    """E-mail and names follow the provider's (the user stays the same when they change)."""
    values = {
        "email": claims.get("email"),
        "first_name": claims.get("given_name"),
        "last_name": claims.get("family_name"),
    }
    changed = []
    for name, value in values.items():
        if isinstance(value, str):
            value = value.strip()[: user._meta.get_field(name).max_length]
            if getattr(user, name) != value:
                setattr(user, name, value)
                changed.append(name)
    if changed:
        user.save(update_fields=changed)
