"""Tests for evaluation.trec's writers and mapping helpers: what they write, what they refuse,
and that every frame they accept reads back unchanged (hypothesis round trips).
"""

import gzip
import io
import math
import re
import struct

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from evaluation.trec import (
    qrels_from_dict,
    read_qrels,
    read_run,
    run_from_dict,
    write_qrels,
    write_run,
)

# --- writers ----------------------------------------------------------------------------------

RUN = b"301 Q0 D1 1 2.5 bm25\n301 Q0 D2 2 1.5 bm25\n302 Q0 D1 1 -3e2 bm25\n"
QRELS = b"301 0 D1 2\n301 0 D9 0\n302 1 D1 -1\n"


def write_to_bytes(writer, frame, **kwargs) -> bytes:
    buffer = io.BytesIO()
    writer(frame, buffer, **kwargs)
    return buffer.getvalue()


def test_write_run_recomputes_rank_per_topic_in_frame_order_when_missing():
    frame = pl.DataFrame(
        {"qid": ["2", "2", "1", "2"], "docno": ["a", "b", "a", "c"], "score": [0.5, 0.7, 1, -2.0]}
    )
    assert write_to_bytes(write_run, frame) == (
        b"2 Q0 a 1 0.5 run\n2 Q0 b 2 0.7 run\n1 Q0 a 1 1.0 run\n2 Q0 c 3 -2.0 run\n"
    )


def test_write_run_keeps_rank_and_tag_columns_unless_tag_is_given():
    frame = read_run(b"1 Q0 a 5 1.5 mine\n")
    assert write_to_bytes(write_run, frame) == b"1 Q0 a 5 1.5 mine\n"
    assert write_to_bytes(write_run, frame, tag="other") == b"1 Q0 a 5 1.5 other\n"


def test_write_qrels_defaults_iteration_to_zero():
    frame = pl.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "grade": [3, -1]})
    assert write_to_bytes(write_qrels, frame) == b"1 0 a 3\n1 0 b -1\n"


def test_writers_gzip_paths_ending_in_gz(tmp_path):
    run, qrels = read_run(RUN), read_qrels(QRELS)
    write_run(run, tmp_path / "r.gz")
    write_qrels(qrels, str(tmp_path / "q.gz"))
    write_run(run, tmp_path / "r.txt")
    assert (tmp_path / "r.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert (tmp_path / "r.txt").read_bytes() == RUN.replace(b"-3e2", b"-300.0")
    assert_frame_equal(read_run(tmp_path / "r.gz"), run)
    assert_frame_equal(read_qrels(tmp_path / "q.gz"), qrels)


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pl.DataFrame({"qid": ["1"], "docno": ["a"]}), "missing column(s) score"),
        (
            pl.DataFrame(
                {"qid": [], "docno": [], "score": []},
                schema={"qid": pl.String, "docno": pl.String, "score": pl.Float64},
            ),
            "the frame has no rows",
        ),
        (
            pl.DataFrame({"qid": [1], "docno": ["a"], "score": [1.0]}),
            "column qid must be String, not Int64",
        ),
        (
            pl.DataFrame({"qid": ["1"], "docno": ["a b"], "score": [1.0]}),
            "docno at row 0 ('a b') is empty, contains whitespace or a NUL byte",
        ),
        (
            pl.DataFrame({"qid": ["1", "1"], "docno": ["a", ""], "score": [1.0, 2.0]}),
            "docno at row 1 ('') is empty",
        ),
        (pl.DataFrame({"qid": ["#1"], "docno": ["a"], "score": [1.0]}), "or starts with '#'"),
        (
            pl.DataFrame({"qid": ["\ufeff1"], "docno": ["a"], "score": [1.0]}),
            "qid at row 0 starts with a byte-order mark",
        ),
        (
            pl.DataFrame({"qid": ["1"], "docno": ["a"], "score": [math.inf]}),
            "score at row 0 is not finite",
        ),
        (
            pl.DataFrame(
                {"qid": ["1"], "docno": ["a"], "score": [None]},
                schema_overrides={"score": pl.Float64},
            ),
            "score at row 0 is missing",
        ),
        (
            pl.DataFrame({"qid": ["1", "2", "1"], "docno": ["a", "a", "a"], "score": [1.0] * 3}),
            "docno 'a' appears twice for topic '1' (again at row 2)",
        ),
    ],
)
def test_write_run_refuses_frames_that_would_not_read_back(frame, message):
    with pytest.raises(ValueError, match="cannot write run: .*" + re.escape(message)):
        write_run(frame, io.BytesIO())


def test_write_qrels_refuses_float_grades_and_whitespace_in_iteration():
    with pytest.raises(ValueError, match="column grade must be integer, not Float64"):
        write_qrels(pl.DataFrame({"qid": ["1"], "docno": ["a"], "grade": [1.0]}), io.BytesIO())
    frame = pl.DataFrame({"qid": ["1"], "iteration": ["0 1"], "docno": ["a"], "grade": [1]})
    with pytest.raises(ValueError, match="iteration at row 0"):
        write_qrels(frame, io.BytesIO())


def test_run_from_dict_ranks_by_score_then_docno_descending():
    frame = run_from_dict({"q2": {"a": 1.0, "b": 3.0, "c": 3.0}, "q1": {"z": 0}}, tag="sys")
    assert frame.rows() == [
        ("q2", "c", 1, 3.0, "sys"),
        ("q2", "b", 2, 3.0, "sys"),
        ("q2", "a", 3, 1.0, "sys"),
        ("q1", "z", 1, 0.0, "sys"),
    ]
    assert frame.schema == read_run(RUN).schema


def test_qrels_from_dict_keeps_mapping_order():
    frame = qrels_from_dict({"2": {"b": 1, "a": 0}, "1": {"c": -1}})
    assert frame.rows() == [("2", "0", "b", 1), ("2", "0", "a", 0), ("1", "0", "c", -1)]
    assert frame.schema == read_qrels(QRELS).schema


def test_from_dict_rejects_values_of_the_wrong_kind():
    with pytest.raises(ValueError, match="must be a number"):
        run_from_dict({"1": {"a": "2.0"}})
    with pytest.raises(ValueError, match="is not finite"):
        run_from_dict({"1": {"a": math.nan}})
    with pytest.raises(ValueError, match="must be an integer"):
        qrels_from_dict({"1": {"a": 1.0}})


# --- round trips (hypothesis) -----------------------------------------------------------------

token_text = st.text(
    st.characters(codec="utf-8", exclude_characters=" \t\n\r\x0b\x0c\x00"),
    min_size=1,
    max_size=8,
)
finite_floats = st.floats(allow_nan=False, allow_infinity=False) | st.builds(
    lambda bits: struct.unpack("<d", struct.pack("<Q", bits))[0], st.integers(0, 2**64 - 1)
).filter(math.isfinite)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        token_text.filter(lambda s: not s.startswith(("#", "\ufeff"))),
        st.dictionaries(token_text, finite_floats, min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    ),
    st.booleans(),
)
def test_run_round_trips_through_write_and_read(run, zipped):
    frame = run_from_dict(run, tag="rt")
    data = write_to_bytes(write_run, frame)
    assert_same_frame(read_run(gz(data) if zipped else data), frame)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        token_text.filter(lambda s: not s.startswith(("#", "\ufeff"))),
        st.dictionaries(token_text, st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    )
)
def test_qrels_round_trip_through_write_and_read(qrels):
    frame = qrels_from_dict(qrels)
    assert_frame_equal(read_qrels(write_to_bytes(write_qrels, frame)), frame)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def assert_same_frame(fast: pl.DataFrame, reference: pl.DataFrame) -> None:
    assert_frame_equal(fast, reference)
    if "score" in fast.columns:  # assert_frame_equal treats -0.0 and 0.0 as equal
        assert fast["score"].to_numpy().tobytes() == reference["score"].to_numpy().tobytes()
