import os

import pytest

# Playwright's sync API runs an event loop in the test thread; Django refuses ORM calls
# from a thread with a running loop unless told it is safe (it is: tests are sequential).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_configure(config):
    """Tests talk plain http to the test client and the live server, so production's https
    redirect and https-only cookies are off for the whole session (the live server's
    middleware is built once, before any per-test override could apply).
    tests/config checks the production defaults in a separate process."""
    if not config.pluginmanager.hasplugin("django"):
        return  # pure-module runs with `-p no:django`
    from django.conf import settings

    settings.SECURE_SSL_REDIRECT = False
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    settings.SECURE_HSTS_SECONDS = 0


@pytest.fixture
def media_root(settings, tmp_path):
    """A private MEDIA_ROOT; returns a function listing every stored file (to prove imports
    leave nothing behind when they fail)."""
    settings.MEDIA_ROOT = tmp_path / "media"

    def stored_files() -> list[str]:
        root = settings.MEDIA_ROOT
        if not root.exists():
            return []
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())

    return stored_files


@pytest.fixture(autouse=True)
def _role_groups(request):
    """Transactional tests (browser tests, races) end by flushing every table, which also
    removes the role groups the accounts migration created; put them back for the tests
    that come after, as a fresh database would have them."""
    marker = request.node.get_closest_marker("django_db")
    transactional = marker is not None and marker.kwargs.get("transaction", False)
    if not transactional and "transactional_db" not in request.fixturenames:
        return
    request.getfixturevalue("transactional_db")  # the database must be open first
    from django.contrib.auth.models import Group

    from accounts.roles import Role

    for name in Role.values:
        Group.objects.get_or_create(name=name)
