"""Checks made when a production server (gunicorn through wsgi.py/asgi.py) starts."""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def refuse_development_secret() -> None:
    # A production start with the development secret would sign sessions with a public key.
    if not settings.DEBUG and settings.SECRET_KEY == settings.DEVELOPMENT_SECRET_KEY:
        raise ImproperlyConfigured(
            "SECRET_KEY is the development secret while DEBUG is off. Set SECRET_KEY to a long "
            "random value (python -c 'import secrets; print(secrets.token_urlsafe(50))'), or "
            "DEBUG=1 for local development."
        )
