"""Tests for evaluation.trec.fields: trec_eval's preference, qrels_prefs, qrels_jg and z-score
files, read with the run and qrels readers' rules (errors with file and line, all-or-nothing),
and the vectorised reader against the line-by-line reference checker on hostile input."""

import gzip
import math
import struct

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.trec import (
    TrecFormatError,
    read_prefs,
    read_qrels_jg,
    read_qrels_prefs,
    read_zscores,
)
from evaluation.trec.errors import ErrorLog
from evaluation.trec.fields import (
    PREFS,
    QRELS_JG,
    ZSCORES,
    check_line,
    duplicate_message,
    read_fields,
)
from evaluation.trec.source import split_lines


def errors(reader, data: bytes, **kwargs) -> list[str]:
    with pytest.raises(TrecFormatError) as caught:
        reader(data, name="f.txt", **kwargs)
    return [str(error) for error in caught.value.errors]


def test_prefs_file_reads_into_typed_columns_in_file_order():
    data = b"# judged by two users\nq1 u1 s1 d2 3\nq1\tu1  s1 d1 0\r\n\nq1 u2 a d1 2.5\n"
    frame = read_prefs(data)
    assert frame.schema == {
        "qid": pl.String,
        "jg": pl.String,
        "jsg": pl.String,
        "docno": pl.String,
        "level": pl.Float64,
    }
    assert frame.rows() == [
        ("q1", "u1", "s1", "d2", 3.0),
        ("q1", "u1", "s1", "d1", 0.0),
        ("q1", "u2", "a", "d1", 2.5),
    ]


def test_qrels_prefs_reads_the_iteration_as_judgment_group_and_the_grade_as_a_level():
    frame = read_qrels_prefs(b"301 0 D1 2\n301 0 D2 0\n")
    assert frame.rows() == [("301", "0", "D1", 2.0), ("301", "0", "D2", 0.0)]


def test_qrels_jg_allows_a_document_once_per_judgment_group():
    frame = read_qrels_jg(b"301 a D1 2\n301 b D1 0\n")
    assert frame.rows() == [("301", "a", "D1", 2), ("301", "b", "D1", 0)]
    assert errors(read_qrels_jg, b"301 a D1 2\n301 a D1 0\n") == [
        "f.txt:2: docno 'D1' already appears for topic '301', judgment group 'a' on line 1"
    ]


def test_zscores_and_gzip():
    frame = read_zscores(gzip.compress(b"301 P_10 0.25 0.1\n301 map .3 0\n"))
    assert frame.rows() == [("301", "P_10", 0.25, 0.1), ("301", "map", 0.3, 0.0)]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"q u s d\n", ["f.txt:1: expected 5 fields (qid jg jsg docno level), found 4"]),
        (b"q u s d 1 x\n", ["f.txt:1: expected 5 fields (qid jg jsg docno level), found 6"]),
        (b"q u s d 2.5abc\n", ["f.txt:1: level '2.5abc' is not a number"]),
        (b"q u s d nan\n", ["f.txt:1: level 'nan' is not finite"]),
        (b"q u s d 1e999\n", ["f.txt:1: level '1e999' is not finite"]),
        (b"q u s d\xff 1\n", ["f.txt:1: line is not valid UTF-8"]),
        (b"q u s d\x00 1\n", ["f.txt:1: line contains a NUL byte"]),
        (b"q u s " + b"d" * 70000 + b" 1\n", ["f.txt:1: line is longer than 65536 bytes"]),
        (
            b"q u s d 1\nq u s d 2\n",
            [
                "f.txt:2: docno 'd' already appears for topic 'q', judgment group 'u', "
                "subgroup 's' on line 1"
            ],
        ),
        (b"", ["f.txt:0: file has no prefs lines"]),
        (b"# only a comment\n\n", ["f.txt:0: file has no prefs lines"]),
    ],
)
def test_prefs_errors(data, expected):
    assert errors(read_prefs, data) == expected


def test_every_error_is_listed_and_the_count_kept_beyond_the_cap():
    data = b"".join(b"q u s d%d x\n" % i for i in range(30))
    with pytest.raises(TrecFormatError) as caught:
        read_prefs(data, name="f.txt", max_errors=3)
    assert caught.value.total == 30
    assert [e.line for e in caught.value.errors] == [1, 2, 3]
    assert str(caught.value).endswith("... and 27 more errors")


def test_a_zscore_file_may_hold_nan_and_inf_as_printf_writes_them():
    # trec_eval 9.0.8's own test/zscores_file holds "   nan" for set_F's mean and stddev.
    frame = read_zscores(
        b"301 set_F nan nan\n301 P_10 -NaN 0.1\n302 map 0.2 INF\n302 P_5 1 -Infinity\n"
    )
    mean, stddev = frame.get_column("mean").to_list(), frame.get_column("stddev").to_list()
    assert [math.isnan(v) for v in mean] == [True, True, False, False]
    assert [math.copysign(1, v) for v in mean[:2]] == [1, -1]
    assert stddev[2:] == [math.inf, -math.inf]
    assert errors(read_zscores, b"1 map +-nan 0.1\n1 P_5 nan(1) 0\n1 P_10 0.1 infinite\n") == [
        "f.txt:1: mean '+-nan' is not finite",
        "f.txt:2: mean 'nan(1)' is not a number",
        "f.txt:3: stddev 'infinite' is not a number",
    ]
    # Preferences stay finite: a level of nan is refused (test_prefs_errors).


def test_zscore_file_refuses_a_repeated_topic_and_measure():
    assert errors(read_zscores, b"1 map 0.2 0.1\n1 map 0.3 0.1\n") == [
        "f.txt:2: measure 'map' already appears for topic '1' on line 1"
    ]


def test_qrels_jg_grade_must_be_an_integer():
    assert errors(read_qrels_jg, b"1 0 d 1.5\n") == ["f.txt:1: grade '1.5' is not an integer"]


# --- the vectorised reader against the reference checker ---------------------------------------


def reference(fmt, data: bytes, max_errors: int = 50):
    """What read_fields must give, from check_line line by line."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    log = ErrorLog("f", max_errors)
    seen: dict[tuple, int] = {}
    rows, content = [], 0
    for number, raw in split_lines([data], max_line_bytes=None):
        checked = check_line(fmt, raw)
        if checked is None:
            continue
        content += 1
        for problem in checked.problems:
            log.add(number, problem)
        if checked.key is None:
            continue
        if checked.key in seen:
            log.add(number, duplicate_message(fmt, checked.key, seen[checked.key]))
            continue
        seen[checked.key] = number
        if checked.values is not None:
            rows.append(checked.values)
    if content == 0:
        log.fail(f"file has no {fmt.kind} lines")
    return rows, log


FIELD = st.sampled_from(
    [
        "q",
        "u",
        "s",
        "d",
        "#c",
        "0",
        "1",
        "-2.5",
        "x",
        "1e5",
        "+.5",
        "nan",
        "-NaN",
        "Infinity",
        "+-inf",
    ]
)
SEPARATOR = st.sampled_from([" ", "  ", "\t", " \t ", "\x0b"])


@st.composite
def hostile_lines(draw):
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        fields = draw(st.lists(FIELD, min_size=0, max_size=6))
        line = draw(st.sampled_from(["", " "])) + draw(SEPARATOR).join(fields)
        line += draw(st.sampled_from(["", " ", "\r", "\xa0"]))
        raw = line.encode()
        if draw(st.integers(0, 9)) == 0:
            raw += draw(st.sampled_from([b"\xff", b"\x00", b"\xef\xbf\xbd"]))
        lines.append(raw)
    return b"\n".join(lines) + draw(st.sampled_from([b"", b"\n"]))


@pytest.mark.parametrize("fmt", [PREFS, QRELS_JG, ZSCORES], ids=lambda f: f.usage)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hostile_lines())
def test_vectorised_reader_agrees_with_the_reference_checker(fmt, data):
    rows, log = reference(fmt, data)
    if log.total:
        with pytest.raises(TrecFormatError) as caught:
            read_fields(fmt, data, name="f")
        assert (caught.value.errors, caught.value.total) == (log.errors, log.total)
    else:
        assert exact(read_fields(fmt, data, name="f").rows()) == exact(rows)


def exact(rows: list[tuple]) -> list[tuple]:
    """Rows with each float as its bits, so that NaNs compare (and their signs count)."""
    return [
        tuple(struct.pack("<d", value) if isinstance(value, float) else value for value in row)
        for row in rows
    ]
