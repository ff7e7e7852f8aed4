"""config/ids.py: ids and small integers from query strings and forms."""

import pytest

from config.ids import MAX_ID, parse_id, parse_small_int


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("1", 1),
        ("42", 42),
        (str(MAX_ID), MAX_ID),
        (str(MAX_ID + 1), None),  # past SQLite's integers
        ("99999999999999999999999", None),
        ("0", None),
        ("²", None),  # str.isdigit() says yes; int() says no
        ("١٢", None),  # Arabic-Indic digits: int() reads them, ids are ASCII
        ("-1", None),
        (" 1", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_id_reads_only_ascii_ids_a_database_can_hold(raw, value):
    assert parse_id(raw) == value


@pytest.mark.parametrize(
    ("raw", "value"), [("2", 2), ("-3", -3), ("0", 0), ("²", None), ("1.5", None), ("", None)]
)
def test_parse_small_int(raw, value):
    assert parse_small_int(raw) == value
