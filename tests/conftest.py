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
def outbound_allows_loopback(settings):
    """The operator's allow-list opened to 127.0.0.1, where the tests' chat server listens
    (tests/llm_server.py); without it the outbound policy refuses loopback, as in production."""
    from common.outbound import parse_allow

    settings.OUTBOUND_ALLOW = parse_allow(["127.0.0.1"])


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

    from accounts.services.roles import Role

    for name in Role.values:
        Group.objects.get_or_create(name=name)


# Fixtures through which a test reaches the database (pytest-django's, and ours that start
# servers or processes on it).
DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "live_server"}


def uses_database(item) -> bool:
    if item.get_closest_marker("django_db") is not None:
        return True
    if item.path.parent.name == "config":
        return True  # settings read DATABASE_URL
    return bool(DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(config, items):
    """``DATABASE_TESTS_ONLY=1`` (CI's second database, .ci/run) keeps only the tests that
    reach the database: the others (pure computation, parsers, measures) give the same
    result whatever DATABASE_URL says, and already ran against the first database."""
    if os.environ.get("DATABASE_TESTS_ONLY") != "1":
        return
    kept, dropped = [], []
    for item in items:
        (kept if uses_database(item) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
