"""Tests for evaluation.trec's readers: what valid run and qrels files give, every line error
(each checked against the streaming iterators, which must report the same list), the error cap,
and argument checks. Sources, gzip and size limits are in test_trec_source.py; the three reading
paths against each other in test_trec_paths.py; writers in test_trec_writing.py.
"""

import gzip
import io
import pickle
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from evaluation.trec import (
    EXTRA_FIELDS,
    MAX_ERRORS,
    RANK_NOT_INTEGER,
    LineError,
    QrelsLine,
    RunLine,
    TrecFormatError,
    iter_qrels,
    iter_run,
    read_qrels,
    read_run,
)
from evaluation.trec.errors import MAX_ERRORS_COUNTED

RUN = b"301 Q0 D1 1 2.5 bm25\n301 Q0 D2 2 1.5 bm25\n302 Q0 D1 1 -3e2 bm25\n"
QRELS = b"301 0 D1 2\n301 0 D9 0\n302 1 D1 -1\n"


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


# --- what trec_eval accepts and we accept with a notice ------------------------------------


@pytest.mark.parametrize("layout", [b" ", b"\t", b"  "])
def test_run_fields_after_the_sixth_are_ignored_with_a_notice(layout):
    lines = [b"1 Q0 a 1 2.0 t x y z", b"1 Q0 b 2 1.0 t", b"1 Q0 c 3 0.5 t tag extra"]
    notices = []
    frame = read_run(b"\n".join(line.replace(b" ", layout) for line in lines), notices=notices)
    assert frame.rows() == [
        ("1", "a", 1, 2.0, "t"),
        ("1", "b", 2, 1.0, "t"),
        ("1", "c", 3, 0.5, "t"),
    ]
    assert [(n.code, n.count, n.lines) for n in notices] == [(EXTRA_FIELDS, 2, (1, 3))]
    assert str(notices[0]) == (
        "<upload>: 2 lines have more than 6 fields: the fields after the sixth are ignored, "
        "as trec_eval ignores them (lines 1, 3)"
    )


@pytest.mark.parametrize("rank", [b"x", b"1.0", b"NaN-rank", b"9223372036854775808", b"-"])
def test_a_run_rank_that_is_not_an_integer_is_null_with_a_notice(rank):
    notices = []
    frame = read_run(b"1 Q0 a " + rank + b" 2.0 t\n1 Q0 b 7 1.0 t\n", notices=notices)
    assert frame["rank"].to_list() == [None, 7]
    assert [(n.code, n.count, n.lines) for n in notices] == [(RANK_NOT_INTEGER, 1, (1,))]
    assert "a rank that is not an integer" in str(notices[0])


def test_a_notice_lists_the_first_five_lines_and_counts_them_all():
    data = b"".join(b"1 Q0 d%d r%d %d t\n" % (i, i, 100 - i) for i in range(8))
    notices = []
    read_run(data, notices=notices)
    assert [(n.count, n.lines) for n in notices] == [(8, (1, 2, 3, 4, 5))]
    assert str(notices[0]).endswith("(lines 1, 2, 3, 4, 5, ...)")


def test_a_clean_run_has_no_notice_and_qrels_keep_their_four_fields():
    notices = []
    read_run(RUN, notices=notices)
    assert notices == []
    assert qrels_errors(b"1 0 a 1 extra\n") == [
        "qrels.txt:1: expected 4 fields (qid iteration docno grade), found 5"
    ]


def test_refusals_trec_eval_makes_stay_with_extra_fields():
    assert run_errors(b"1 Q0 a x 1.0 t more\n1 Q0 a 2 y t\n") == [
        "run.txt:2: score 'y' is not a number",
        "run.txt:2: docno 'a' already appears for topic '1' on line 1",
    ]


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"1 Q0 a 1 1.0", "expected at least 6 fields (qid Q0 docno rank score tag), found 5"),
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


def test_a_line_with_a_bad_score_and_a_repeated_docno_gets_both_errors():
    assert run_errors(b"1 Q0 a one 1 t\n1 Q0 a 2 two t\n") == [
        "run.txt:2: score 'two' is not a number",
        "run.txt:2: docno 'a' already appears for topic '1' on line 1",
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
        "run.txt:4: expected at least 6 fields (qid Q0 docno rank score tag), found 3",
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
    stopped = TrecFormatError([LineError("a", 1, "m"), LineError("a", 9, "stop")], 9, 9)
    copy = pickle.loads(pickle.dumps(stopped))
    assert (copy.errors, copy.total, copy.stopped_at, str(copy)) == (
        stopped.errors,
        9,
        9,
        str(stopped),
    )


# --- checking stops at the errors' cap ---------------------------------------------------------

# A 1.2 MB gzip of one bad line repeated expands to 480 MiB: 28 million errors. Counting stops
# at the 10,000th, on its line, so such a file costs the work of its first lines.
BAD_LINES = b"1 Q0 a 1 abc run\n" * (MAX_ERRORS_COUNTED // 2 + 1000)


@pytest.mark.parametrize("reader", [read_run, lambda data, **kw: list(iter_run(data, **kw))])
def test_checking_stops_at_the_line_of_the_10000th_error_and_says_so(reader):
    with pytest.raises(TrecFormatError) as caught:
        reader(BAD_LINES, name="bomb.run")
    error = caught.value
    # Line 1 has one error (the score), every later line two (the score and the repeat).
    assert (error.total, error.stopped_at, error.more) == (10_000, 5001, 10_000 - MAX_ERRORS)
    assert len(error.errors) == MAX_ERRORS + 1
    assert error.errors[:3] == [
        LineError("bomb.run", 1, "score 'abc' is not a number"),
        LineError("bomb.run", 2, "score 'abc' is not a number"),
        LineError("bomb.run", 2, "docno 'a' already appears for topic '1' on line 1"),
    ]
    assert error.errors[-1] == LineError(
        "bomb.run",
        5001,
        "checking stopped at this line after 10,000 errors; the lines after it were not checked",
    )
    assert str(error).splitlines()[-2:] == [
        "... and 9950 more errors",
        "bomb.run:5001: checking stopped at this line after 10,000 errors; the lines after "
        "it were not checked",
    ]


def test_a_file_with_fewer_errors_than_the_cap_is_checked_to_its_end():
    data = BAD_LINES[: len(BAD_LINES) // 3] + b"2 Q0 b 1 1.0 run\n1 Q0 b 1 x run\n"
    with pytest.raises(TrecFormatError) as caught:
        read_run(data, name="f")
    error = caught.value
    bad = data.count(b"\n") - 2  # one error on the first, two on each other; one on the last
    assert (error.total, error.stopped_at) == ((2 * bad - 1) + 1, None)
    assert str(error).splitlines()[-1] == f"... and {error.total - MAX_ERRORS} more errors"


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


def test_package_is_pure_stdlib_polars_and_numpy():
    # numpy sorts the pair hashes of the duplicate check (several times faster than polars).
    code = (
        "import sys, evaluation.trec; "
        "print(sorted({m.split('.')[0] for m in sys.modules} "
        "& {'django', 'rest_framework', 'pandas', 'pyarrow'}))"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert done.stdout.strip() == "[]", f"evaluation.trec imports {done.stdout.strip()}"


# --- reading only some columns ----------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [RUN, b"301  Q0 D1 1 2.5 bm25\n301 Q0 D2 2 1.5 bm25\n302 Q0 D1\t1 -3e2 bm25\n"],  # two paths
)
def test_read_run_keeps_the_columns_asked_for_in_that_order(data):
    frame = read_run(data, columns=("score", "qid", "docno"))
    assert frame.columns == ["score", "qid", "docno"]
    assert frame.rows() == [(2.5, "301", "D1"), (1.5, "301", "D2"), (-300.0, "302", "D1")]
    assert read_qrels(QRELS, columns=["grade"])["grade"].to_list() == [2, 0, -1]


def test_columns_left_out_are_still_checked():
    data = b"1 Q0 a 1 1.0 t\n1 Q0 b 2 x t\n1 Q0 c 3 3.0\n"
    with pytest.raises(TrecFormatError) as caught:
        read_run(data, name="run.txt", columns=("qid", "docno", "score"))
    assert [str(error) for error in caught.value.errors] == [
        "run.txt:2: score 'x' is not a number",
        "run.txt:3: expected at least 6 fields (qid Q0 docno rank score tag), found 5",
    ]


@pytest.mark.parametrize("columns", [(), ("qid", "qid"), ("qid", "grade"), "qid", (1, 2)])
def test_columns_must_name_distinct_columns_of_the_file(columns):
    with pytest.raises(ValueError, match="columns must"):
        read_run(RUN, columns=columns)
