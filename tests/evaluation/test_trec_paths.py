"""Tests for the three ways evaluation.trec reads a file: polars' CSV reader for the usual
layouts (path 1), a vectorised line path for any layout and for exact error reports (path 2),
and the line-by-line parser behind iter_run/iter_qrels, the reference (path 3). Hypothesis feeds
all of them hostile input and requires the same frames and the same errors.
"""

import io
import itertools
from contextlib import nullcontext
from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from evaluation.trec import (
    TrecFormatError,
    errors,
    grammar,
    iter_qrels,
    iter_run,
    native,
    read_qrels,
    read_run,
    reading,
    write_run,
)
from evaluation.trec import lines as line_path
from evaluation.trec.canonical import read_canonical
from evaluation.trec.errors import NoticeLog
from evaluation.trec.line_claims import LineIndex
from evaluation.trec.lines import read_any_layout
from evaluation.trec.reading import read_line_by_line
from evaluation.trec.source import TEXT_HEAD, text_problem


def write_to_bytes(writer, frame, **kwargs) -> bytes:
    buffer = io.BytesIO()
    writer(frame, buffer, **kwargs)
    return buffer.getvalue()


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
    frame = read_canonical(grammar.RUN, data)
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
    assert read_canonical(grammar.RUN, data) is None
    frame = read_any_layout(grammar.RUN, data, "f", 50)
    assert frame is not None, f"line path gave up on {data!r}"
    assert frame.rows() == [("1", "a", 1, 1.0, "t"), ("2", "b", 1, 2.0, "t")]


def test_line_path_reports_errors_exactly_like_the_reference_parser():
    # Suspect lines (invalid UTF-8, NUL, too long, a rank out of range: accepted, as trec_eval
    # never reads the rank) among ordinary errors and duplicates, including a duplicate of a
    # line whose score is bad.
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
    expected = reference(grammar.RUN, data, max_errors=50)
    assert [str(e) for e in expected.errors] == [
        "f:2: line is not valid UTF-8",
        "f:3: score 'x' is not a number",
        "f:4: docno 'b' already appears for topic '1' on line 3",
        "f:5: line contains a NUL byte",
        "f:6: line is longer than 65536 bytes",
        "f:8: score 'inf' is not finite",
        "f:8: docno 'a' already appears for topic '1' on line 1",
        "f:12: docno '\u00e9\ufffd' already appears for topic '2' on line 11",
        "f:13: expected at least 6 fields (qid Q0 docno rank score tag), found 4",
    ]
    with pytest.raises(TrecFormatError) as caught:
        read_any_layout(grammar.RUN, data, "f", 50)
    assert caught.value.errors == expected.errors
    with pytest.raises(TrecFormatError) as caught:
        read_any_layout(grammar.RUN, data, "f", 4)
    assert (caught.value.errors, caught.value.total) == (expected.errors[:4], 9)


def test_line_path_stops_reading_pieces_at_the_errors_cap():
    # 3,000 bad lines, in pieces of about 20 lines: the cap (patched to 100 errors) is
    # reached in the third piece, and no piece after it is read.
    data = b"1 Q0 a 1 abc t\n" * 3000
    pieces = mock.Mock(wraps=line_path._piece_rows)
    with (
        mock.patch.object(errors, "MAX_ERRORS_COUNTED", 100),
        mock.patch.object(line_path, "_piece_rows", pieces),
        pytest.raises(TrecFormatError) as caught,
    ):
        read_any_layout(grammar.RUN, data, "f", 5, piece_bytes=300)
    assert (caught.value.total, caught.value.stopped_at) == (100, 51)
    assert pieces.call_count == 3


def test_a_pair_repeated_from_an_earlier_piece_is_reported_with_its_first_line():
    # Pieces of about two lines: the repeats come pieces after their first line, before and
    # after the first piece with an error of its own.
    data = b"1 Q0 a 1 1.0 t\n1 Q0 b 1 1.0 t\n2 Q0 a 1 1.0 t\n1 Q0 a 1 1.0 t\n2 Q0 x 1 z t\n"
    data += b"1  Q0 b 1 1.0 t\n2 Q0 a 1 2.0 t\n"
    expected = reference(grammar.RUN, data, max_errors=50)
    assert [str(e) for e in expected.errors] == [
        "f:4: docno 'a' already appears for topic '1' on line 1",
        "f:5: score 'z' is not a number",
        "f:6: docno 'b' already appears for topic '1' on line 2",
        "f:7: docno 'a' already appears for topic '2' on line 3",
    ]
    for piece_bytes in (1, 20, 40, None):
        with pytest.raises(TrecFormatError) as caught:
            read_any_layout(grammar.RUN, data, "f", 50, piece_bytes=piece_bytes)
        assert caught.value.errors == expected.errors, piece_bytes


def test_valid_file_with_suspect_lines_is_read_by_the_line_path():
    # A real U+FFFD, a NUL in a comment and a long comment: valid, but polars cannot tell.
    data = "1 Q0 \ufffd 1 1.0 t\n  #\x00\n#{}\n1  Q0 b 2 2.0 t\n".format("c" * 70000).encode()
    frame = read_any_layout(grammar.RUN, data, "f", 50)
    assert frame is not None, "line path gave up"
    assert frame.rows() == [("1", "\ufffd", 1, 1.0, "t"), ("1", "b", 2, 2.0, "t")]


@pytest.mark.parametrize("ending", [b"", b"\n", b"\n\n"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_line_index_finds_every_line_across_blocks(ending, bom):
    lines = [b"%d Q0 d%d 1 1.0 t" % (i, i) * (i % 7) for i in range(20000)]
    data = bom + b"\n".join(lines) + ending
    index = LineIndex(data)
    expected = (b"\n".join(lines) + ending).split(b"\n")
    if expected[-1] == b"":
        expected.pop()
    assert index.count == len(expected)
    for number in (1, 2, 1000, 9999, 10001, 19999, len(expected)):
        assert index.line(number) == expected[number - 1], f"line {number}"


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
    expected = reference(grammar.RUN, data, max_errors=50)
    assert_same_verdict(lambda: read_run(path, name="f"), expected, data)


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
    assert read_canonical(grammar.RUN, data) is not None, "fast path declined a clean file"
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
    iterate = iter_run if fmt is grammar.RUN else iter_qrels
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
        found = caught.value
        assert (found.errors, found.total, found.stopped_at) == (
            expected.errors,
            expected.total,
            expected.stopped_at,
        ), f"different errors for {data!r}"
    else:
        assert_same_frame(read(), expected)


def check_agreement(fmt, data: bytes):
    """Every path agrees with the reference parser; returns the canonical path's frame."""
    expected = reference(fmt, data)
    if text_problem(data[:TEXT_HEAD]) is not None:
        # Refused as a whole (an AAC header, say) before any path reads a line: the paths
        # below are never given such a file, only the readers, which check it first, are.
        check_readers(fmt, data, expected)
        return None
    # Small pieces put piece boundaries everywhere, as large files do at every 16 MiB. Path 1
    # reads run pieces with runscan.c where it is built, else (and where it declines) with
    # polars: both ways. Without runscan.c, and for qrels (it reads runs only), "polars only"
    # is the same call again, so it is made once.
    canonical = None
    for piece_bytes, polars_only in itertools.product((1, 16, None), (False, True)):
        if polars_only and (fmt is not grammar.RUN or native._LIBRARY is None):
            continue
        with mock.patch.object(native, "_LIBRARY", None) if polars_only else nullcontext():
            pieces = read_canonical(fmt, data, piece_bytes=piece_bytes)
        if piece_bytes is None and not polars_only:
            canonical = pieces  # what the readers' path 1 gives
        if pieces is not None:
            assert not isinstance(expected, TrecFormatError), (
                f"canonical path in {piece_bytes}-byte pieces (polars only: {polars_only}) "
                f"accepted what the reference rejects: {data!r}: {expected}"
            )
            assert_same_frame(pieces, expected)

    # Path 2 reads 4 MiB pieces: small ones put a piece boundary between any two lines. Its
    # lines are split by polars, or by Python in a piece that holds every byte polars could
    # take as separator. Whole, it also collects the notices, compared below.
    whole_log = NoticeLog("f")
    for piece_bytes, python_split in ((1, False), (16, True), (None, False)):

        def any_layout(piece_bytes=piece_bytes, python_split=python_split):
            no_separator = mock.patch.object(line_path, "_FREE_BYTE_CANDIDATES", [])
            log = whole_log if piece_bytes is None else None
            with no_separator if python_split else nullcontext():
                frame = read_any_layout(fmt, data, "f", 3, log, piece_bytes=piece_bytes)
            assert frame is not None, f"any-layout path gave up on {data!r} ({piece_bytes})"
            return frame

        assert_same_verdict(any_layout, expected, data)
    notices = check_readers(fmt, data, expected)
    if not isinstance(expected, TrecFormatError):
        # The notices (extra fields, a rank that is not an integer) agree too.
        log = NoticeLog("f")
        read_line_by_line(fmt, data, "f", 3, log)
        assert log.notices() == whole_log.notices(), f"different notices for {data!r}"
        if notices is not None:
            assert notices == (log.notices(), log.notices()), f"readers' notices for {data!r}"
        if canonical is not None:
            assert log.notices() == [], f"canonical path read a file with notices: {data!r}"
    return canonical


def check_readers(fmt, data: bytes, expected):
    """read_run or read_qrels agrees with the reference, both as they read a file this small
    (path 3 alone, reading.FEW_BYTES) and as they read large ones (path 1, then 2, then 3);
    returns the notices read_run gave each way (None for qrels, which have none)."""
    reader = read_run if fmt is grammar.RUN else read_qrels
    notices = ([], []) if fmt is grammar.RUN else None
    large = mock.patch.multiple(reading, FEW_BYTES=-1, FEW_DECLINED_BYTES=-1)
    for way, patch in enumerate((nullcontext(), large)):
        kwargs = {} if notices is None else {"notices": notices[way]}
        with patch:
            assert_same_verdict(
                lambda kwargs=kwargs: reader(data, name="f", max_errors=3, **kwargs),
                expected,
                data,
            )
    return notices


AGREEMENT = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@AGREEMENT
@given(hostile_files(6, (3, 4)))
def test_fast_and_reference_run_parsers_agree_on_hostile_input(data):
    check_agreement(grammar.RUN, data)


@AGREEMENT
@given(hostile_files(4, (3,)))
@example(b"\xff\xf1\x80\x80\x80 1 1 0")  # an AAC header: not a text file
def test_fast_and_reference_qrels_parsers_agree_on_hostile_input(data):
    check_agreement(grammar.QRELS, data)


@settings(AGREEMENT, max_examples=100)
@given(hostile_files(6, (3, 4)), st.integers(1, 5))
def test_every_path_stops_checking_at_the_same_line_at_the_errors_cap(data, cap):
    # The real cap (10,000 errors) with hostile files of a few lines is a few errors.
    with mock.patch.object(errors, "MAX_ERRORS_COUNTED", cap):
        check_agreement(grammar.RUN, data)


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
    fast = check_agreement(grammar.RUN, data)
    if canonical:
        assert fast is not None, f"CSV path declined a canonical run: {data!r}"
        assert read_canonical(grammar.RUN, data, piece_bytes=1) is not None, (
            f"CSV path declined a canonical run read a line at a time: {data!r}"
        )


# --- the CSV path reads in pieces -------------------------------------------------------------

PIECES_RUN = (
    b"\xef\xbb\xbf# made by hand\n1 Q0 a 1 1.0 t\n"
    b"1\tQ0\tb\t2\t0.5\tt\n"  # tabs only
    b"\n\n1 Q0\x0bc 3 0.25 t\r\n"  # blank lines, VT, CRLF
    b"2 Q0 a 1 9 t"
)


@pytest.mark.parametrize("piece_bytes", [1, 10, 20, 40, 1 << 20])
def test_pieces_in_different_layouts_read_like_the_whole_file(piece_bytes):
    frame = read_canonical(grammar.RUN, PIECES_RUN, piece_bytes=piece_bytes)
    assert frame is not None, f"CSV path declined the file in {piece_bytes}-byte pieces"
    assert frame.rows() == [
        ("1", "a", 1, 1.0, "t"),
        ("1", "b", 2, 0.5, "t"),
        ("1", "c", 3, 0.25, "t"),
        ("2", "a", 1, 9.0, "t"),
    ]


@pytest.mark.parametrize("piece_bytes", [1, 20, 1 << 20])
def test_a_bom_starting_a_later_piece_stays_in_the_qid(piece_bytes):
    # Polars drops a byte-order mark at the start of what it reads; only the file's first one
    # may go.
    data = b"\xef\xbb\xbf1 Q0 a 1 1.0 t\n\n\n\xef\xbb\xbf1 Q0 a 1 1.0 t\n"
    pieces = read_canonical(grammar.RUN, data, piece_bytes=piece_bytes)
    if pieces is not None:
        assert pieces["qid"].to_list() == ["1", "\ufeff1"]
    assert read_run(data)["qid"].to_list() == ["1", "\ufeff1"]


def test_a_repeated_pair_in_another_piece_is_reported():
    data = b"1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5 t\n" + b"2 Q0 a 1 1.0 t\n" * 1 + b"1 Q0 a 3 0.1 t\n"
    assert read_canonical(grammar.RUN, data, piece_bytes=16) is None
    with pytest.raises(TrecFormatError) as caught:
        read_run(data, name="f")
    assert [str(e) for e in caught.value.errors] == [
        "f:4: docno 'a' already appears for topic '1' on line 1"
    ]


def test_pieces_parsed_on_worker_threads_come_back_in_file_order():
    # Many more pieces than are parsed at once: the frame keeps the file's line order.
    lines = [f"{q} Q0 d{q}-{i} {i} {1000 - i}.5 t\n" for q in range(30) for i in range(20)]
    data = "".join(lines).encode()
    frame = read_canonical(grammar.RUN, data, piece_bytes=64)
    assert frame is not None
    assert frame["docno"].to_list() == [line.split()[2] for line in lines]


def test_a_piece_polars_cannot_read_exactly_late_in_the_file_declines_it():
    lines = [f"1 Q0 d{i} {i} 1.0 t\n".encode() for i in range(200)]
    lines[150] = b"1 Q0 d150 150 1.0 t\x00\n"  # a NUL byte, many pieces in
    assert read_canonical(grammar.RUN, b"".join(lines), piece_bytes=32) is None
