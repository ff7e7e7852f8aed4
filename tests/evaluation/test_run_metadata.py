"""evaluation.run_metadata: ir_metadata headers at the top of run files, read as YAML with
file:line errors; the run lines are read as before (the header stays comments), and
``manage.py evaluate`` prints what trec_eval 10.0 prints for such a file."""

import gzip
import os
import subprocess

import pytest

from evaluation import cli, run_metadata, trec
from evaluation.trec import TrecFormatError

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


def test_a_header_too_long_is_refused_at_its_start():
    body = b"".join(b"# k%d: %d\n" % (i, i) for i in range(run_metadata.MAX_HEADER_LINES + 1))

    message = error_of(b"# ir_metadata.start\n" + body + b"# ir_metadata.end\n")

    assert message.startswith("bm25.run:1: the ir_metadata header is longer than 10,000 lines")


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
