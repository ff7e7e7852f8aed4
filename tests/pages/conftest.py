"""The pages' tests meet the same small instance as the API's (tests/api/conftest.py)."""

from tests.api.conftest import api, make_user, run_jobs, world  # noqa: F401 (fixtures)
