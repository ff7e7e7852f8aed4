import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests check values, never time: Hypothesis's default 200 ms deadline per example,
# and its "too slow" health check, are timed assertions that fail on a loaded machine (CI's
# four lanes on two cores), so they are off for every property test. A test may still ask
# for fewer or more examples with its own @settings.
settings.register_profile("qrelsmith", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("qrelsmith")

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
    # Passwords hashed with MD5 in the tests' own process: production's hasher spends about
    # 0.3 s of CPU on each user made with a password and on each login, which tests do by the
    # hundred. Servers the tests start as processes (gunicorn, `make run`) hash as in
    # production; a test that needs another hasher sets its own (test_password_change).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    _flush_by_delete()


def _flush_by_delete():
    """Transactional tests (browser tests, live servers, races) end with Django's flush of every
    table. On PostgreSQL that is one TRUNCATE of all tables, which gives each table and index a
    new file: 2.4 s for the schema's 57 tables, more than most such tests take, while DELETE
    empties the few rows a test leaves in milliseconds. The flush runs in one transaction
    (execute_sql_flush) and every foreign key is DEFERRABLE INITIALLY DEFERRED (Django makes
    them so; tests/test_flush.py checks), so the order of the DELETEs does not matter. A flush
    that restarts the sequences or cascades keeps Django's TRUNCATE."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return ["SET CONSTRAINTS ALL DEFERRED;"] + [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
            for table in tables
        ]

    DatabaseOperations.sql_flush = sql_flush


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


@pytest.fixture
def world_copy(world_made, db, media_root):
    """The module's ``world_made`` as it was made, for this test (tests/worlds.py)."""
    from django.conf import settings

    from tests.worlds import copy_of

    return copy_of(world_made, settings.MEDIA_ROOT)


@pytest.fixture(autouse=True)
def _role_groups(request):
    """Transactional tests (browser tests, races) end by flushing every table, which also
    removes the role groups and the default team the accounts migrations created; put them
    back for the tests that come after, as a fresh database would have them."""
    marker = request.node.get_closest_marker("django_db")
    transactional = marker is not None and marker.kwargs.get("transaction", False)
    if not transactional and "transactional_db" not in request.fixturenames:
        return
    request.getfixturevalue("transactional_db")  # the database must be open first
    from django.contrib.auth.models import Group

    from accounts.services.roles import Role
    from accounts.services.teams import default_team

    for name in Role.values:
        Group.objects.get_or_create(name=name)
    default_team()


# Fixtures through which a test reaches the database (pytest-django's, and ours that start
# servers or processes on it).
DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "live_server"}


def uses_database(item) -> bool:
    if item.get_closest_marker("django_db") is not None:
        return True
    if item.path.parent.name == "config":
        return True  # settings read DATABASE_URL
    return bool(DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())))


# CI's lanes (.ci/run): TEST_LANES names the database of each lane ("sqlite sqlite postgresql
# postgresql"), TEST_LANE is this process's (0, 1, ...). Every test that reaches the database
# runs once in a lane of each database named; every other test (pure computation, parsers,
# measures) runs once in some lane, whatever its database. Work goes by test file (one file's
# tests of one kind stay together, so module fixtures are made once), the longest first, each
# to the lane with the least so far (by .ci/durations.tsv, seconds per file and kind;
# DEFAULT_SECONDS per test where it has none), so the lanes end at about the same time. Every
# lane computes the same plan from the same collection.
DURATIONS = Path(__file__).resolve().parents[1] / ".ci" / "durations.tsv"
DEFAULT_SECONDS = 0.3
PURE = "pure"


def database_kind() -> str:
    from django.db import connection

    return "sqlite" if connection.vendor == "sqlite" else "postgresql"


def recorded_seconds() -> dict:
    """(file, kind) -> seconds, from .ci/durations.tsv ('#' lines are comments)."""
    seconds = {}
    if DURATIONS.is_file():
        for line in DURATIONS.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                path, kind, value = line.split("\t")
                seconds[path, kind] = seconds.get((path, kind), 0.0) + float(value)
    return seconds


def plan_lanes(items, lanes: list[str]) -> list[list]:
    """The tests of each lane (see above)."""
    units: dict[tuple[str, str], list] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        kinds = sorted(set(lanes)) if uses_database(item) else [PURE]
        for kind in kinds:
            units.setdefault((path, kind), []).append(item)
    recorded = recorded_seconds()

    def weight(unit) -> float:
        return recorded.get(unit, DEFAULT_SECONDS * len(units[unit]))

    load = [0.0] * len(lanes)
    planned: list[list] = [[] for _ in lanes]
    for unit in sorted(units, key=lambda u: (-weight(u), u)):
        _path, kind = unit
        eligible = [i for i, lane in enumerate(lanes) if kind in (PURE, lane)]
        lane = min(eligible, key=lambda i: (load[i], i))
        load[lane] += weight(unit)
        planned[lane] += units[unit]
    return planned


# The fixture that makes a world once per module (tests/worlds.py): its rows stay until the
# module's last test.
MODULE_WORLD = "world_made"


def before_the_world(items) -> None:
    """In a module that makes its world once, the tests that do not ask for it run first, so
    they meet the database without it, as they would alone. Only within each run of a
    module's tests as they stand: pytest-django has already put every transactional test
    after the others (their closing flush would take what the next ones expect)."""
    ordered, start = [], 0
    for end in range(1, len(items) + 1):
        if end < len(items) and _module(items[end]) == _module(items[start]):
            continue
        run = items[start:end]
        ordered += [i for i in run if not _uses_module_world(i)]
        ordered += [i for i in run if _uses_module_world(i)]
        start = end
    items[:] = ordered


def _module(item) -> str:
    return item.nodeid.split("::")[0]


def _uses_module_world(item) -> bool:
    return MODULE_WORLD in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    """``DATABASE_TESTS_ONLY=1`` keeps only the tests that reach the database: the others
    (pure computation, parsers, measures) give the same result whatever DATABASE_URL says.
    ``TEST_LANES``/``TEST_LANE`` keep this lane's share (see ``plan_lanes``). In each module,
    the tests that do not ask for a world made once for it come first (``before_the_world``)."""
    before_the_world(items)
    if os.environ.get("TEST_LANES"):
        lanes = os.environ["TEST_LANES"].split()
        lane = int(os.environ["TEST_LANE"])
        if lanes[lane] != database_kind():
            raise pytest.UsageError(
                f"TEST_LANE={lane} is a {lanes[lane]} lane, but DATABASE_URL is {database_kind()}"
            )
        kept = {id(item) for item in plan_lanes(items, lanes)[lane]}
    elif os.environ.get("DATABASE_TESTS_ONLY") == "1":
        kept = {id(item) for item in items if uses_database(item)}
    else:
        return
    dropped = [item for item in items if id(item) not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if id(item) in kept]


# TEST_DURATIONS_OUT: where a lane writes the seconds each of its units took (file, kind,
# seconds: the lines of .ci/durations.tsv), for .ci/run to gather.
_unit_seconds: dict[tuple[str, str], float] = {}


def pytest_runtest_logreport(report):
    if not os.environ.get("TEST_DURATIONS_OUT"):
        return
    kind = dict(report.user_properties).get("kind", PURE)
    unit = (report.nodeid.split("::")[0], kind)
    _unit_seconds[unit] = _unit_seconds.get(unit, 0.0) + report.duration


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if os.environ.get("TEST_DURATIONS_OUT"):
        item.user_properties.append(("kind", database_kind() if uses_database(item) else PURE))


def pytest_sessionfinish(session):
    out = os.environ.get("TEST_DURATIONS_OUT")
    if out:
        with open(out, "w") as f:
            for (path, kind), seconds in sorted(_unit_seconds.items()):
                f.write(f"{path}\t{kind}\t{seconds:.1f}\n")


@pytest.fixture(scope="session")
def oidc_provider(live_server):
    """A real OpenID Connect provider on loopback, one per test session
    (tests/oidc_server.py), with our client registered for the live server's callback."""
    from tests.oidc_server import missing, start_provider

    reason = missing()
    if reason is not None:
        if reason.startswith("node is not installed"):
            pytest.skip(reason)
        pytest.fail(reason)
    provider = start_provider(live_server.url)
    yield provider
    provider.stop()


SSO_GROUP_ROLES = [
    "relevance-leads:lead",
    "relevance-judges:judge",
    "search-eng:engineer",
    # roles in a named team (issue 32 part 2): memberships of "web-search", made if missing
    "web-leads:lead@web-search",
    "web-eng:engineer@web-search",
]


@pytest.fixture
def sso(settings, oidc_provider):
    """Single sign-on on, through the loopback provider, with SSO_GROUP_ROLES."""
    from accounts.oidc.config import read_provider
    from tests.oidc_server import CLIENT_ID, CLIENT_SECRET

    settings.OIDC_PROVIDER = read_provider(
        issuer=oidc_provider.issuer,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        scopes="openid email profile groups",
        groups_claim="groups",
        group_roles=SSO_GROUP_ROLES,
        name="Test provider",
    )
    return oidc_provider
