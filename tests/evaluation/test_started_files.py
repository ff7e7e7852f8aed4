"""`manage.py evaluate QRELS RUN` starts reading both files before the scoring engine is
imported (evaluation.cli.start.StartedFiles); evaluation.cli.main then takes what was started. The
output, the notices, the errors and their order must be what cli prints when it reads the
files itself, for every kind of file and request."""

import threading

import pytest

from evaluation import trec
from evaluation.cli import main as cli
from evaluation.cli import start as cli_start
from evaluation.trec import canonical
from evaluation.trec import topics as topic_chunks

from .test_chunked_scoring import COMMAND_LINES, DECLINED, write_files

QRELS = "1 0 a 1\n1 0 c 1\n2 0 b 1\n1 0 d3 1\n3 0 d7 2\n3 0 x 1\n"


def main(argv, capsys, *, started):
    begun = cli_start.start(argv) if started else None
    try:
        code = cli.main(argv, begun)
    finally:
        if begun is not None:
            begun.close()
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(params=[(True, None), (False, None), (True, 64), (False, 64)])
def reading(request, monkeypatch):
    """Pieces kept or not (as for files under or over CHUNKED_BYTES), of the usual size or
    of 64 bytes, so that topics straddle pieces."""
    keep, piece_bytes = request.param
    monkeypatch.setattr(cli_start, "CHUNKED_BYTES", 1 << 60 if keep else 0)
    monkeypatch.setattr(cli_start, "PIPELINE_CHUNK_LINES", 7)
    monkeypatch.setattr(trec, "CHUNK_LINES", 7)
    if piece_bytes:
        monkeypatch.setattr(topic_chunks, "PIECE_BYTES", piece_bytes)
    return request.param


@pytest.mark.parametrize("seed", range(3))
def test_started_files_print_what_cli_prints_reading_them_itself(tmp_path, seed, reading, capsys):
    qrels, run = write_files(tmp_path, seed)
    command_lines = [
        *COMMAND_LINES,
        ["-q", "-m", "ERR@20", "-m", "P(rel=2)@5"],  # scored whole: the started run read whole
        ["-R", "qrels_prefs", "-q"],  # another relevance format: the qrels are not started
        ["-q", "-m", "map", "--format", "json"],
    ]
    for flags in command_lines:
        argv = [str(qrels), str(run), *flags]
        expected = main(argv, capsys, started=False)
        assert main(argv, capsys, started=True) == expected, flags


def test_declined_runs_read_alike_with_their_errors_and_notices(tmp_path, reading, capsys):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS)
    for text in DECLINED.values():
        run.write_text(text)
        argv = [str(qrels), str(run), "-q", "-m", "map", "-m", "P.1"]
        expected = main(argv, capsys, started=False)
        assert main(argv, capsys, started=True) == expected, text


def test_the_qrels_files_errors_still_come_first(tmp_path, reading, capsys):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a one\n")
    run.write_text(DECLINED["a bad score at the end"])
    argv = [str(qrels), str(run), "-m", "map"]
    expected = main(argv, capsys, started=False)
    assert expected == (1, "", f"CommandError: {qrels}:1: grade 'one' is not an integer\n")
    assert main(argv, capsys, started=True) == expected
    # A bad measure name is found before either file is looked at.
    argv = [str(qrels), str(run), "-m", "no_such_measure"]
    code, out, err = main(argv, capsys, started=True)
    assert (code, out) == (1, "") and "no_such_measure" in err
    assert main(argv, capsys, started=False) == (code, out, err)


def test_start_parses_the_first_pieces_before_any_chunk_is_asked_for(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.write_text(DECLINED["a bad score at the end"].replace(" high ", " 0.5 "))
    parsed = threading.Event()
    original = canonical._checked_and_parsed

    def recorded(*args):
        result = original(*args)
        parsed.set()
        return result

    monkeypatch.setattr(canonical, "_checked_and_parsed", recorded)
    with trec.RunTopics(run, chunk_lines=10, piece_bytes=200, keep=True) as reader:
        reader.start()
        assert parsed.wait(timeout=30), "no piece was parsed before the chunks were asked for"
        chunks = list(reader)
    assert [chunk.height for chunk in chunks] == [30, 30, 31]
    # Started but never iterated, a reader still gives the whole file.
    with trec.RunTopics(run, chunk_lines=10, piece_bytes=200, keep=True) as reader:
        reader.start()
        assert reader.read_whole().equals(trec.read_run(run, columns=reader.columns))


def test_started_files_are_taken_only_for_the_files_started(tmp_path):
    qrels, run = write_files(tmp_path, 0)
    other = tmp_path / "other"
    other.write_text(run.read_text())
    started = cli_start.StartedFiles(qrels, run)
    try:
        assert started.qrels(other) is None
        assert started.run(other) is None
        assert started.run(run, chunk_lines=5) is None  # not the reader that was started
        assert started.qrels(qrels).equals(trec.read_qrels(qrels))
        assert started.qrels(qrels) is None  # taken once
        reader = started.run(run)
        assert reader is not None and started.run(run) is None
        with reader:
            assert sum(chunk.height for chunk in reader) == len(run.read_text().splitlines())
    finally:
        started.close()
    # Nothing is started for other relevance formats' files, nor for a run that cannot open.
    started = cli_start.StartedFiles(qrels, tmp_path, rel_format="prefs")
    try:
        assert started.qrels(qrels) is None
        assert started.run(tmp_path) is None
    finally:
        started.close()


@pytest.mark.parametrize(
    "flags",
    [
        ["-m", "ERR@20"],  # scored whole: the qrels' error comes before the run is read
        ["-m", "map"],  # scored in chunks
        ["-m", "no_such_measure"],  # refused before either file is read
    ],
)
def test_a_started_run_is_let_go_whatever_goes_wrong(tmp_path, monkeypatch, capsys, flags):
    monkeypatch.setattr(topic_chunks, "PIECE_BYTES", 64)  # many pieces, so reading takes a while
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a one\n")
    run.write_text(DECLINED["a bad score at the end"].replace(" high ", " 0.5 "))
    code, out, err = main([str(qrels), str(run), *flags], capsys, started=True)
    assert code == 1 and out == "" and err.startswith("CommandError: ")
    readers = [t.name for t in threading.enumerate() if t.name.startswith("trec-piece")]
    assert readers == [], "the run's reading workers outlived the command"
