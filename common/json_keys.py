"""JSON objects that give a key twice, refused wherever JSON comes in: API bodies
(config/json_bodies.py), JSONL uploads (annotation/formats, evaluation/trec/leaderboards.py)
and campaign backups (annotation/backup/reading.py).

The json module keeps a repeated key's last value without a word, so ``{"name": "a", "name":
"b"}`` would be read as "b" and ``{"qid": "1", "qid": "2"}`` as topic 2: what the sender meant
cannot be known, so it is an error that names the key. Pure (no Django): the file readers use
it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["RepeatedKeys", "collect_repeats", "describe_repeats", "repeated_keys", "unique_keys"]

MESSAGE = "duplicate key{s} {names} (a key may appear once per object)"
_SHOWN = 60  # characters of a key quoted in a message, as evaluation.trec.errors.show


def repeated_keys(pairs: Iterable[tuple[str, object]]) -> list[str]:
    """The keys that appear more than once among ``pairs``, each once, in the order of their
    second appearance."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for key, _ in pairs:
        if key in seen:
            repeated[key] = None
        seen.add(key)
    return list(repeated)


def describe_repeats(keys: Iterable[str]) -> str:
    """``duplicate key 'qid' (a key may appear once per object)``, or ``duplicate keys 'text',
    'url' (...)``; long keys are cut."""
    names = list(dict.fromkeys(keys))
    quoted = ", ".join(
        repr(key if len(key) <= _SHOWN else key[: _SHOWN - 3] + "...") for key in names
    )
    return MESSAGE.format(s="s" if len(names) > 1 else "", names=quoted)


class RepeatedKeys(ValueError):
    """A JSON object gave ``keys`` more than once; ``str()`` is describe_repeats'."""

    def __init__(self, keys: list[str]):
        super().__init__(describe_repeats(keys))
        self.keys = keys


def unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A ``json.loads`` object_pairs_hook: the object, or RepeatedKeys at the first object
    that repeats a key."""
    result = dict(pairs)
    if len(result) != len(pairs):
        raise RepeatedKeys(repeated_keys(pairs))
    return result


def collect_repeats(found: list[str]) -> Callable[[list[tuple[str, object]]], dict]:
    """An object_pairs_hook that reads every object and adds the keys each repeats to
    ``found`` (to name all of them at once, as a line of a JSONL file is reported)."""

    def hook(pairs: list[tuple[str, object]]) -> dict:
        result = dict(pairs)
        if len(result) != len(pairs):
            found.extend(repeated_keys(pairs))
        return result

    return hook
