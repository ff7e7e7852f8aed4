"""common/ids.py: ids and small integers from query strings and forms."""

import pytest

from common.ids import MAX_ID, parse_id, parse_small_int


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


def test_no_app_code_reads_numbers_with_str_isdigit():
    """str.isdigit() takes "²" and "١", which int() refuses or reads: ids and counts from
    outside go through this module, and other numbers through ASCII patterns. A new
    .isdigit() in the app is how the 500s fixed in common/ids.py came back once."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = []
    for app in ("accounts", "annotation", "common", "config", "evaluation", "jobs"):
        for path in (root / app).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("isdigit", "isnumeric", "isdecimal")
                ):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == []
