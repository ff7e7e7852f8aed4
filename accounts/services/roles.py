"""The three roles of DESIGN.md, kept as Django groups. Admins are superusers."""

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
