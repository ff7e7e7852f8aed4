"""Every form and fetch/htmx POST of the pages is protected against cross-site requests: the
same request the permission matrix lets through is refused without its CSRF token."""

import pytest
from django.db import transaction
from django.test import Client

from tests.api.test_permissions import ALL_ROLES
from tests.pages.test_permissions import BODIES, MATRIX

pytestmark = pytest.mark.django_db

# The pages that take a POST (a route that answers 405 to everyone takes none to protect).
POSTS = [row for row in MATRIX if row[0] == "POST" and any(status < 400 for status in row[3][1:])]


@pytest.fixture
def world(module_world, db):
    """One world for the module (tests/api/conftest.py, ``module_world``), rolled back to
    after each test: every request here is refused or rolled back, none needs a world of its
    own."""
    return module_world


def _allowed_role(statuses) -> str:
    """A role the matrix lets through (so only the missing token can refuse it)."""
    for role, status in zip(ALL_ROLES, statuses, strict=True):
        if role != "anonymous" and status < 400:
            return role
    raise AssertionError(f"no role may POST here: {statuses}")


@pytest.mark.parametrize(
    ("path", "body", "statuses"),
    [pytest.param(path, body, statuses, id=f"/{path}") for _, path, body, statuses in POSTS],
)
def test_a_post_without_its_csrf_token_is_refused(world, ids, path, body, statuses):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users[_allowed_role(statuses)])
    with transaction.atomic():
        response = client.post("/" + path.format(**ids), BODIES[body](world) if body else {})
        transaction.set_rollback(True)
    assert response.status_code == 403, (
        f"POST /{path} without a CSRF token answered {response.status_code}: every POST must "
        f"need the token (keep CsrfViewMiddleware, never csrf_exempt a page)"
    )
    assert b"CSRF" in response.content
