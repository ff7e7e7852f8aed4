"""Start-up checks of the accounts settings."""

from django.conf import settings
from django.core.checks import Error, register


@register()
def check_login_limits(app_configs, **kwargs):
    errors = []
    for name in ("LOGIN_FAILURE_LIMIT", "LOGIN_FAILURE_WINDOW_MINUTES"):
        value = getattr(settings, name)
        if not isinstance(value, int) or value < 1:
            errors.append(
                Error(f"{name}={value!r} must be a whole number of at least 1.", id="accounts.E001")
            )
    return errors
