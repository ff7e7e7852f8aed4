"""runscan.c (evaluation.trec.native): run pieces in the usual layout read in C, exactly as the
reference parser reads them, and everything else declined to polars' path.

test_trec_paths.check_agreement also runs every hostile and valid file through path 1 with
and without it. Here: that it is built, what it accepts (generated canonical runs, read
directly, compared with the line-by-line reference to the bit), each thing it declines, and
the columns it hands back.
"""

import mmap
import os

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from evaluation.trec import grammar, iter_run, native, read_run
from evaluation.trec.source import MAX_LINE_BYTES

ALL = native.COLUMNS
pytestmark = pytest.mark.skipif(
    os.environ.get("QRELSMITH_NATIVE") == "0", reason="runscan.c turned off (QRELSMITH_NATIVE=0)"
)


def scan(data: bytes, columns=ALL, start=0, end=None, max_line=MAX_LINE_BYTES):
    return native.scan_run(data, start, len(data) if end is None else end, columns, max_line)


def reference(data: bytes) -> pl.DataFrame:
    records = list(iter_run(data, name="f"))
    return pl.DataFrame(
        [r[: len(grammar.RUN.schema)] for r in records], schema=grammar.RUN.schema, orient="row"
    )


def assert_same(frame: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert_frame_equal(frame, expected)
    # assert_frame_equal takes -0.0 for 0.0: the scores' bits too.
    assert frame["score"].to_numpy().tobytes() == expected["score"].to_numpy().tobytes()


def test_it_is_built():
    # `make test` runs scripts/setup, which builds it: without it every run is read by polars,
    # correctly but slower, and these tests would prove nothing.
    assert native.available(), f"{native.LIBRARY} is missing: run scripts/setup (needs cc)"


printable = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=30
).filter(lambda field: not field.startswith("#"))
ranks = st.integers(-(10**18) + 1, 10**18 - 1).map(str) | st.sampled_from(["+1", "007", "-0"])
scores = (
    st.floats(allow_nan=False, allow_infinity=False).map(repr)
    | st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: f"{x:.6f}")
    | st.from_regex(
        r"\A[+-]?(?:[0-9]{1,25}\.?[0-9]{0,25}|\.[0-9]{1,25})(?:[eE][+-]?[0-9]{1,3})?\Z"
    ).filter(lambda text: np.isfinite(float(text)))
)


@st.composite
def canonical_runs(draw) -> bytes:
    lines, seen = [], set()
    tag = draw(printable)
    for _ in range(draw(st.integers(1, 20))):
        qid, docno = draw(printable), draw(printable)
        if (qid, docno) in seen:
            continue
        seen.add((qid, docno))
        line_tag = tag if draw(st.booleans()) else draw(printable)
        fields = [qid, draw(printable), docno, draw(ranks), draw(scores), line_tag]
        lines.append(" ".join(fields))
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


@settings(max_examples=300, deadline=None)
@given(canonical_runs(), st.sampled_from([ALL, ("qid", "docno", "score", "tag"), ("qid",)]))
def test_runs_in_the_usual_layout_read_as_the_reference_reads_them(data, columns):
    frame = scan(data, columns)
    assert frame is not None, f"runscan.c declined {data!r}"
    expected = reference(data)
    if "score" in columns:
        assert_same(frame, expected.select(columns))
    else:
        assert_frame_equal(frame, expected.select(columns))
    # And the whole reader, which takes it for path 1, says the same.
    assert_same(read_run(data, name="f"), expected)


@pytest.mark.parametrize(
    "score",
    [
        "0.12345678901234567",  # 17 digits: past 2^53, strtod
        "12345678901234567890123",  # past 19 digits
        "1e22",
        "1e23",  # past the exact powers of ten
        "2.2250738585072011e-308",  # a subnormal's neighbourhood
        "4.9e-324",
        "1e-400",  # reads as 0.0, as Python's float() and trec_eval's atof read it
        "-0",
        "-.0e5",
        "+.5",
        "5.",
        "9007199254740993",  # 2^53 + 1: rounds to even
        "0.1000000000000000055511151231257827",
    ],
)
def test_scores_are_the_nearest_double(score):
    data = f"1 Q0 d 1 {score} t\n".encode()
    frame = scan(data)
    assert frame is not None
    assert frame["score"].to_numpy().tobytes() == np.float64(float(score)).tobytes()


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"1 Q0 d 1 1.0 t\n\n",  # a blank line
        b"# comment\n1 Q0 d 1 1.0 t\n",
        b"#1 Q0 d 1 1.0 t\n",  # a comment that looks like a line
        b"1 Q0 d 1 1.0 t\r\n",  # CRLF
        b"1\tQ0\td\t1\t1.0\tt\n",  # tabs
        b"1  Q0 d 1 1.0 t\n",  # runs of spaces
        b" 1 Q0 d 1 1.0 t\n",  # leading space
        b"1 Q0 d 1 1.0 t \n",  # trailing space
        b"1 Q0 d 1 1.0 t x\n",  # an extra field: the reader's notice
        b"1 Q0 d 1 1.0\n",  # five fields
        b"1 Q0 d r1 1.0 t\n",  # a rank that is not an integer: a notice
        b"1 Q0 d 1234567890123456789 1.0 t\n",  # 19 digits: maybe out of range
        b"1 Q0 d 1 1.0x t\n",  # not a number
        b"1 Q0 d 1 nan t\n",
        b"1 Q0 d 1 inf t\n",
        b"1 Q0 d 1 1e999 t\n",  # not finite
        b"1 Q0 d 1 1e t\n",
        b"1 Q0 d 1 . t\n",
        b"1 Q0 d 1 - t\n",
        "1 Q0 caf\u00e9 1 1.0 t\n".encode(),  # UTF-8: polars checks it
        b"\xef\xbb\xbf1 Q0 d 1 1.0 t\n",  # a byte-order mark
        b"1 Q0 d\x00 1 1.0 t\n",
        b"1 Q0 d\x7f 1 1.0 t\n",
    ],
)
def test_anything_else_is_declined(data):
    assert scan(data) is None


def test_a_line_longer_than_the_limit_is_declined():
    data = b"1 Q0 " + b"d" * 100 + b" 1 1.0 t\n"
    assert scan(data, max_line=len(data)) is not None
    assert scan(data, max_line=len(data) - 1) is None


def test_a_piece_is_read_in_place_from_a_memory_map(tmp_path):
    lines = [
        f"{q} Q0 document-{q}-{d:06d} {d} {1 / (d + 1)!r} run" for q in (7, 8) for d in range(3000)
    ]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    data = path.read_bytes()
    middle = data.index(b"\n8 Q0") + 1
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        first, second = scan(mapped, end=middle), scan(mapped, start=middle)
    # Docnos of over 12 bytes sit in the data buffer (which grows past its first 64 KiB).
    assert_same(pl.concat([first, second]), reference(data))
    assert second["qid"].unique().to_list() == ["8"]


def test_a_tag_that_changes_is_a_column_from_its_first_line():
    data = b"1 Q0 a 1 1.0 same\n1 Q0 b 2 0.5 same\n1 Q0 c 3 0.2 other-and-long-tag\n"
    frame = scan(data, ("qid", "tag"))
    assert frame["tag"].to_list() == ["same", "same", "other-and-long-tag"]
    constant = scan(data[: data.index(b"1 Q0 c")], ("qid", "docno", "tag"))
    assert constant.rows() == [("1", "a", "same"), ("1", "b", "same")]


def test_columns_come_in_the_order_asked_for():
    frame = scan(b"1 Q0 a 7 1.5 t\n", ("tag", "score", "qid", "rank"))
    assert frame.columns == ["tag", "score", "qid", "rank"]
    assert frame.schema == pl.Schema(
        {"tag": pl.String, "score": pl.Float64, "qid": pl.String, "rank": pl.Int64}
    )
    assert frame.rows() == [("t", 1.5, "1", 7)]


def test_without_qid_it_leaves_the_piece_to_polars():
    assert scan(b"1 Q0 a 7 1.5 t\n", ("docno", "score")) is None
