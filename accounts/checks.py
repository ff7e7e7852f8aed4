"""Start-up checks of the accounts settings."""

from django.conf import settings
from django.core.checks import Error, Warning, register

LIMITS = (
    "LOGIN_FAILURE_LIMIT",
    "LOGIN_ADDRESS_FAILURE_LIMIT",
    "LOGIN_GLOBAL_FAILURE_LIMIT",
    "LOGIN_FAILURE_WINDOW_MINUTES",
)


@register()
def check_login_limits(app_configs, **kwargs):
    errors = []
    for name in LIMITS:
        value = getattr(settings, name)
        if not isinstance(value, int) or value < 1:
            errors.append(
                Error(f"{name}={value!r} must be a whole number of at least 1.", id="accounts.E001")
            )
    return errors


@register()
def check_proxy_addresses(app_configs, **kwargs):
    if settings.BEHIND_TLS_PROXY and not settings.TRUSTED_PROXIES:
        return [
            Warning(
                "BEHIND_TLS_PROXY is on but TRUSTED_PROXIES is empty: every login seems to come "
                "from the proxy's address, so the login limits count all clients as one.",
                hint="Set TRUSTED_PROXIES to the proxy's address or network (e.g. 10.0.0.5).",
                id="accounts.W001",
            )
        ]
    return []


@register()
def check_group_roles(app_configs, **kwargs):
    """OIDC_GROUP_ROLES names roles that exist (the settings could only check its shape)."""
    from accounts.oidc.mapping import parse_group_roles
    from accounts.services.roles import Role

    provider = settings.OIDC_PROVIDER
    if provider is None:
        return []
    try:
        mapping = parse_group_roles(provider.group_roles, roles=Role.values)
    except ValueError as error:
        return [Error(str(error), id="accounts.E002")]
    if not mapping:
        return [
            Warning(
                "Single sign-on is on but OIDC_GROUP_ROLES is empty: every user who signs in "
                "through the provider is refused (no group gives a role).",
                hint="Set OIDC_GROUP_ROLES, e.g. relevance-leads:lead,relevance-judges:judge",
                id="accounts.W002",
            )
        ]
    return []
