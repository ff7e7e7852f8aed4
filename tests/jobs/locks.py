"""A real "database is locked" on the SQLite test database, for the tests of what outlives
one: another connection holds the write lock (as a long import does) while Django's own
connection, with a short busy timeout, tries to write."""

import sqlite3
import threading
from contextlib import contextmanager

import pytest
from django.db import connection

SHORT_TIMEOUT = 0.2  # seconds Django's connection waits for the lock before "is locked"


@pytest.fixture
def short_busy_timeout():
    """Django's connections (this thread's and any a worker opens) wait SHORT_TIMEOUT for the
    write lock instead of settings' 20 s. SQLite only: PostgreSQL never says "locked"."""
    if connection.vendor != "sqlite":
        pytest.skip("the database lock under test is SQLite's")
    options = connection.settings_dict.setdefault("OPTIONS", {})
    before = options.get("timeout")
    connection.close()
    options["timeout"] = SHORT_TIMEOUT
    yield
    connection.close()
    if before is None:
        options.pop("timeout")
    else:
        options["timeout"] = before


@contextmanager
def write_lock_held(*, seconds: float | None = None):
    """Hold the database's write lock from another connection: until the block ends, or for
    ``seconds`` from now whether the block has ended or not (a timer lets go; the code after
    the block may meet the lock still)."""
    holder = sqlite3.connect(
        connection.settings_dict["NAME"], isolation_level=None, check_same_thread=False
    )
    holder.execute("BEGIN IMMEDIATE")
    lock = threading.Lock()

    def release() -> None:
        with lock:
            if holder.in_transaction:
                holder.execute("COMMIT")
                holder.close()

    if seconds is None:
        try:
            yield
        finally:
            release()
        return
    timer = threading.Timer(seconds, release)
    timer.start()
    try:
        yield
    except BaseException:
        timer.join()  # a failing test must not leave the database locked for the next
        raise
