"""What the management commands of both apps share: finding the user a command acts for."""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError


def user_named(username: str | None):
    """The user called ``username``; None when no name was given; CommandError when no user
    has it."""
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"no user {username!r}")
    return user
