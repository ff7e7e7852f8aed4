"""Writing a backup's rows, and what every part of the restore shares.

Rows are written with statements built from the models' metadata (:func:`_insert`), every
column given, in the file's order. Two reasons not to use
``bulk_create``: it sets ``auto_now_add`` and ``auto_now`` fields to the present, so every
creation time would need a second UPDATE per row; and for a campaign of 100,000 assignments
(some 400,000 rows with judgments and history) the ORM's per-object work alone takes about a
minute on this machine, against a few seconds for the statements. Ids are assigned in
insertion order, so the rows keep the relative order they had, and every ordering that
breaks ties by id (a judge's topics, the history) is as it was.
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from django.conf import settings
from django.db import connection, models

from annotation.backup.checking import Backup

# Parameters per INSERT: under SQLite's limit of 32,766 variables.
MAX_PARAMETERS = 30_000
MAX_ROWS = 1000


def _batches(items: Sequence, size: int) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _sqlite_datetime(value: dt.datetime) -> str:
    """What SQLite's adapt_datetimefield_value makes of an aware datetime under USE_TZ (the
    naive UTC time as text), without its per-call checks: a backup has millions."""
    if value.utcoffset():
        value = value.astimezone(dt.UTC)
    return str(value.replace(tzinfo=None))


def _adapter(field: models.Field) -> Callable[[Any], Any] | None:
    """How a value becomes a query parameter; None: as it is (text, numbers, ids)."""
    if isinstance(field, models.DateTimeField):
        # What DateTimeField.get_db_prep_value does for an aware datetime, minus the checks
        # the reader already made.
        if connection.vendor == "sqlite" and settings.USE_TZ:
            return _sqlite_datetime
        return connection.ops.adapt_datetimefield_value
    if isinstance(field, models.UUIDField | models.JSONField):
        return lambda value: field.get_db_prep_save(value, connection)
    return None


def _insert(
    model: type[models.Model], rows: Sequence[dict[str, Any]], *, ids: bool = True
) -> list[int]:
    """Insert rows given as {attname: value} for every concrete field but the id, in order;
    return their new ids in the same order (``ids=False``: nothing, for the tables whose
    ids nothing refers to). A field missing from a row is a KeyError, so a model that gains
    a field fails here until the backup carries it.

    PostgreSQL: COPY (psycopg's parsing of one huge parameterised INSERT costs more than the
    database's work), with ids drawn from the table's sequence first when they are wanted,
    else left to the column's default (each nextval() in the server, in the rows' order:
    drawing 600,000 ids to the client took seconds). SQLite: multi-row ``INSERT …
    RETURNING``. Either way ids grow in the rows' order.
    """
    if not rows:
        return []
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    names = [f.attname for f in fields]
    adapters = [_adapter(f) for f in fields]

    # Per row (millions in a large backup): one itemgetter call, then only the columns
    # that need adapting.
    getter = operator.itemgetter(*names)
    adapted = [(i, adapt) for i, adapt in enumerate(adapters) if adapt is not None]

    def values(row: dict[str, Any]) -> list[Any]:
        found = getter(row)
        out = list(found) if len(names) > 1 else [found]
        for i, adapt in adapted:
            if out[i] is not None:
                out[i] = adapt(out[i])
        return out

    quote = connection.ops.quote_name
    table, pk = model._meta.db_table, model._meta.pk.column
    columns = ", ".join(quote(f.column) for f in fields)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and not ids:
            with cursor.cursor.copy(f"COPY {quote(table)} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(values(row))
            return []
        if connection.vendor == "postgresql":
            drawn = _draw_ids(cursor, table, pk, len(rows))
            copy_sql = f"COPY {quote(table)} ({quote(pk)}, {columns}) FROM STDIN"
            with cursor.cursor.copy(copy_sql) as copy:
                for pk_value, row in zip(drawn, rows, strict=True):
                    copy.write_row([pk_value, *values(row)])
            return list(drawn)
        new_ids = []
        head = f"INSERT INTO {quote(table)} ({columns}) VALUES "
        one = "(" + ", ".join(["%s"] * len(fields)) + ")"
        tail = f" RETURNING {quote(pk)}"
        for batch in _batches(rows, max(1, min(MAX_ROWS, MAX_PARAMETERS // len(fields)))):
            params = [value for row in batch for value in values(row)]
            cursor.execute(head + ", ".join([one] * len(batch)) + tail, params)
            # Ids are handed out in the order the rows are inserted, whatever order
            # RETURNING lists them in.
            new_ids.extend(sorted(row[0] for row in cursor.fetchall()))
        return new_ids


def _draw_ids(cursor, table: str, pk: str, n: int) -> Sequence[int]:
    """``n`` new ids from the table's sequence, ascending. Drawn in the server; when they
    came out contiguous (nobody else drew one meanwhile: the usual case) only their range
    crosses to the client, else every id."""
    cursor.execute(
        "WITH drawn AS (SELECT nextval(pg_get_serial_sequence(%s, %s)) AS id "
        "FROM generate_series(1, %s)) "
        "SELECT min(id), max(id), CASE WHEN max(id) - min(id) + 1 = %s THEN NULL "
        "ELSE array_agg(id ORDER BY id) END FROM drawn",
        [table, pk, n, n],
    )
    low, high, every = cursor.fetchone()
    return range(low, high + 1) if every is None else every


def _analyze(models_: Sequence[type[models.Model]]) -> None:
    """PostgreSQL: refresh the planner's statistics of the tables a large backup filled (the
    rows of this transaction count), so the lead's pages are planned for the campaign's
    size from the first request, not once autovacuum gets to them. A second or two."""
    if connection.vendor != "postgresql":
        return
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + ", ".join(quote(m._meta.db_table) for m in models_))


def _fields(row: dict, keys: dict[str, str]) -> dict[str, Any]:
    return {name: row[key] for key, name in keys.items()}


class RestoreBase:
    """The backup being restored, the ids of the users it names, and inserting rows with
    their new ids."""

    def __init__(self, backup: Backup):
        self.backup = backup
        self.users: dict[str, int] = {}

    def user(self, username: str | None) -> int | None:
        return None if username is None else self.users[username]

    @staticmethod
    def insert(model, rows: list[dict], values, key) -> dict:
        """Insert the rows' ``values``; return {``key`` of a row: its new id}."""
        ids = _insert(model, [values(r) for r in rows])
        return {key(r): pk for r, pk in zip(rows, ids, strict=True)}
