"""common/text_limits.py: the one home of the caps on free text and their messages."""

from common import text_limits
from common.text_limits import length_errors, too_long


def test_too_long_names_the_field_and_the_limit_for_a_file_line():
    assert too_long("query", "q" * 10, 10) is None
    assert too_long("query", "q" * 11, 10) == "query is longer than 10 characters"
    assert too_long("narrative", "n" * 20_001, 20_000) == (
        "narrative is longer than 20,000 characters"
    )


def test_length_errors_keys_each_text_over_its_cap_by_field():
    errors = length_errors(
        name=("n" * 200, 200),
        description=("d" * 9_437_184, text_limits.DESCRIPTION),
        guidelines=(None, 5),  # not given
        note=("x" * 6, 5),
    )

    assert errors == {
        "description": "Keep this to 10,000 characters; it has 9,437,184.",
        "note": "Keep this to 5 characters; it has 6.",
    }
    assert length_errors() == {}
