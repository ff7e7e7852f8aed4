"""config/json_bodies.py: the API's JSON bodies are bounded in depth and size."""

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import ParseError

from accounts.permissions import PayloadTooLarge
from config.json_bodies import MAX_DEPTH, BoundedJSONParser, nesting_depth


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ('"[[[["', 0),  # brackets inside a string nest nothing
        ('{"a": [1, {"b": "]]"}]}', 3),
        ('["\\"[", [[]]]', 3),  # an escaped quote does not end the string
        ("[" + "[], " * 50 + "{}]", 2),
        ("[" * 200 + "]" * 200, 200),
    ],
)
def test_nesting_depth_counts_arrays_and_objects_outside_strings(text, depth):
    assert nesting_depth(text) == depth == max_depth_by_decoding(text)


def test_nesting_depth_stops_counting_past_the_limit_and_never_recurses():
    assert nesting_depth("[" * 5000 + "]" * 5000) == 5000
    assert nesting_depth("[" * 5000, stop_above=32) == 33


def max_depth_by_decoding(text: str) -> int:
    def depth(value) -> int:
        if isinstance(value, list):
            return 1 + max(map(depth, value), default=0)
        if isinstance(value, dict):
            return 1 + max(map(depth, value.values()), default=0)
        return 0

    return depth(json.loads(text))


def parse(raw: bytes):
    return BoundedJSONParser().parse(io.BytesIO(raw), "application/json", {})


def test_a_body_at_the_depth_limit_is_parsed_and_one_deeper_is_refused():
    assert parse(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None
    with pytest.raises(ParseError, match=f"deeper than {MAX_DEPTH} levels"):
        parse(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))


def test_a_body_over_the_size_limit_is_a_413(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    assert parse(b'{"a": "' + b"x" * 90 + b'"}') == {"a": "x" * 90}
    with pytest.raises(PayloadTooLarge, match="limit of 100 bytes"):
        parse(b'{"a": "' + b"x" * 100 + b'"}')


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b'{"a": \xff}', "not utf-8 text [(]byte 6[)]"),
        (b'{"a": NaN}', "Out of range float values"),
        (b'{"a": ', "Expecting value"),
    ],
)
def test_a_malformed_body_is_a_parse_error_with_its_reason(raw, words):
    with pytest.raises(ParseError, match=words):
        parse(raw)


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        (b'{"name": "a", "name": "b"}', "name"),
        (b'{"scale": [{"grade": 0, "grade": 1}]}', "grade"),
        (b'[{"pairs": []}, {"x": 1, "x": 1}]', "x"),
    ],
)
def test_a_key_given_twice_is_a_400_naming_it(raw, key):
    with pytest.raises(ParseError) as refused:
        parse(raw)

    assert str(refused.value.detail) == (
        f"JSON parse error - duplicate key '{key}' (a key may appear once per object)."
    )


def test_the_same_key_in_different_objects_is_no_repeat():
    assert parse(b'[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]


def nesting_depth_by_walking(text: str) -> int:
    """The count restated one character at a time (strings skipped, escapes inside them, an
    unclosed string running to the end, a closing bracket never below 0)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='[]{}"\\ax,:', max_size=60))
def test_nesting_depth_is_the_walk_for_any_text_malformed_or_not(text):
    assert nesting_depth(text) == nesting_depth_by_walking(text)


def test_unclosed_strings_are_scanned_once():
    # Issue 27: each quote of this began a scan to the end (40 KB took 10 s; this, hours).
    text = '"' + '\\"' * 2_000_000
    assert nesting_depth(text) == 0
    assert nesting_depth("[" + text) == 1
