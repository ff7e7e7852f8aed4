"""How many rows every model has, in one query: what a test compares before and after an
action that must store nothing (a refused file, a retried request, a hostile input)."""

import functools

from django.apps import apps
from django.db import connection
from django.db.models import Value


def row_counts(*, leave_out=()) -> dict[str, int]:
    """``{model label: model.objects.count()}`` for every installed model but ``leave_out``.

    One statement, ``SELECT (SELECT COUNT(*) FROM (...)), ...``, of the same queries
    ``objects.count()`` would send one by one (each model's own manager and its filters),
    written once per database: tests that count 57 models before and after each case spent
    more time in the ORM's per-query work than in what they test."""
    labels, sql, params = _statement(connection.alias, frozenset(leave_out))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return dict(zip(labels, cursor.fetchone(), strict=True))


@functools.cache
def _statement(alias: str, leave_out: frozenset) -> tuple[list[str], str, list]:
    models = [model for model in apps.get_models() if model not in leave_out]
    parts, params = [], []
    for model in models:
        query = model.objects.order_by().values_list(Value(1)).query
        sql, part_params = query.get_compiler(using=alias).as_sql()
        parts.append(f"(SELECT COUNT(*) FROM ({sql}) counted)")
        params.extend(part_params)
    return [model._meta.label for model in models], "SELECT " + ", ".join(parts), params
