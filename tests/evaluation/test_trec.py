"""Tests for evaluation.trec: the TREC run/qrels grammar, its errors, gzip, writers.

The readers implement one grammar three times: polars' CSV reader for the usual layouts, a
vectorised line path for any layout and for error reports, and the line-by-line parser behind
iter_run/iter_qrels, which is the reference. Error tests check read_* and iter_* give the same
list; the hypothesis tests near the end feed all three paths hostile input and require the same
frames and the same errors.
"""

import gzip
import io
import math
import pickle
import re
import struct
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from evaluation import trec
from evaluation.trec import (
    LineError,
    QrelsLine,
    RunLine,
    TrecFormatError,
    iter_qrels,
    iter_run,
    qrels_from_dict,
    read_qrels,
    read_run,
    run_from_dict,
    write_qrels,
    write_run,
)

RUN = b"301 Q0 D1 1 2.5 bm25\n301 Q0 D2 2 1.5 bm25\n302 Q0 D1 1 -3e2 bm25\n"
QRELS = b"301 0 D1 2\n301 0 D9 0\n302 1 D1 -1\n"
NUMBERED_RUN = b"".join(b"%d Q0 D%d 1 %d.5 t\n" % (i, i * 7, i) for i in range(2000))


def errors_of(reader, iterate, data, name: str, **kwargs) -> list[str]:
    """The messages ``reader`` raises for ``data``, after checking that the streaming
    iterator raises the very same errors."""
    with pytest.raises(TrecFormatError) as caught:
        reader(data, name=name, **kwargs)
    with pytest.raises(TrecFormatError) as streamed:
        list(iterate(data, name=name, **kwargs))
    assert (streamed.value.errors, streamed.value.total) == (
        caught.value.errors,
        caught.value.total,
    ), "the reader and the streaming iterator report different errors"
    return [str(error) for error in caught.value.errors]


def run_errors(data, **kwargs) -> list[str]:
    return errors_of(read_run, iter_run, data, "run.txt", **kwargs)


def qrels_errors(data, **kwargs) -> list[str]:
    return errors_of(read_qrels, iter_qrels, data, "qrels.txt", **kwargs)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def flip_middle_bytes(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0x55 for b in data[middle : middle + 8]) + data[middle + 8 :]


# --- reading valid files ----------------------------------------------------------------------


def test_read_run_gives_typed_columns_in_file_order():
    frame = read_run(RUN)
    assert frame.schema == pl.Schema(
        {
            "qid": pl.String,
            "docno": pl.String,
            "rank": pl.Int64,
            "score": pl.Float64,
            "tag": pl.String,
        }
    )
    assert frame.rows() == [
        ("301", "D1", 1, 2.5, "bm25"),
        ("301", "D2", 2, 1.5, "bm25"),
        ("302", "D1", 1, -300.0, "bm25"),
    ]


def test_read_qrels_gives_typed_columns_in_file_order():
    frame = read_qrels(QRELS)
    assert frame.schema == pl.Schema(
        {"qid": pl.String, "iteration": pl.String, "docno": pl.String, "grade": pl.Int64}
    )
    assert frame.rows() == [("301", "0", "D1", 2), ("301", "0", "D9", 0), ("302", "1", "D1", -1)]


def test_rank_column_is_read_as_written_not_recomputed():
    frame = read_run(b"1 Q0 a 7 1.0 t\n1 Q0 b 3 2.0 t\n")
    assert frame["rank"].to_list() == [7, 3]


def test_blank_and_comment_lines_are_skipped_but_keep_their_line_numbers():
    data = b"# produced by bm25\n\n   \t\n  # indented comment\n1 Q0 a 1 1.0 t\n1 Q0 a 2 0.5 t\n"
    assert run_errors(data) == ["run.txt:6: docno 'a' already appears for topic '1' on line 5"]


def test_comment_lines_are_not_checked_at_all():
    data = b"#\xff\xfe latin-1 comment \x00 with a NUL\n1 Q0 a 1 1.0 t\n#" + b"x" * 70000 + b"\n"
    assert read_run(data).rows() == [("1", "a", 1, 1.0, "t")]


def test_bom_at_start_crlf_line_ends_and_missing_final_newline_are_accepted():
    data = b"\xef\xbb\xbf1 Q0 a 1 1.0 t\r\n1 Q0 b 2 0.5 t"
    assert read_run(data).rows() == [("1", "a", 1, 1.0, "t"), ("1", "b", 2, 0.5, "t")]


def test_bom_elsewhere_is_part_of_the_field():
    frame = read_qrels(b"1 0 a 1\n\xef\xbb\xbf1 0 a 1\n")
    assert frame["qid"].to_list() == ["1", "\ufeff1"]


def test_runs_of_spaces_tabs_and_other_ascii_whitespace_separate_fields():
    data = b"  1\tQ0 \t a\x0b1\x0c 1.0   t  \n"
    assert read_run(data).rows() == [("1", "a", 1, 1.0, "t")]


def test_non_breaking_and_unicode_spaces_stay_inside_a_field():
    data = "1 Q0 doc\u00a0one 1 1.0 t\n1 Q0 doc\u2003two 2 0.5 t\n".encode()
    assert read_run(data)["docno"].to_list() == ["doc\u00a0one", "doc\u2003two"]


def test_q0_and_iteration_columns_may_hold_anything():
    assert read_run(b"1 whatever a 1 1.0 t\n").height == 1
    assert read_qrels(b"1 Q0 a 1\n")["iteration"].to_list() == ["Q0"]


def test_same_docno_in_different_topics_is_allowed():
    assert read_run(b"1 Q0 a 1 1.0 t\n2 Q0 a 1 1.0 t\n").height == 2
    assert read_qrels(b"1 0 a 1\n2 0 a 1\n").height == 2


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1.0),
        ("+1", 1.0),
        ("-0", 0.0),
        ("1.", 1.0),
        (".5", 0.5),
        ("-.5e-1", -0.05),
        ("1E5", 1e5),
        ("00.25", 0.25),
        ("1e-999", 0.0),
        ("0.1", 0.1),
        ("0." + "3" * 40, 0.3333333333333333),
    ],
)
def test_score_syntax_accepted(text, value):
    assert read_run(f"1 Q0 a 1 {text} t\n".encode())["score"].to_list() == [value]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("+7", 7),
        ("-3", -3),
        ("007", 7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
    ],
)
def test_integer_syntax_accepted(text, value):
    assert read_qrels(f"1 0 a {text}\n".encode())["grade"].to_list() == [value]


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"1 Q0 a 1 1.0", "expected 6 fields (qid Q0 docno rank score tag), found 5"),
        (b"1 Q0 a 1 1.0 t extra", "expected 6 fields (qid Q0 docno rank score tag), found 7"),
        (b"1 Q0 a x 1.0 t", "rank 'x' is not an integer"),
        (b"1 Q0 a 1.0 1.0 t", "rank '1.0' is not an integer"),
        (b"1 Q0 a 9223372036854775808 1.0 t", "rank '9223372036854775808' is out of range"),
        (b"1 Q0 a 1 2.5abc t", "score '2.5abc' is not a number"),
        (b"1 Q0 a 1 1_000 t", "score '1_000' is not a number"),
        (b"1 Q0 a 1 0x10 t", "score '0x10' is not a number"),
        ("1 Q0 a 1 ١ t".encode(), "score '١' is not a number"),
        ("1 Q0 a 1 １ t".encode(), "score '１' is not a number"),
        (b"1 Q0 a 1 . t", "score '.' is not a number"),
        (b"1 Q0 a 1 1e t", "score '1e' is not a number"),
        (b"1 Q0 a 1 inf t", "score 'inf' is not finite"),
        (b"1 Q0 a 1 -Infinity t", "score '-Infinity' is not finite"),
        (b"1 Q0 a 1 nan t", "score 'nan' is not finite"),
        (b"1 Q0 a 1 1e999 t", "score '1e999' is not finite"),
        (b"1 Q0 a\x00b 1 1.0 t", "line contains a NUL byte"),
        (b"1 Q0 caf\xe9 1 1.0 t", "line is not valid UTF-8"),
        (b"1 Q0 " + b"d" * 70000 + b" 1 1.0 t", "line is longer than 65536 bytes"),
    ],
)
def test_run_line_errors_name_file_line_and_problem(line, message):
    data = b"# header\n1 Q0 ok 1 1.0 t\n" + line + b"\n"
    assert run_errors(data) == [f"run.txt:3: {message}"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"1 0 a", "expected 4 fields (qid iteration docno grade), found 3"),
        (b"1 0 a 1 x", "expected 4 fields (qid iteration docno grade), found 5"),
        (b"1 0 a 1.0", "grade '1.0' is not an integer"),
        (b"1 0 a 2a", "grade '2a' is not an integer"),
        (b"1 0 a 1e2", "grade '1e2' is not an integer"),
        (b"1 0 a 1_0", "grade '1_0' is not an integer"),
        ("1 0 a ٣".encode(), "grade '٣' is not an integer"),
        (b"1 0 a -99999999999999999999", "grade '-99999999999999999999' is out of range"),
        (b"1 0 ok 0", "docno 'ok' already appears for topic '1' on line 1"),
        (b"1 0 a " + b"0" * 5000 + b"7", None),  # leading zeros: 7, however many
        (b"1 0 a -" + b"9" * 5000, "grade '-" + "9" * 56 + "...' is out of range"),
    ],
)
def test_qrels_line_errors_name_file_line_and_problem(line, message):
    data = b"1 0 ok 1\n\n" + line + b"\n"
    if message is None:
        assert read_qrels(data)["grade"].to_list() == [1, 7]
        assert [r.grade for r in iter_qrels(data)] == [1, 7]
    else:
        assert qrels_errors(data) == [f"qrels.txt:3: {message}"]


def test_a_line_with_a_bad_rank_and_a_bad_score_gets_both_errors():
    assert run_errors(b"1 Q0 a one two t\n") == [
        "run.txt:1: rank 'one' is not an integer",
        "run.txt:1: score 'two' is not a number",
    ]


def test_a_line_exactly_at_the_length_limit_is_accepted_even_with_crlf():
    docno = b"d" * (65536 - len(b"1 Q0  1 1.0 t"))
    line = b"1 Q0 " + docno + b" 1 1.0 t"
    assert len(line) == 65536
    assert read_run(line + b"\r\n" + line.replace(b"1 Q0", b"2 Q0") + b"\n").height == 2
    assert run_errors(b"1 Q0 " + docno + b"x 1 1.0 t\n") == [
        "run.txt:1: line is longer than 65536 bytes"
    ]


def test_empty_file_and_comment_only_file_are_errors_on_line_zero():
    assert run_errors(b"") == ["run.txt:0: file has no run lines"]
    assert run_errors(b"# nothing\n\n  \n") == ["run.txt:0: file has no run lines"]
    assert qrels_errors(b"\xef\xbb\xbf") == ["qrels.txt:0: file has no qrels lines"]


def test_all_errors_are_collected_in_line_order():
    data = b"1 Q0 a 1 x t\n1 Q0 b 1 1 t\n1 Q0 a 2 1 t\n2 Q0 c\n"
    assert run_errors(data) == [
        "run.txt:1: score 'x' is not a number",
        "run.txt:3: docno 'a' already appears for topic '1' on line 1",
        "run.txt:4: expected 6 fields (qid Q0 docno rank score tag), found 3",
    ]


def test_error_list_is_capped_and_counts_the_rest():
    data = b"".join(b"1 0 d%d bad\n" % i for i in range(120))
    with pytest.raises(TrecFormatError) as caught:
        read_qrels(data, name="q", max_errors=50)
    error = caught.value
    assert error.total == 120
    assert len(error.errors) == 50
    assert error.errors[-1] == LineError("q", 50, "grade 'bad' is not an integer")
    assert str(error).splitlines()[-1] == "... and 70 more errors"
    assert len(str(error).splitlines()) == 51


def test_one_error_over_the_cap_is_counted_in_the_singular():
    with pytest.raises(TrecFormatError) as caught:
        read_qrels(b"1 0 a x\n1 0 b y\n", max_errors=1)
    assert str(caught.value) == "<upload>:1: grade 'x' is not an integer\n... and 1 more error"


def test_line_error_and_format_error_render_as_path_line_message():
    error = LineError("runs/a.txt", 12, "rank 'x' is not an integer")
    assert str(error) == "runs/a.txt:12: rank 'x' is not an integer"
    assert str(TrecFormatError([error])) == "runs/a.txt:12: rank 'x' is not an integer"
    assert isinstance(TrecFormatError([error]), ValueError)


def test_format_error_survives_pickling_for_background_tasks():
    error = TrecFormatError([LineError("a", 1, "m")], total=3)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.errors, copy.total, str(copy)) == (error.errors, 3, str(error))


def test_long_field_values_are_shortened_in_messages():
    messages = run_errors(b"1 Q0 a 1 " + b"9" * 200 + b"x t\n")
    assert messages == ["run.txt:1: score '" + "9" * 57 + "...' is not a number"]


def test_error_names_default_to_the_path_or_upload(tmp_path):
    path = tmp_path / "bad.run"
    path.write_bytes(b"1 Q0 a 1 x t\n")
    for source, name in [
        (path, str(path)),
        (str(path), str(path)),
        (b"1 Q0 a 1 x t\n", "<upload>"),
        (io.BytesIO(b"1 Q0 a 1 x t\n"), "<upload>"),
    ]:
        with pytest.raises(TrecFormatError) as caught:
            read_run(source)
        assert caught.value.errors == [LineError(name, 1, "score 'x' is not a number")]


# --- sources, gzip and size limits ------------------------------------------------------------


def test_path_bytes_and_file_objects_read_the_same(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN)
    expected = read_run(RUN)
    for source in (path, str(path), bytearray(RUN), memoryview(RUN), io.BytesIO(RUN)):
        assert_frame_equal(read_run(source), expected)


@pytest.mark.parametrize(
    "data",
    [
        b"1\tQ0 a 1 1.0\x0bt\r\n2 Q0 b 1 2.0 t\r\n",  # CSV path after byte translation
        b"1 Q0 a 1 1.0 t\r\n 2 Q0 b 1 2.0 t\r\r\n",  # line path
        b"1 Q0 \xe9 1 1.0 t\n1 Q0 a 1 x t\n1  Q0 a 2 1.0 t\n#\x00\n",  # errors, suspect lines
        "1 Q0 \ufffd 1 1.0 t\n  #\x00\n".encode(),  # valid, with suspect lines
    ],
)
def test_files_read_through_a_memory_map_give_what_their_bytes_give(tmp_path, data):
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    expected = reference(trec._RUN, data, max_errors=50)
    assert_same_verdict(lambda: read_run(path, name="f"), expected, data)


def test_gzip_is_recognised_by_content_not_name(tmp_path):
    zipped = tmp_path / "run.txt"  # no .gz suffix
    zipped.write_bytes(gz(RUN))
    plain = tmp_path / "run.gz"  # a .gz suffix on plain text
    plain.write_bytes(RUN)
    for source in (zipped, plain, gz(RUN), io.BytesIO(gz(RUN))):
        assert_frame_equal(read_run(source), read_run(RUN))
    assert list(iter_qrels(gz(QRELS))) == list(iter_qrels(QRELS))


def test_concatenated_gzip_members_and_nul_padding_are_read_like_gzip_does():
    data = gz(RUN[:22]) + gz(RUN[22:]) + b"\x00" * 10
    assert gzip.decompress(data[:-10]) == RUN
    assert_frame_equal(read_run(data), read_run(RUN))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (gz(RUN)[:-6], "gzip stream is truncated"),
        (gz(RUN)[:12], "gzip stream is truncated"),
        (b"\x1f\x8b", "gzip stream is truncated"),
        (b"\x1f\x8b\x08\x00" + b"garbage" * 10, "not a valid gzip file"),
        (flip_middle_bytes(gz(NUMBERED_RUN)), "not a valid gzip file"),
        (gz(RUN) + b"trailing junk", "not a valid gzip file"),
    ],
)
def test_corrupt_or_truncated_gzip_is_one_file_level_error(data, message):
    assert run_errors(data) == [f"run.txt:0: {message}"]


def test_gzip_with_a_bad_checksum_is_rejected():
    data = bytearray(gz(RUN))
    data[-8] ^= 0xFF  # the CRC-32 in the trailer
    assert run_errors(bytes(data)) == ["run.txt:0: not a valid gzip file"]


def test_max_bytes_counts_decompressed_bytes():
    limit = len(RUN) - 1
    message = f"run.txt:0: file is larger than the limit of {limit} bytes (after decompression)"
    assert run_errors(RUN, max_bytes=limit) == [message]
    assert run_errors(gz(RUN), max_bytes=limit) == [message]
    assert read_run(gz(RUN), max_bytes=len(RUN)).height == 3


def test_max_bytes_applies_to_paths_and_file_objects(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN)
    for make_source in (lambda: path, lambda: io.BytesIO(RUN), lambda: io.BytesIO(gz(RUN))):
        with pytest.raises(TrecFormatError, match="larger than the limit of 10 bytes"):
            read_run(make_source(), max_bytes=10)
        with pytest.raises(TrecFormatError, match="larger than the limit of 10 bytes"):
            list(iter_run(make_source(), max_bytes=10))


def test_gzip_bomb_stops_at_the_limit_without_decompressing_everything():
    # 128 MiB of spaces compress to 128 KiB; reading must stop soon after 1 MB of output.
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 24)
    bomb = b"".join(compressor.compress(block) for _ in range(8)) + compressor.flush()
    assert len(bomb) < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(TrecFormatError, match="larger than the limit of 1000000 bytes"):
            read_run(bomb, max_bytes=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * (1 << 20), f"peak memory {peak / 2**20:.0f} MiB while refusing a bomb"


def test_a_huge_line_is_rejected_without_holding_it_in_memory():
    # iter_run reads in chunks; a 30 MiB line must not be buffered whole.
    def chunks():
        yield b"1 Q0 a 1 1.0 t\n1 Q0 "
        for _ in range(30):
            yield b"x" * (1 << 20)
        yield b" 1 1.0 t\n#" + b"c" * (1 << 21) + b"\n1 Q0 b 2 0.5 t\n"

    source = io.BufferedReader(io.BytesIO(b"".join(chunks())), buffer_size=1 << 16)
    tracemalloc.start()
    try:
        lines = []
        with pytest.raises(TrecFormatError) as caught:
            lines.extend(iter_run(source))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [line.docno for line in lines] == ["a", "b"]
    assert [str(e) for e in caught.value.errors] == ["<upload>:2: line is longer than 65536 bytes"]
    assert peak < 16 * (1 << 20), f"peak memory {peak / 2**20:.0f} MiB for a 30 MiB line"


def test_long_whitespace_line_is_too_long_unless_it_turns_out_to_be_a_comment():
    pad = b" " * (3 << 20)
    data = b"1 Q0 a 1 1.0 t\n" + pad + b"\n" + pad + b"# late comment\n" + pad + b"x\n"
    assert run_errors(data) == [
        "run.txt:2: line is longer than 65536 bytes",
        "run.txt:4: line is longer than 65536 bytes",
    ]


# --- streaming iterators ----------------------------------------------------------------------


def test_iter_run_yields_valid_lines_with_numbers_then_raises_every_error():
    data = b"1 Q0 a 1 1.0 t\n\n1 Q0 b 2 x t\n2 Q0 a 1 0.5 t\n"
    seen = []
    with pytest.raises(TrecFormatError) as caught:
        for line in iter_run(data, name="r"):
            seen.append(line)
    assert seen == [RunLine("1", "a", 1, 1.0, "t", 1), RunLine("2", "a", 1, 0.5, "t", 4)]
    assert caught.value.errors == [LineError("r", 3, "score 'x' is not a number")]


def test_iter_qrels_yields_lines_of_a_valid_file_and_finishes_quietly():
    assert list(iter_qrels(QRELS)) == [
        QrelsLine("301", "0", "D1", 2, 1),
        QrelsLine("301", "0", "D9", 0, 2),
        QrelsLine("302", "1", "D1", -1, 3),
    ]


def test_iter_run_reports_a_read_failure_after_earlier_line_errors():
    data = gz(b"1 Q0 a 1 x t\n" + b"1 Q0 b 1 1.0 t\n" * 1000)[:-40]
    with pytest.raises(TrecFormatError) as caught:
        list(iter_run(data, name="r"))
    assert [str(e) for e in caught.value.errors] == [
        "r:0: gzip stream is truncated",
        "r:1: score 'x' is not a number",
    ]


# --- arguments --------------------------------------------------------------------------------


@pytest.mark.parametrize("max_errors", [0, -1, 1.5, True])
def test_max_errors_must_be_a_positive_integer(max_errors):
    with pytest.raises(ValueError, match="max_errors must be a positive integer"):
        read_run(RUN, max_errors=max_errors)


def test_max_bytes_must_be_a_non_negative_integer():
    with pytest.raises(ValueError, match="max_bytes must be None or a non-negative integer"):
        read_qrels(QRELS, max_bytes=-1)


def test_source_of_the_wrong_kind_is_rejected():
    with pytest.raises(ValueError, match="source must be a path, bytes or a binary file-like"):
        read_run(12)
    with pytest.raises(ValueError, match="source must be a path, bytes or a binary file-like"):
        iter_run(["1 Q0 a 1 1 t"])


def test_text_mode_file_is_rejected():
    with pytest.raises(ValueError, match="binary mode"):
        read_run(io.StringIO("1 Q0 a 1 1.0 t\n"))


# --- writers ----------------------------------------------------------------------------------


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


# --- which path reads what --------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"1 Q0 a 1 1.0 t\n2 Q0 b 1 2.0 t\n",
        b"1\tQ0\ta\t1\t1.0\tt\n2\tQ0\tb\t1\t2.0\tt\n",  # tabs only
        b"1 Q0 a 1 1.0 t\r\n2 Q0 b 1 2.0 t\r\n",  # CRLF
        b"1\tQ0 a\t1 1.0\x0ct\n2 Q0\tb 1\t2.0 t\n",  # one whitespace byte between fields
        b"# header\n1 Q0 a 1 1.0 t\n\n2 Q0 b 1 2.0 t\n\n",  # comments at line start, blanks
    ],
)
def test_usual_layouts_take_the_csv_path(data):
    frame = trec._read_canonical(trec._RUN, data, data)
    assert frame is not None, f"CSV path declined {data!r}"
    assert frame.rows() == [("1", "a", 1, 1.0, "t"), ("2", "b", 1, 2.0, "t")]


@pytest.mark.parametrize(
    "data",
    [
        b"1  Q0   a 1 1.0 t\n2 Q0 b 1 2.0 t\n",  # runs of spaces
        b" 1 Q0 a 1 1.0 t \n\t2 Q0 b 1 2.0 t\n",  # leading and trailing whitespace
        b"  # indented comment\n1 Q0 a 1 1.0 t\n2 Q0 b 1 2.0 t\r\n",
        b"1 Q0 a 1 1.0 t\r\n2 Q0 b 1 2.0 t\r\r\n",  # CR that is not part of a line end
    ],
)
def test_unusual_layouts_take_the_vectorised_line_path(data):
    assert trec._read_canonical(trec._RUN, data, data) is None
    frame = trec._read_any_layout(trec._RUN, data, "f", 50)
    assert frame is not None, f"line path gave up on {data!r}"
    assert frame.rows() == [("1", "a", 1, 1.0, "t"), ("2", "b", 1, 2.0, "t")]


def test_line_path_reports_errors_exactly_like_the_reference_parser():
    # Suspect lines (invalid UTF-8, NUL, too long, a rank out of range) among ordinary errors
    # and duplicates, including a duplicate of a line whose score is bad.
    lines = [
        b"1 Q0 a 1 1.0 t",
        b"1 Q0 caf\xe9 2 1.0 t",
        b"1 Q0 b 3 x t",
        b"1 Q0 b 4 1.0 t",
        b"1 Q0 c\x00 5 1.0 t",
        b"1  Q0 " + b"d" * 70000 + b" 6 1.0 t",
        b"1 Q0 e 99999999999999999999 1.0 t",
        b"1 Q0 a 8 inf t",
        b"   ",
        b"# \xff comment",
        "2 Q0 \u00e9\ufffd 1 1.0 t".encode(),
        "2 Q0 \u00e9\ufffd 2 1.0 t".encode(),
        b"2 Q0 f 3",
    ]
    data = b"\n".join(lines) + b"\n"
    expected = reference(trec._RUN, data, max_errors=50)
    assert [str(e) for e in expected.errors] == [
        "f:2: line is not valid UTF-8",
        "f:3: score 'x' is not a number",
        "f:4: docno 'b' already appears for topic '1' on line 3",
        "f:5: line contains a NUL byte",
        "f:6: line is longer than 65536 bytes",
        "f:7: rank '99999999999999999999' is out of range",
        "f:8: score 'inf' is not finite",
        "f:8: docno 'a' already appears for topic '1' on line 1",
        "f:12: docno '\u00e9\ufffd' already appears for topic '2' on line 11",
        "f:13: expected 6 fields (qid Q0 docno rank score tag), found 4",
    ]
    with pytest.raises(TrecFormatError) as caught:
        trec._read_any_layout(trec._RUN, data, "f", 50)
    assert caught.value.errors == expected.errors
    with pytest.raises(TrecFormatError) as caught:
        trec._read_any_layout(trec._RUN, data, "f", 4)
    assert (caught.value.errors, caught.value.total) == (expected.errors[:4], 10)


def test_valid_file_with_suspect_lines_is_read_by_the_line_path():
    # A real U+FFFD, a NUL in a comment and a long comment: valid, but polars cannot tell.
    data = "1 Q0 \ufffd 1 1.0 t\n  #\x00\n#{}\n1  Q0 b 2 2.0 t\n".format("c" * 70000).encode()
    frame = trec._read_any_layout(trec._RUN, data, "f", 50)
    assert frame is not None, "line path gave up"
    assert frame.rows() == [("1", "\ufffd", 1, 1.0, "t"), ("1", "b", 2, 2.0, "t")]


@pytest.mark.parametrize("ending", [b"", b"\n", b"\n\n"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_line_index_finds_every_line_across_blocks(ending, bom):
    lines = [b"%d Q0 d%d 1 1.0 t" % (i, i) * (i % 7) for i in range(20000)]
    data = bom + b"\n".join(lines) + ending
    index = trec._LineIndex(data)
    expected = (b"\n".join(lines) + ending).split(b"\n")
    if expected[-1] == b"":
        expected.pop()
    assert index.count == len(expected)
    for number in (1, 2, 1000, 9999, 10001, 19999, len(expected)):
        assert index.line(number) == expected[number - 1], f"line {number}"


# --- size -------------------------------------------------------------------------------------


def test_a_200k_line_run_parses_on_the_vectorised_path():
    topics, depth = 200, 1000
    rng = np.random.default_rng(7)
    scores = rng.normal(size=topics * depth)
    frame = pl.DataFrame(
        {
            "qid": np.repeat(np.arange(topics), depth).astype(str),
            "docno": rng.permutation(10**6)[: topics * depth].astype(str),
            "rank": np.tile(np.arange(1, depth + 1), topics),
            "score": scores,
            "tag": ["big"] * (topics * depth),
        }
    ).with_columns(pl.col("docno").str.replace(r"^", "MARCO_"))
    data = write_to_bytes(write_run, frame)
    assert trec._read_canonical(trec._RUN, data, data) is not None, (
        "fast path declined a clean file"
    )
    got = read_run(data)
    assert_frame_equal(got, frame)
    assert got["score"].to_numpy().tobytes() == scores.tobytes()


# --- fast path against reference parser (hypothesis) ------------------------------------------

WEIRD_NUMBERS = [
    "",
    "+1",
    "-1",
    "1.",
    ".5",
    "-.5",
    "+.5e3",
    ".",
    "-",
    "+",
    "-0",
    "+0",
    "00",
    "007",
    "1e5",
    "1E+05",
    "1e-5",
    "1e",
    "e5",
    ".e5",
    "1.e5",
    "1.5e",
    "0x10",
    "0X1p3",
    "1_000",
    "١",
    "１",
    "٣٤",
    "NaN",
    "nan",
    "-nan",
    "inf",
    "Infinity",
    "-inf",
    "1e999",
    "-1e999",
    "1e-999",
    "2.5abc",
    "1,5",
    "1d5",
    "1.0",
    "2a",
    "1e2",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551617",
    "0" * 30 + "1",
    "1" * 400,
    "0." + "1" * 300,
    "--1",
    "+-1",
    "1..2",
    "0.1e1.5",
    "\u00a01",
    "1\u00a0",
]
WEIRD_TOKENS = [
    "Q0",
    "q",
    "#",
    "#x",
    "a#b",
    '"quoted"',
    "'",
    "\\",
    "caf\u00e9",
    "doc\u00a0nbsp",
    "\ufeff",
    "x\u2003y",
    "\u0085",
    "A",
    "a",
    "b",
    "longdocno_" + "z" * 40,
]
SEPARATORS = [" "] * 10 + ["  ", "\t", " \t ", "\x0b", "\x0c", "\r", "\u00a0", "\x1c"]

# Near-valid values are drawn as often as hostile ones, so that many generated files are valid
# in unusual ways and the two parsers' values get compared, not only their verdicts.
valid_numbers = st.from_regex(
    r"\A[+-]?(?:[0-9]{1,25}(?:\.[0-9]{0,25})?|\.[0-9]{1,25})(?:[eE][+-]?[0-9]{1,3})?\Z"
)
valid_integers = st.integers(-(2**63), 2**63 - 1).map(str) | st.sampled_from(
    ["+1", "-0", "+0", "007", "0" * 30 + "1", "-" + "0" * 4400 + "5", "-9223372036854775808"]
)
integers_ = st.one_of(
    valid_integers,
    valid_integers,
    st.integers(-(2**64), 2**64).map(str),
    st.sampled_from(WEIRD_NUMBERS),
)
scores_ = st.one_of(
    valid_numbers,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(WEIRD_NUMBERS),
)
tokens = st.one_of(
    st.sampled_from(["1", "2", "301", "D1", "x#y", "d\u00a0e", "\ufeff1", "a\x1cb"]),
    st.text(st.characters(codec="utf-8", exclude_characters="\n"), min_size=1, max_size=6),
    st.text("abcQ0#\u00a0\u2003\x85\ufeff", min_size=1, max_size=4),
    st.sampled_from(WEIRD_TOKENS),
)


@st.composite
def hostile_lines(draw, n_fields: int, numeric: tuple[int, ...]) -> str:
    kind = draw(st.sampled_from(["line"] * 12 + ["blank", "comment", "short", "long"]))
    if kind == "blank":
        return draw(st.sampled_from(["", " ", "\t", " \r", "\x0b\x0c "]))
    if kind == "comment":
        return draw(st.sampled_from(["#", "# x y", "  #c", "\t# \u00e9 \x00"]))
    count = n_fields
    if kind == "short":
        count = draw(st.integers(0, n_fields - 1))
    elif kind == "long":
        count = draw(st.integers(n_fields + 1, n_fields + 2))
    fields = []
    for index in range(count):
        if index == 3:
            fields.append(draw(integers_))
        elif index in numeric:
            fields.append(draw(scores_))
        else:
            fields.append(draw(tokens))
    line = fields[0] if fields else ""
    for field in fields[1:]:
        line += draw(st.sampled_from(SEPARATORS)) + field
    lead = draw(st.sampled_from(["", "", "", " ", "\t", "\x0c"]))
    trail = draw(st.sampled_from(["", "", "", " ", "\t", "\r"]))
    return lead + line + trail


@st.composite
def hostile_files(draw, n_fields: int, numeric: tuple[int, ...]) -> bytes:
    lines = draw(st.lists(hostile_lines(n_fields, numeric), min_size=0, max_size=5))
    ending = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = ending.join(lines) + draw(st.sampled_from(["", ending]))
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 19)) == 0:
        position = draw(st.integers(0, len(data)))
        data = (
            data[:position] + draw(st.sampled_from([b"\xff", b"\x00", b"\xc3"])) + data[position:]
        )
    return data


def reference(fmt, data: bytes, max_errors: int = 3):
    """The line-by-line parser's verdict: its frame, or the TrecFormatError it raises."""
    iterate = iter_run if fmt is trec._RUN else iter_qrels
    try:
        records = list(iterate(data, name="f", max_errors=max_errors))
    except TrecFormatError as error:
        return error
    columns = list(fmt.schema)
    return pl.DataFrame([r[: len(columns)] for r in records], schema=fmt.schema, orient="row")


def assert_same_frame(fast: pl.DataFrame, reference: pl.DataFrame) -> None:
    assert_frame_equal(fast, reference)
    if "score" in fast.columns:  # assert_frame_equal treats -0.0 and 0.0 as equal
        assert fast["score"].to_numpy().tobytes() == reference["score"].to_numpy().tobytes()


def assert_same_verdict(read, expected, data: bytes) -> None:
    """``read()`` returns the same frame as the reference, or raises the same errors."""
    if isinstance(expected, TrecFormatError):
        with pytest.raises(TrecFormatError) as caught:
            read()
        assert (caught.value.errors, caught.value.total) == (expected.errors, expected.total), (
            f"different errors for {data!r}"
        )
    else:
        assert_same_frame(read(), expected)


def check_agreement(fmt, data: bytes):
    """Every path agrees with the reference parser; returns the canonical path's frame."""
    expected = reference(fmt, data)
    canonical = trec._read_canonical(fmt, data, data)
    if canonical is not None:
        assert not isinstance(expected, TrecFormatError), (
            f"canonical path accepted what the reference rejects: {data!r}: {expected}"
        )
        assert_same_frame(canonical, expected)

    def any_layout():
        frame = trec._read_any_layout(fmt, data, "f", 3)
        assert frame is not None, f"any-layout path gave up on {data!r}"
        return frame

    assert_same_verdict(any_layout, expected, data)
    reader = read_run if fmt is trec._RUN else read_qrels
    assert_same_verdict(lambda: reader(data, name="f", max_errors=3), expected, data)
    return canonical


AGREEMENT = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@AGREEMENT
@given(hostile_files(6, (3, 4)))
def test_fast_and_reference_run_parsers_agree_on_hostile_input(data):
    check_agreement(trec._RUN, data)


@AGREEMENT
@given(hostile_files(4, (3,)))
def test_fast_and_reference_qrels_parsers_agree_on_hostile_input(data):
    check_agreement(trec._QRELS, data)


@st.composite
def valid_run_files(draw) -> tuple[bytes, bool]:
    """Valid runs in any layout; also says whether the layout is the canonical one."""
    n = draw(st.integers(1, 12))
    canonical = draw(st.booleans())
    lines, seen = [], set()
    for _ in range(n):
        qid = draw(st.sampled_from(["1", "2", "301", "q\u00e9"]))
        docno = draw(st.sampled_from(["a", "b", "c", "d", "e", "D\u00a01", "x#y", '"q"']))
        if (qid, docno) in seen:
            continue
        seen.add((qid, docno))
        rank = draw(st.integers(-(2**63), 2**63 - 1).map(str) | st.sampled_from(["+1", "007"]))
        score = draw(
            st.floats(allow_nan=False, allow_infinity=False).map(repr)
            | st.from_regex(
                r"\A[+-]?(?:[0-9]{1,20}\.?[0-9]{0,20}|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,2})?\Z"
            )
        )
        fields = [qid, draw(st.sampled_from(["Q0", "0", "x"])), docno, rank, score, "tag"]
        if canonical:
            lines.append(" ".join(fields))
        else:
            separators = st.sampled_from([" ", "\t", "  ", " \t", "\x0c"])
            line = fields[0] + "".join(draw(separators) + f for f in fields[1:])
            lines.append(
                draw(st.sampled_from(["", " ", "\t"]))
                + line
                + draw(st.sampled_from(["", " ", "\r"]))
            )
            if draw(st.booleans()):
                lines.append(draw(st.sampled_from(["", "# comment", "  ", "\t#"])))
    if canonical:
        text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    else:
        text = draw(st.sampled_from(["\n", "\r\n"])).join(lines)
    return text.encode(), canonical


@settings(max_examples=200, deadline=None)
@given(valid_run_files())
def test_vectorised_paths_accept_valid_runs_in_any_layout_with_the_same_values(case):
    data, canonical = case
    fast = check_agreement(trec._RUN, data)
    if canonical:
        assert fast is not None, f"CSV path declined a canonical run: {data!r}"


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


def test_module_is_pure_stdlib_and_polars():
    code = (
        "import sys, evaluation.trec; "
        "print(sorted({m.split('.')[0] for m in sys.modules} "
        "& {'django', 'rest_framework', 'numpy', 'pandas', 'pyarrow'}))"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert done.stdout.strip() == "[]", f"evaluation.trec imports {done.stdout.strip()}"
