"""The live tests meet the same small instance as the API's tests (tests/api/conftest.py)."""

import pytest
from django.conf import global_settings

from tests.api.conftest import make_user, world  # noqa: F401 (fixtures)


@pytest.fixture(autouse=True)
def _production_password_hasher(settings):
    """The servers here are processes with production's settings, which cannot read the MD5
    hashes the tests' own process makes (tests/conftest.py): passwords a server checks are
    hashed as production hashes them."""
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
