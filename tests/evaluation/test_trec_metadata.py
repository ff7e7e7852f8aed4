"""evaluation.trec.metadata: ir_metadata headers at the top of run files, read as YAML with
file:line errors; the run lines are read as before (the header stays comments), and
``manage.py evaluate`` prints what trec_eval 10.0 prints for such a file."""

import gzip
import os
import subprocess

import pytest

from evaluation import trec
from evaluation.cli import main as cli
from evaluation.trec import TrecFormatError
from evaluation.trec import metadata as run_metadata

LINES = b"1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\n2 Q0 d3 1 0.5 bm25\n"
HEADER = b"""# ir_metadata.start
# tag: bm25-rm3
# platform:
#   software:
#     libraries:
#       - pyserini==0.22
# method:
#   retrieval:
#     - name: bm25
#       k1: 0.9
#       b: 0.4
# date: 2024-05-01
# ir_metadata.end
"""


def read(data: bytes):
    return run_metadata.read_ir_metadata(data, name="bm25.run")


def error_of(data: bytes) -> str:
    with pytest.raises(TrecFormatError) as error:
        read(data)
    [line] = error.value.errors
    return str(line)


def test_a_header_is_read_as_yaml_with_its_lines_and_text():
    header = read(HEADER + LINES)

    assert header.data == {
        "tag": "bm25-rm3",
        "platform": {"software": {"libraries": ["pyserini==0.22"]}},
        "method": {"retrieval": [{"name": "bm25", "k1": 0.9, "b": 0.4}]},
        "date": "2024-05-01",  # a YAML date, kept as JSON can hold it
    }
    assert (header.start, header.end) == (1, 13)
    assert header.text.startswith("tag: bm25-rm3\nplatform:\n  software:\n")


def test_a_run_without_a_header_has_no_metadata():
    assert read(LINES) is None
    assert read(b"# a comment\n" + LINES) is None


def test_a_header_not_at_the_top_is_an_ordinary_comment():
    assert read(LINES + HEADER) is None


def test_blank_lines_a_byte_order_mark_crlf_and_gzip_are_read_as_the_run_reader_reads_them():
    data = b"\xef\xbb\xbf\n" + HEADER.replace(b"\n", b"\r\n") + LINES

    assert read(data).data["tag"] == "bm25-rm3"
    assert read(data).start == 2
    assert read(gzip.compress(data)).data["tag"] == "bm25-rm3"


def test_an_empty_header_is_an_empty_mapping():
    assert read(b"# ir_metadata.start\n# ir_metadata.end\n" + LINES).data == {}


def test_the_run_lines_are_the_same_with_or_without_a_header():
    with_header = trec.read_run(HEADER + LINES, name="a.run")
    without = trec.read_run(LINES, name="a.run")

    assert with_header.equals(without)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            b"# ir_metadata.start\n# tag: x\n",
            "bm25.run:1: the ir_metadata header that starts here has no '# ir_metadata.end' line",
        ),
        (
            b"# ir_metadata.start\n# tag: x\n" + LINES,
            "bm25.run:3: the ir_metadata header started on line 1 has not ended (with "
            "'# ir_metadata.end'), and this line is not a comment starting with '#'",
        ),
        (
            b"# ir_metadata.start\n# tag: x\n# method: [bm25\n# ir_metadata.end\n" + LINES,
            "bm25.run:3: the ir_metadata header is not valid YAML: expected ',' or ']', "
            "but got '<stream end>'",
        ),
        (
            b"# ir_metadata.start\n# a: 1\n#  b: 2\n# ir_metadata.end\n" + LINES,
            "bm25.run:3: the ir_metadata header is not valid YAML: mapping values are not "
            "allowed here",
        ),
        (
            b"# ir_metadata.start\n# - bm25\n# ir_metadata.end\n" + LINES,
            "bm25.run:2: the ir_metadata header must be a YAML mapping (key: value lines), "
            "not a list",
        ),
        (
            b"# ir_metadata.start\n# a: &x [1, 2]\n# b: *x\n# ir_metadata.end\n" + LINES,
            "bm25.run:2: the ir_metadata header uses YAML anchors or aliases (& or *), which "
            "are not accepted",
        ),
        (
            b"# ir_metadata.start\n# a: !!python/object:os.system x\n# ir_metadata.end\n",
            "bm25.run:2: the ir_metadata header is not valid YAML: could not determine a "
            "constructor for the tag 'tag:yaml.org,2002:python/object:os.system'",
        ),
        (
            b"# ir_metadata.start\n# a: \xff\n# ir_metadata.end\n" + LINES,
            "bm25.run:2: the ir_metadata header is not valid UTF-8",
        ),
        (
            b"# ir_metadata.start\n# a: .nan\n# ir_metadata.end\n" + LINES,
            "bm25.run:2: the ir_metadata header holds a number that is not finite (nan)",
        ),
    ],
    ids=[
        "no-end",
        "run-line-before-end",
        "yaml",
        "indent",
        "list",
        "alias",
        "python-tag",
        "utf8",
        "nan",
    ],
)
def test_a_bad_header_is_refused_with_its_file_and_line(data, expected):
    assert error_of(data) == expected


def header(*lines: str) -> bytes:
    body = b"".join(b"# " + line.encode() + b"\n" for line in lines)
    return b"# ir_metadata.start\n" + body + b"# ir_metadata.end\n" + LINES


DEEP = 20_000  # the 40 KB header that held a worker for 3 minutes, then raised RecursionError


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            header("method: " + "[" * DEEP + "]" * DEEP),
            "bm25.run:2: the ir_metadata header nests mappings and lists deeper than 32 levels",
        ),
        (
            header("method: " + "{a: " * 5000 + "1" + "}" * 5000),
            "bm25.run:2: the ir_metadata header nests mappings and lists deeper than 32 levels",
        ),
        (
            header(*(" " * level + "k:" for level in range(40))),
            "bm25.run:34: the ir_metadata header nests mappings and lists deeper than 32 levels",
        ),
        (
            header("method:", " " + "- " * 40 + "x"),
            "bm25.run:3: the ir_metadata header nests mappings and lists deeper than 32 levels",
        ),
        (
            # Sequences at their mapping's indentation have no start token of their own.
            header("k:", *("  " * level + "- k:" for level in range(1, 20))),
            "bm25.run:18: the ir_metadata header nests mappings and lists deeper than 32 levels",
        ),
        (
            header("date: 2020-13-45"),
            "bm25.run:2: the ir_metadata header holds a date that does not exist "
            "('2020-13-45': month must be in 1..12)",
        ),
        (
            header("seed: " + "9" * 60_000),
            "bm25.run:2: the ir_metadata header holds a key or value longer than 8,192 characters",
        ),
        (
            header("seed: " + "9" * 5000),
            "bm25.run:2: the ir_metadata header holds an integer outside the signed 64-bit "
            "range (" + "9" * 37 + "...)",
        ),
        (
            header("seed: 9223372036854775808"),
            "bm25.run:2: the ir_metadata header holds an integer outside the signed 64-bit "
            "range (9223372036854775808)",
        ),
        (
            header("tag: a", "k1: 1.0e+999"),
            "bm25.run:3: the ir_metadata header holds a number that is not finite (inf)",
        ),
        (
            header("tag: a", "k1: 0.9", "tag: b"),
            "bm25.run:4: the ir_metadata header gives the key 'tag' twice in one mapping",
        ),
    ],
    ids=[
        "flow-lists",
        "flow-mappings",
        "block-mappings",
        "compact-lists",
        "indentless-lists",
        "date",
        "60000-digits",
        "5000-digits",
        "int64",
        "inf",
        "duplicate-key",
    ],
)
def test_a_header_past_a_bound_is_refused_before_it_is_parsed(data, expected):
    assert error_of(data) == expected


def test_a_header_at_the_bounds_is_read():
    nested = "[" * 31 + "1" + "]" * 31  # 32 levels with the mapping around it
    data = header(
        "deep: " + nested,
        "seed: 9223372036854775807",
        "note: " + "x" * run_metadata.MAX_SCALAR_CHARS,
        "day: 2024-02-29",
    )
    metadata = read(data).data
    assert (metadata["seed"], metadata["day"], len(metadata["note"])) == (
        2**63 - 1,
        "2024-02-29",
        8192,
    )
    value = metadata["deep"]
    for _ in range(30):
        [value] = value
    assert value == [1]


def test_any_other_failure_of_the_yaml_library_is_a_file_line_error(monkeypatch):
    def broken(self, node):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(
        run_metadata._HeaderLoader.yaml_constructors, "tag:yaml.org,2002:seq", broken
    )
    assert error_of(header("a: [1]")) == (
        "bm25.run:1: the ir_metadata header could not be read as YAML (RecursionError: "
        "maximum recursion depth exceeded)"
    )


def test_a_header_too_long_is_refused_at_its_start():
    body = b"".join(b"# k%d: %d\n" % (i, i) for i in range(run_metadata.MAX_HEADER_LINES + 1))

    message = error_of(b"# ir_metadata.start\n" + body + b"# ir_metadata.end\n")

    assert message == ("bm25.run:1: the ir_metadata header is longer than 10,000 lines or 64 KiB")


def test_a_header_of_more_than_64_kib_is_refused_at_its_start():
    data = header(*(f"k{i}: " + "x" * 1000 for i in range(70)))
    assert error_of(data) == (
        "bm25.run:1: the ir_metadata header is longer than 10,000 lines or 64 KiB"
    )


def test_evaluate_prints_what_trec_eval_10_prints_for_a_run_with_a_header(tmp_path, capsys):
    """trec_eval 10.0 skips lines starting with '#' (checked with its binary: the ir_metadata
    lines change nothing); 9.0.8 stops at them ("Malformed line"), and we keep reading them
    as comments under both, as for any comment."""
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n")
    plain, headed = tmp_path / "plain.run", tmp_path / "headed.run"
    plain.write_bytes(LINES)
    headed.write_bytes(HEADER + LINES)
    outputs = []
    for run in (plain, headed):
        assert cli.main(["-q", "--trec-eval-version", "10", str(qrels), str(run)]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    binary = os.environ.get("TREC_EVAL")
    if not binary:
        pytest.skip("set TREC_EVAL to a trec_eval 10.0 binary to compare with it")
    reference = subprocess.run([binary, "-q", qrels, headed], capture_output=True, text=True)
    assert reference.returncode == 0, reference.stderr
    assert outputs[1] == reference.stdout
