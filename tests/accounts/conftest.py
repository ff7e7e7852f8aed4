import pytest
from django.contrib.auth.models import Group

PASSWORD = "a-long-test-password"


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # Logins are what these tests do; the production hasher takes ~0.5 s per check.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def make_user(django_user_model):
    """``make_user("ann", "engineer")``: a user with password ``PASSWORD`` and those roles."""

    def make(username: str, *roles: str, **extra):
        user = django_user_model.objects.create_user(username, password=PASSWORD, **extra)
        if roles:
            user.groups.add(*Group.objects.filter(name__in=roles))
        return user

    return make
