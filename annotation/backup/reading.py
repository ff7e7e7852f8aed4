"""Reading a backup file: its bytes (plain or gzip, with a size limit that also stops gzip
bombs), then JSON, then the checks of :mod:`annotation.backup.checking`.

JSON is read strictly: UTF-8 only, no NaN or Infinity, and a key given twice in one object is
a problem reported at that object's path (the json module would keep the last silently).
"""

from __future__ import annotations

import json
from typing import Any

from annotation.backup.checking import Backup, BackupError, check_document
from common.json_keys import repeated_keys
from evaluation.trec import TrecFormatError
from evaluation.trec.source import display_name, read_bytes


def read_backup(source, *, name: str | None = None, max_bytes: int | None = None) -> Backup:
    """Read and check a whole backup; raises :class:`BackupError` naming every problem."""
    name = display_name(source, name)
    try:
        data = read_bytes(source, name=name, max_bytes=max_bytes)
    except TrecFormatError as error:  # not gzip, truncated, too large: the file as a whole
        raise BackupError(name, [e.message for e in error.errors]) from None
    return parse_backup(data, name=name)


class _Constant(Exception):
    pass


def _no_constant(text: str):
    raise _Constant(text)


class _Object(dict):
    """A JSON object that had some key more than once (the last value is kept)."""

    duplicates: tuple[str, ...] = ()


def _json_object(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        result = _Object(result)
        result.duplicates = tuple(sorted(repeated_keys(pairs)))
    return result


def parse_backup(data: bytes, *, name: str = "<upload>") -> Backup:
    """Check a backup document given as (decompressed) bytes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BackupError(name, [f"not UTF-8 text (byte {error.start})"]) from None
    try:
        document = json.loads(text, object_pairs_hook=_json_object, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise BackupError(
            name, [f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"]
        ) from None
    except _Constant as constant:
        raise BackupError(name, [f"not valid JSON: {constant} is not a JSON number"]) from None
    except RecursionError:
        raise BackupError(name, ["not valid JSON: nested too deeply"]) from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise BackupError(name, [f"not valid JSON: {error}"]) from None
    return check_document(document, name=name)
