import pytest
from django.contrib.auth.models import Group

PASSWORD = "a-long-test-password"


@pytest.fixture
def make_user(django_user_model):
    """``make_user("ann", "engineer")``: a user with password ``PASSWORD`` and those roles."""

    def make(username: str, *roles: str, **extra):
        user = django_user_model.objects.create_user(username, password=PASSWORD, **extra)
        if roles:
            user.groups.add(*Group.objects.filter(name__in=roles))
        return user

    return make
