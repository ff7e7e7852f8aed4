"""Reading rows for a campaign backup and writing them as JSON: what the sections of
:mod:`annotation.backup.exporting` share (one list item per line, rows in creation order,
times in the format's ISO 8601)."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterable, Iterator
from typing import IO

from django.db import models

from annotation.backup import schema

CHUNK = 2000

dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def write(out: IO[str], key: str, value) -> None:
    out.write(f"{dumps(key)}:{dumps(value)}")


def write_list(out: IO[str], key: str, items: Iterable) -> int:
    out.write(f"{dumps(key)}:[")
    n = 0
    for item in items:
        out.write(",\n" if n else "\n")
        out.write(dumps(item))
        n += 1
    out.write("\n]" if n else "]")
    return n


def json_value(value):
    if isinstance(value, dt.datetime):
        return schema.to_json_time(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def rows(queryset, keys: Iterable[str], lookups: Iterable[str]) -> Iterator[dict]:
    """The queryset's rows in creation order as {key: JSON value}."""
    keys, lookups = tuple(keys), tuple(lookups)
    # Only the model's own times and UUIDs need converting (values across joins are text),
    # so the columns to convert are found once, not tested value by value.
    convert = []
    for index, lookup in enumerate(lookups):
        if "__" not in lookup and lookup != "pk":
            field = queryset.model._meta.get_field(lookup)
            if isinstance(field, models.DateTimeField):
                convert.append((index, schema.to_json_time))
            elif isinstance(field, models.UUIDField):
                convert.append((index, str))
    for row in queryset.order_by("pk").values_list(*lookups).iterator(chunk_size=CHUNK):
        if convert:
            row = list(row)
            for index, function in convert:
                if row[index] is not None:
                    row[index] = function(row[index])
        yield dict(zip(keys, row, strict=True))


def values(queryset, fields: dict[str, str]) -> Iterator[dict]:
    return rows(queryset, fields, fields.values())


def local_ids(queryset) -> dict[int, int]:
    """Database id → file-local id (1, 2, … in creation order) of the queryset's rows."""
    pks = queryset.order_by("pk").values_list("pk", flat=True)
    return {pk: n for n, pk in enumerate(pks.iterator(chunk_size=CHUNK), 1)}


def username(user) -> str | None:
    return None if user is None else user.get_username()
