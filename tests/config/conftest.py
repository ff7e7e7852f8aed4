"""tests/config meets the same small instance as the API's and the pages' tests."""

from tests.api.conftest import api, make_user, run_jobs, world  # noqa: F401 (fixtures)
from tests.pages.conftest import ids  # noqa: F401 (fixture)
