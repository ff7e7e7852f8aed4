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
