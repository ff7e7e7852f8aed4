"""Checks made when a production server (gunicorn through wsgi.py/asgi.py) starts."""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.urls import get_resolver


def refuse_development_secret() -> None:
    # A production start with the development secret would sign sessions with a public key.
    if not settings.DEBUG and settings.SECRET_KEY == settings.DEVELOPMENT_SECRET_KEY:
        raise ImproperlyConfigured(
            "SECRET_KEY is the development secret while DEBUG is off. Set SECRET_KEY to a long "
            "random value (python -c 'import secrets; print(secrets.token_urlsafe(50))'), or "
            "DEBUG=1 for local development."
        )


def load_urls() -> None:
    """Import the URLconf, and with it every view and what they import, while the worker
    boots. Django does it on the first request that resolves a URL, and /readyz answers before
    URL resolution (config/health.py): without this, a restarted node says it is ready while
    its first real requests still wait for seconds of imports (measured with
    bench/cluster_load.py: 8-14 s on a busy 2-CPU machine)."""
    get_resolver().url_patterns  # noqa: B018  (the property imports the URLconf)
