"""common/json_keys.py: a JSON object that gives a key twice is refused, naming the key."""

import json

import pytest

from common.json_keys import (
    RepeatedKeys,
    collect_repeats,
    describe_repeats,
    repeated_keys,
    unique_keys,
)


def test_repeated_keys_are_named_once_in_the_order_they_repeat():
    pairs = [("a", 1), ("b", 2), ("b", 3), ("a", 4), ("b", 5), ("c", 6)]

    assert repeated_keys(pairs) == ["b", "a"]
    assert repeated_keys([("a", 1), ("b", 2)]) == []


def test_the_message_names_the_keys_and_cuts_long_ones():
    assert describe_repeats(["qid"]) == "duplicate key 'qid' (a key may appear once per object)"
    assert describe_repeats(["text", "url", "text"]) == (
        "duplicate keys 'text', 'url' (a key may appear once per object)"
    )
    assert f"'{'k' * 57}...'" in describe_repeats(["k" * 500])


def test_unique_keys_refuses_the_first_object_that_repeats_a_key():
    assert json.loads('{"a": {"b": 1}, "c": 2}', object_pairs_hook=unique_keys) == {
        "a": {"b": 1},
        "c": 2,
    }
    with pytest.raises(RepeatedKeys) as refused:
        json.loads('{"outer": {"name": "a", "name": "b"}}', object_pairs_hook=unique_keys)

    assert refused.value.keys == ["name"]
    assert str(refused.value) == "duplicate key 'name' (a key may appear once per object)"


def test_collect_repeats_reads_on_and_gathers_every_objects_repeats():
    found = []

    value = json.loads(
        '{"a": 1, "a": 2, "x": {"b": 1, "b": 2}}', object_pairs_hook=collect_repeats(found)
    )

    assert value == {"a": 2, "x": {"b": 2}}
    assert sorted(found) == ["a", "b"]
