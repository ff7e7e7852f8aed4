"""The three roles of DESIGN.md, kept as Django groups. Admins are superusers."""

from django.contrib.auth.models import Group
from django.db import models


class Role(models.TextChoices):
    JUDGE = "judge", "Judge"
    LEAD = "lead", "Lead"
    ENGINEER = "engineer", "Engineer"


def roles_of(user) -> set[str]:
    """The role names a user holds; a superuser holds every role."""
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return set(Role.values)
    # Cached on the user object: the navigation asks on every page.
    cached = getattr(user, "_role_names", None)
    if cached is None:
        cached = set(user.groups.filter(name__in=Role.values).values_list("name", flat=True))
        user._role_names = cached
    return cached


def has_role(user, role: Role) -> bool:
    return role in roles_of(user)


def set_roles(user, roles: set[str]) -> None:
    """Make ``roles`` exactly the roles ``user`` holds (other groups are left alone): single
    sign-on re-syncs them from the provider's groups at each login."""
    wanted = set(roles) & set(Role.values)
    held = set(user.groups.filter(name__in=Role.values).values_list("name", flat=True))
    if wanted - held:
        user.groups.add(*Group.objects.filter(name__in=wanted - held))
    if held - wanted:
        user.groups.remove(*Group.objects.filter(name__in=held - wanted))
    user.__dict__.pop("_role_names", None)  # roles_of's cache
