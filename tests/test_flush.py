"""The tests' flush empties PostgreSQL's tables with DELETE instead of TRUNCATE
(tests/conftest.py, _flush_by_delete): it relies on every foreign key being checked at commit."""

import pytest
from django.core.management import call_command
from django.db import connection


@pytest.mark.django_db
def test_every_foreign_key_is_checked_at_commit():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's flush is Django's own DELETE")
    with connection.cursor() as cursor:
        cursor.execute(
            "select conrelid::regclass::text, conname from pg_constraint"
            " where contype = 'f' and not (condeferrable and condeferred)"
        )
        assert cursor.fetchall() == []


@pytest.mark.django_db(transaction=True)
def test_the_flush_empties_tables_that_refer_to_each_other(django_user_model):
    from annotation.models import Campaign

    lead = django_user_model.objects.create_user("flush-lead")
    Campaign.objects.create(name="flushed", lead=lead)
    call_command("flush", interactive=False, verbosity=0)
    assert not Campaign.objects.exists()
    assert not django_user_model.objects.exists()
