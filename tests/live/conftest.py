"""The live tests meet the same small instance as the API's tests (tests/api/conftest.py)."""

from tests.api.conftest import make_user, world  # noqa: F401 (fixtures)
