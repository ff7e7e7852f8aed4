"""Statements of the grade path compiled once per database and run again with new values.

Building a queryset's SQL from the ORM's expressions costs the web process more CPU than the
database spends running these small statements, and a grade runs a dozen of them (issue 34:
about half of a grade's CPU was the ORM compiling the same SQL again). So each statement is
written once as a queryset, compiled the first time it runs on a database with sentinel
numbers where the request's values go, and kept: later runs put the values in their places
and hand the rows through the compiler's converters, as the ORM would (dates, JSON, UUIDs,
booleans come back as the ORM gives them on either database).

Whole numbers are put in (ids), or text where a statement says so (a key's hash compared
for equality): a sentinel must reach the SQL's parameters unchanged.

On PostgreSQL the grade path's statements go through :func:`prepared_cursor`: planned once
per connection and then run from the plan (planning these small statements cost PostgreSQL
more than running them). Django's own cursors bind on the client and never prepare, so no
other statement is prepared.

A grade's writes (its judgment, its history, the assignment's status, the judge's, pair's and
topic's tallies) are made as :class:`Write` values and sent by :func:`send_together`: on
PostgreSQL as one data-modifying WITH, one round trip where each cost the web process and the
database a statement's fixed work (issue 34).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import QuerySet
from django.db.models.signals import post_save


def default_connection():
    """The default database's connection, looked up once: ``django.db.connection`` is a
    proxy that looks it up again (a thread-local) on every attribute read, about a tenth of
    a grade's CPU in the web process when each statement read several (issue 34)."""
    return connections[DEFAULT_DB_ALIAS]


# Numbers no id takes; each must reach the compiled statement's parameters (once or more).
SENTINELS = (-7_654_321, -7_654_322, -7_654_323, -7_654_324)
# Text no value takes (a NUL: PostgreSQL refuses it in text), for a statement's text values.
TEXT_SENTINEL = "\x00compiled-sentinel\x00"
_CACHE: dict[tuple, tuple] = {}


class Statement:
    """A queryset made by ``build(*sentinels)``, compiled once per database connection alias.

    ``rows(*values)`` runs it with the values in the sentinels' places; ``instances(*values)``
    (for a queryset of model instances) gives them as the ORM would. With ``text=True`` its
    one value is text (compared for equality only) instead of a whole number.
    """

    def __init__(
        self,
        name: str,
        build: Callable[..., QuerySet],
        arity: int,
        lock_of: tuple = (),
        *,
        text: bool = False,
    ):
        if text and arity != 1:
            raise ValueError(f"{name}: a text statement takes one value")
        self.name, self.build, self.arity = name, build, arity
        self.sentinels = (TEXT_SENTINEL,) if text else SENTINELS[:arity]
        self.kind = str if text else int
        # Models whose rows the statement locks (FOR UPDATE OF their tables, each joined once;
        # where the database has row locks: SQLite's IMMEDIATE transactions serialise writers).
        self.lock_of = lock_of

    def _compiled(self) -> tuple:
        connection = default_connection()
        key = (connection.alias, connection.vendor, self.name)
        if key not in _CACHE:
            queryset = self.build(*self.sentinels)
            compiler = queryset.query.get_compiler(connection=connection)
            sql, params = compiler.as_sql()
            params = list(params)
            if self.lock_of and connection.features.has_select_for_update_of:
                tables = (connection.ops.quote_name(m._meta.db_table) for m in self.lock_of)
                sql += f" FOR UPDATE OF {', '.join(tables)}"
            places = [
                [at for at, param in enumerate(params) if param == sentinel]
                for sentinel in self.sentinels
            ]
            if not all(places):
                raise ValueError(f"{self.name}: a sentinel did not reach the SQL's parameters")
            # The converters results_iter would look up again for every row set (about a
            # tenth of a grade's CPU in the web process: issue 34), found once.
            fields = [selected[0] for selected in compiler.select[: compiler.col_count]]
            if compiler.has_composite_fields(fields):
                raise ValueError(f"{self.name}: composite fields are not supported")
            converters = compiler.get_converters(fields)
            _CACHE[key] = (queryset.model, compiler, sql, params, places, converters)
        return _CACHE[key]

    def rows(self, *values: int | str) -> list[tuple]:
        _, compiler, sql, params, places, converters = self._compiled()
        params = list(params)
        for where, value in zip(places, values, strict=True):
            for place in where:
                params[place] = self.kind(value)
        with prepared_cursor() as cursor:
            cursor.execute(sql, params)
            fetched = cursor.fetchall()
        if converters:
            fetched = compiler.apply_converters(fetched, converters)
        return [tuple(row) for row in fetched]

    def instances(self, *values: int) -> list:
        connection = default_connection()
        model, *_ = self._compiled()
        names = [field.attname for field in model._meta.concrete_fields]
        return [model.from_db(connection.alias, names, row) for row in self.rows(*values)]


@contextmanager
def prepared_cursor() -> Iterator:
    """A cursor whose statements PostgreSQL prepares (plans once per connection) when the
    settings ask for it (DATABASE_PREPARED_STATEMENTS: the connection's prepare_threshold),
    else Django's usual one. Either way Django wraps it (query logging, execute wrappers)."""
    connection = default_connection()
    if (
        connection.vendor != "postgresql"
        or connection.settings_dict["OPTIONS"].get("prepare_threshold") is None
    ):
        with connection.cursor() as cursor:
            yield cursor
        return
    import psycopg  # only where PostgreSQL is the database

    # As Django's cursor() does (BaseDatabaseWrapper._cursor): the request's health check
    # first (CONN_HEALTH_CHECKS: a connection the database dropped, as a restart does, is
    # replaced before it is used; the session's lookup is a request's first statement), then
    # a server-side binding cursor on the connection: psycopg prepares its statements (at the
    # connection's prepare_threshold); Django's _prepare_cursor wraps it as it wraps its own
    # (the public cursor() would make a client-binding one).
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        created = connection._prepare_cursor(psycopg.Cursor(connection.connection))
    with created as cursor:
        yield cursor


class Write(NamedTuple):
    """An INSERT, UPDATE or DELETE (without RETURNING) for :func:`send_together`;
    ``returning``: the SQL expression its first row gives back (1: just count the rows)."""

    sql: str
    params: list
    returning: str = "1"


def send_together(writes: Sequence[Write]) -> list[tuple[int, object]]:
    """Send ``writes`` and give each one's (rows written, its first row's ``returning``).

    On PostgreSQL in one round trip: each write is a part of one data-modifying WITH, all
    run on one snapshot in no set order, so no two may write the same row or read what
    another writes. Elsewhere one by one, in order."""
    connection = default_connection()
    with prepared_cursor() as cursor:
        if connection.vendor == "postgresql":
            parts = ", ".join(
                f"w{i} AS ({w.sql} RETURNING {w.returning} AS v)" for i, w in enumerate(writes)
            )
            outcomes = ", ".join(
                f"(SELECT count(*) FROM w{i}), (SELECT min(v) FROM w{i})"
                for i in range(len(writes))
            )
            cursor.execute(f"WITH {parts} SELECT {outcomes}", [p for w in writes for p in w.params])
            row = cursor.fetchone()
            return [(row[2 * i], row[2 * i + 1]) for i in range(len(writes))]
        outcomes = []
        for write in writes:
            cursor.execute(f"{write.sql} RETURNING {write.returning}", write.params)
            rows = cursor.fetchall()
            outcomes.append((len(rows), rows[0][0] if rows else None))
        return outcomes


def insert_write(instance) -> Write:
    """The INSERT of ``instance`` (a new row; its auto fields' pre_save sets the dates), with
    SQL written once per model and database and its values prepared as the ORM prepares
    them, returning its primary key: hand that to :func:`inserted` once it is sent."""
    connection = default_connection()
    meta = instance._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    key = (connection.alias, connection.vendor, "insert-write", meta.label)
    if key not in _CACHE:
        quote = connection.ops.quote_name
        sql = (
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
            f"VALUES ({', '.join(['%s'] * len(fields))})"
        )
        _CACHE[key] = (sql, quote(meta.pk.column))
    sql, pk = _CACHE[key]
    return Write(sql, values, pk)


def inserted(instance, pk) -> None:
    """``instance`` was stored with primary key ``pk``: set it and send post_save as save()
    would (annotation/signals.py counts grades from it)."""
    connection = default_connection()
    instance.pk = pk
    instance._state.adding, instance._state.db = False, connection.alias
    post_save.send(
        sender=type(instance),
        instance=instance,
        created=True,
        update_fields=None,
        raw=False,
        using=connection.alias,
    )


def update_write(instance, names: tuple[str, ...]) -> Write:
    """The UPDATE of ``names`` of ``instance`` (auto_now fields among them are set now), as
    save(update_fields=names) would; no listener is told (none listens on the grade path)."""
    connection = default_connection()
    meta = instance._meta
    fields = [meta.get_field(name) for name in names]
    values = [f.get_db_prep_save(f.pre_save(instance, False), connection) for f in fields]
    key = (connection.alias, connection.vendor, "update", meta.label, names)
    if key not in _CACHE:
        quote = connection.ops.quote_name
        sql = (
            f"UPDATE {quote(meta.db_table)} SET "
            + ", ".join(f"{quote(f.column)} = %s" for f in fields)
            + f" WHERE {quote(meta.pk.column)} = %s"
        )
        _CACHE[key] = (sql,)
    (sql,) = _CACHE[key]
    return Write(sql, [*values, instance.pk])
