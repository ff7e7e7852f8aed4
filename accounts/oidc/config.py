"""The operator's OpenID Connect settings (config/settings.py reads them from the
environment; README "Single sign-on (OpenID Connect)"), checked when the server starts.

The issuer URL is the one address of the provider that this server is told: everything else
(the authorization, token, keys, user info and logout endpoints) comes from the provider's
discovery document at ``<issuer>/.well-known/openid-configuration``. It is operator
configuration, read from the environment only; no request can choose or change it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from accounts.oidc.mapping import parse_group_roles
from common.outbound import OutboundError, check_url

DISCOVERY_PATH = "/.well-known/openid-configuration"
DEFAULT_SCOPES = "openid email profile"
DEFAULT_GROUPS_CLAIM = "groups"
DEFAULT_NAME = "single sign-on"
LOOPBACK_NAMES = {"localhost"}

MESSAGES = {
    "issuer": "OIDC_ISSUER={issuer!r}: {reason}",
    "https": "the issuer must be an https:// URL (http:// only on loopback, for tests)",
    "client": "OIDC_ISSUER is set, so OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be too "
    "(the client this server is registered as at the provider)",
    "openid": "OIDC_SCOPES={scopes!r} must include openid",
    "claim": "OIDC_GROUPS_CLAIM must name a claim (e.g. groups)",
}


@dataclass(frozen=True)
class ProviderConfig:
    issuer: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...]
    groups_claim: str
    group_roles: tuple[str, ...]  # the raw entries, checked for their shape here
    name: str  # how the login page names the provider ("Sign in with Keycloak")

    @property
    def discovery_url(self) -> str:
        return self.issuer.rstrip("/") + DISCOVERY_PATH

    @property
    def scope(self) -> str:
        return " ".join(self.scopes)

    def __repr__(self) -> str:  # never the secret, in a log or a debug page
        return f"ProviderConfig(issuer={self.issuer!r}, client_id={self.client_id!r})"


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_provider(
    *,
    issuer: str,
    client_id: str,
    client_secret: str,
    scopes: str,
    groups_claim: str,
    group_roles: list[str],
    name: str,
) -> ProviderConfig | None:
    """The provider, or None when ``issuer`` is empty (single sign-on off). ValueError says
    what is wrong with the rest."""
    issuer = issuer.strip()
    if not issuer:
        return None
    try:
        target = check_url(issuer, base=True)
    except OutboundError as error:
        raise ValueError(MESSAGES["issuer"].format(issuer=issuer, reason=error.message)) from None
    if not target.https and not is_loopback(target.host):
        raise ValueError(MESSAGES["issuer"].format(issuer=issuer, reason=MESSAGES["https"]))
    if not client_id.strip() or not client_secret:
        raise ValueError(MESSAGES["client"])
    scope_list = tuple(dict.fromkeys(scopes.split()))
    if "openid" not in scope_list:
        raise ValueError(MESSAGES["openid"].format(scopes=scopes))
    if not groups_claim.strip():
        raise ValueError(MESSAGES["claim"])
    parse_group_roles(group_roles)  # the shape now; the role names when the app is loaded
    return ProviderConfig(
        issuer=issuer,
        client_id=client_id.strip(),
        client_secret=client_secret,
        scopes=scope_list,
        groups_claim=groups_claim.strip(),
        group_roles=tuple(group_roles),
        name=name.strip() or DEFAULT_NAME,
    )
