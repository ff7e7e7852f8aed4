"""Run pieces read by runscan.c, where it is built: the fast way into canonical's path 1.

    frame = scan_run(data, start, end, ("qid", "docno", "score", "tag"), MAX_LINE_BYTES)
    # the piece's frame, or None: then polars' CSV reader and the checks read it (canonical)

runscan.c reads only lines in the usual layout (six fields of printable ASCII, single spaces,
"\\n" line ends, an integer rank, a score in the grammar) and declines anything else, so what it
accepts it reads exactly as the rest of the reader does (tests/evaluation/test_native_scan.py
checks this against the line-by-line path on generated pieces). It reads a memory map or
bytes in place (no copy of the piece), checks as it goes, and its columns come to polars
through Arrow's C data interface without a copy; ctypes lets go of the interpreter lock
while it runs, so two workers read two pieces at once.

``scripts/setup`` builds it (``cc -O2 -shared``) beside this file as _runscan.so when that is
missing or older than the source; the Dockerfile does the same. Without it (no C compiler)
``available()`` is False and polars reads every piece, with the same results.
QRELSMITH_NATIVE=0 turns it off (the tests compare both).
Pure: no Django.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np
import polars as pl

__all__ = ["COLUMNS", "LIBRARY", "VERSION", "available", "scan_run"]

LIBRARY = Path(__file__).with_name("_runscan.so")
VERSION = 1  # QS_VERSION in runscan.c: a library built from other source is not used
COLUMNS = ("qid", "docno", "rank", "score", "tag")  # runscan.c's column numbers


class _ArrowSchema(ctypes.Structure):
    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_char_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


class _ArrowArray(ctypes.Structure):
    _fields_ = [
        ("length", ctypes.c_int64),
        ("null_count", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("n_buffers", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("buffers", ctypes.c_void_p),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


_Arrays = _ArrowArray * len(COLUMNS)
_Schemas = _ArrowSchema * len(COLUMNS)
_ARRAY_CAPSULE, _SCHEMA_CAPSULE = b"arrow_array", b"arrow_schema"
_capsule = ctypes.pythonapi.PyCapsule_New
_capsule.restype = ctypes.py_object
_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def _load():
    if os.environ.get("QRELSMITH_NATIVE", "1") == "0" or not LIBRARY.exists():
        return None
    try:
        library = ctypes.CDLL(str(LIBRARY))
    except OSError:
        return None
    if library.qs_version() != VERSION:
        return None  # built from other source: setup builds it again
    library.qs_scan_run.restype = ctypes.c_int64
    library.qs_scan_run.argtypes = [
        ctypes.c_void_p,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.c_int,
        ctypes.POINTER(_ArrowArray),
        ctypes.POINTER(_ArrowSchema),
        ctypes.POINTER(ctypes.c_int64),
        ctypes.POINTER(ctypes.c_int64),
    ]
    library.qs_release.restype = None
    library.qs_release.argtypes = [ctypes.POINTER(_ArrowArray), ctypes.c_int]
    return library


_LIBRARY = _load()


def available() -> bool:
    """Whether runscan.c is built (and not turned off): scan_run then reads pieces."""
    return _LIBRARY is not None


class _Exported:
    """One column as the Arrow PyCapsule interface hands it to polars."""

    def __init__(self, array: _ArrowArray, schema: _ArrowSchema) -> None:
        self.array, self.schema = array, schema

    def __arrow_c_array__(self, requested_schema=None):
        return (
            _capsule(ctypes.addressof(self.schema), _SCHEMA_CAPSULE, None),
            _capsule(ctypes.addressof(self.array), _ARRAY_CAPSULE, None),
        )


def scan_run(
    data, start: int, end: int, columns: tuple[str, ...], max_line: int
) -> pl.DataFrame | None:
    """The frame (``columns``, of COLUMNS) of the run lines in ``data[start:end]`` (bytes or
    a memory map; whole lines), or None when runscan.c declines them or is not built (or
    ``columns`` lacks qid, which gives the frame its height)."""
    if _LIBRARY is None or start >= end or "qid" not in columns:
        return None
    view = np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start)
    numbers = {name: COLUMNS.index(name) for name in columns}
    mask = sum(1 << number for number in numbers.values())
    arrays, schemas = _Arrays(), _Schemas()
    tag_start, tag_length = ctypes.c_int64(), ctypes.c_int64()
    rows = _LIBRARY.qs_scan_run(
        view.ctypes.data,
        end - start,
        max_line,
        mask,
        arrays,
        schemas,
        ctypes.byref(tag_start),
        ctypes.byref(tag_length),
    )
    if rows < 0:
        return None
    try:
        frame = pl.DataFrame(
            [
                pl.Series(_Exported(arrays[number], schemas[number])).alias(name)
                for name, number in numbers.items()
                if arrays[number].release  # the tag is not, when it is one value (below)
            ]
        )
    finally:
        _LIBRARY.qs_release(arrays, len(COLUMNS))
    if "tag" in columns and "tag" not in frame.columns:
        # The same tag on every line: one value, as canonical's _constants_folded keeps it.
        first = start + tag_start.value
        tag = bytes(data[first : first + tag_length.value]).decode()
        frame = frame.with_columns(pl.lit(tag, dtype=pl.String).alias("tag")).select(columns)
    return frame
