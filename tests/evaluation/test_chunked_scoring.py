"""Runs are scored in chunks of whole topics while the rest of the file is read
(evaluation.trec.topics, evaluation.measures.chunked): the output must be byte for byte the
in-memory path's, per topic (-q), without the summary (-n) and in every format, with the pieces
read kept (files under cli_start.CHUNKED_BYTES) or not; files the chunked reader cannot vouch for are
read whole, errors, notices and all."""

from pathlib import Path

import polars as pl
import pytest

from evaluation import measures, trec
from evaluation.cli import inputs as cli_inputs
from evaluation.cli import main as cli
from evaluation.cli import start as cli_start
from evaluation.trec import topics as topic_chunks

from .trec_eval_data import COMMANDS, COMMANDS_10, generated_files

SEEDS = range(12)
COMMAND_LINES = [
    *COMMANDS.values(),
    *([*flags, "--trec-eval-version", "10"] for flags in COMMANDS.values()),
    *([*flags, "--trec-eval-version", "10"] for flags in COMMANDS_10.values()),
    ["-m", "official", "-J"],
    ["-q", "-m", "nDCG@10", "-m", "P@5", "-m", "AP", "-m", "Rprec", "-n"],
]
# (lines per chunk, bytes per piece): a topic per chunk and pieces of a few lines, so topics
# straddle pieces; then larger chunks.
CHUNKINGS = [(1, 64), (40, 200), (10_000, None)]


def write_files(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    qrels_text, run_text = generated_files(seed)
    qrels, run = tmp_path / f"qrels{seed}", tmp_path / f"run{seed}"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    return qrels, run


def outputs(qrels_path: Path, run_path: Path, flags: list[str], *, whole=False) -> list[str]:
    """What evaluate prints for these files and flags in each format, -q and not; ``whole``:
    the run read whole and scored in memory (cli.score), never in chunks."""
    args = cli_start.build_parser().parse_args([str(qrels_path), str(run_path), *flags])
    specs, options = cli.options_from(args)
    qrels = cli_inputs.read_relevance("qrels", qrels_path, cli.read_file)
    zscores = cli_inputs.read_zscores(args.zscores, cli.read_file)
    try:
        if whole:
            run = cli.read_file(trec.read_run, run_path, columns=cli_start.SCORING_COLUMNS)
            result = cli.score(qrels, run, specs, options, zscores=zscores)
            runid = cli.runid_of(run)
        else:
            result, runid = cli.score_run_file(qrels, run_path, specs, options, zscores=zscores)
    except cli.UsageError as error:
        return [f"error: {error}"]
    return [
        cli.render(result, fmt=fmt, per_topic=per_topic, runid=runid, summary=args.summary)
        for fmt in cli_start.FORMATS
        for per_topic in (True, False)
    ]


@pytest.fixture
def chunked(monkeypatch):
    """Run evaluate with every run file chunked: ``chunked(lines, piece_bytes, keep)``
    (``keep``: whether the pieces read are kept, as for files under cli_start.CHUNKED_BYTES)."""
    calls = []
    original = trec.RunTopics

    def configure(lines: int, piece_bytes: int | None, keep: bool = True) -> None:
        monkeypatch.setattr(cli_start, "CHUNKED_BYTES", 1 << 60 if keep else 0)

        def make(path, **options):
            calls.append((path, options["keep"]))
            options["chunk_lines"] = lines
            return original(path, **options, piece_bytes=piece_bytes)

        monkeypatch.setattr(trec, "RunTopics", make)

    configure.calls = calls
    return configure


@pytest.mark.parametrize("seed", SEEDS)
def test_chunked_scoring_prints_what_the_in_memory_path_prints(tmp_path, seed, chunked):
    qrels, run = write_files(tmp_path, seed)
    expected = {tuple(flags): outputs(qrels, run, flags, whole=True) for flags in COMMAND_LINES}
    for (lines, piece_bytes), keep in zip(CHUNKINGS, (True, False, True), strict=True):
        chunked(lines, piece_bytes, keep)
        for flags in COMMAND_LINES:
            got = outputs(qrels, run, flags)
            assert got == expected[tuple(flags)], (seed, lines, piece_bytes, keep, flags)
    assert {keep for _, keep in chunked.calls} == {True, False}


def test_chunks_hold_whole_topics_in_file_order(tmp_path):
    run = tmp_path / "run"
    lines = [f"{q} Q0 d{i} {i} {10 - i}.5 tag" for q in ("7", "3", "12") for i in range(1, 6)]
    run.write_text("\n".join(lines) + "\n")
    # Pieces of two lines; a chunk is cut at the first topic boundary after 6 lines.
    chunks = list(trec.iter_run_topics(run, chunk_lines=6, piece_bytes=40))
    assert [chunk.get_column("qid").unique(maintain_order=True).to_list() for chunk in chunks] == [
        ["7"],
        ["3"],
        ["12"],
    ]
    chunks = list(trec.iter_run_topics(run, chunk_lines=9, piece_bytes=1000))
    assert [chunk.height for chunk in chunks] == [10, 5]
    whole = trec.read_run(run, columns=("qid", "docno", "score", "tag"))
    assert pl.concat(chunks).equals(whole)


@pytest.mark.parametrize(
    "text",
    [
        # a topic that comes back after another
        "1 Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n1 Q0 c 2 1.0 t\n",
        # a repeated pair (an error the whole-file reader reports)
        "1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n",
        # runs of spaces: not the usual layout
        "1  Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n",
        # fields after the sixth: a notice
        "1 Q0 a 1 2.0 t x\n",
        # a bad score
        "1 Q0 a 1 2.0 t\n1 Q0 b 2 high t\n",
        # nothing but a comment
        "# nothing\n",
    ],
)
def test_files_the_chunked_reader_cannot_vouch_for_are_declined(tmp_path, text):
    run = tmp_path / "run"
    run.write_text(text)
    with pytest.raises(trec.NotInTopicBlocks):
        list(trec.iter_run_topics(run, chunk_lines=1, piece_bytes=16))


_MANY = "".join(f"{q} Q0 d{i} {i} {100 - i}.5 t\n" for q in (1, 2, 3) for i in range(30))
DECLINED = {
    "topic 1 comes back": "1 Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n1 Q0 c 2 1.0 t\n",
    "a repeated pair": "1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n",
    "a repeated pair in another chunk": _MANY + "1 Q0 d3 4 1.0 t\n",
    "a bad score at the end": _MANY + "3 Q0 x 1 high t\n",
    "fields after the sixth (a notice)": _MANY + "3 Q0 x 1 0.5 t extra\n",
    "a rank that is not an integer (a notice)": "1 Q0 a one 2.0 t\n" + _MANY,
    "nothing but a comment": "# nothing\n",
    "runs of spaces": "1  Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n",
}


@pytest.mark.parametrize("keep", [True, False])
def test_declined_files_are_read_whole_with_the_same_errors_and_numbers(
    tmp_path, chunked, capsys, keep
):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 c 1\n2 0 b 1\n1 0 d3 1\n3 0 d7 2\n3 0 x 1\n")
    run = tmp_path / "run"
    flags = ["-q", "-m", "map", "-m", "P.1"]
    for text in DECLINED.values():
        run.write_text(text)
        whole = outputs(qrels, run, flags, whole=True), capsys.readouterr()
        for piece_bytes in (16, 200, None):
            chunked(1, piece_bytes, keep)
            got = outputs(qrels, run, flags), capsys.readouterr()
            assert got == whole, (text, piece_bytes)
    assert chunked.calls
    run.write_text(DECLINED["a repeated pair"])
    assert outputs(qrels, run, flags) == [
        f"error: {run}:2: docno 'a' already appears for topic '1' on line 1"
    ]
    run.write_text(DECLINED["fields after the sixth (a notice)"])
    outputs(qrels, run, flags)
    assert capsys.readouterr().err.count("notice: ") == 1


def test_kept_pieces_are_not_read_again(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.write_text(_MANY + "1 Q0 late 1 0.5 t\n")  # topic 1 comes back at the very end
    expected = trec.read_run(run, columns=cli_start.SCORING_COLUMNS)

    def read_again(*args, **kwargs):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(topic_chunks, "read_run", read_again)
    with trec.RunTopics(run, chunk_lines=20, piece_bytes=100, keep=True) as reader:
        with pytest.raises(trec.NotInTopicBlocks):
            for chunk in reader:
                assert chunk.height >= 20
        assert not reader.finished
        assert reader.read_whole().equals(expected)


@pytest.mark.parametrize("keep", [True, False])
def test_a_run_files_errors_come_before_scorings(tmp_path, chunked, keep):
    # Exponential gain refuses the grade 63 before any chunk is scored; the whole path
    # reads the run first, so its error is the one reported.
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 63\n")
    run = tmp_path / "run"
    flags = ["-m", "ndcg", "--gain", "exp"]
    for text in (_MANY + "3 Q0 x 1 high t\n", _MANY):
        run.write_text(text)
        whole = outputs(qrels, run, flags, whole=True)
        chunked(5, 64, keep)
        assert outputs(qrels, run, flags) == whole
    assert whole == ["error: qrels: exponential gain needs grades <= 62"]


def test_requests_with_options_of_their_own_are_scored_whole():
    assert measures.can_chunk(["all_trec", "nDCG@10", "P(rel=1)@5"], measures.Options())
    assert not measures.can_chunk(["P(rel=2)@5"], measures.Options())
    assert not measures.can_chunk(["ERR@20"], measures.Options())
    with pytest.raises(ValueError, match="cannot be scored in chunks"):
        measures.evaluate_in_chunks(pl.DataFrame(), [], ["ERR@20"], measures.Options())


def test_the_django_command_chunks_large_files_too(tmp_path, chunked, capsys):
    from django.core.management import call_command

    qrels, run = write_files(tmp_path, 3)
    # The baseline ranks each topic's judged documents by grade.
    judged = sorted(line.split() for line in qrels.read_text().splitlines())
    baseline = tmp_path / "baseline"
    baseline.write_text("".join(f"{q} Q0 {d} 1 {g} base\n" for q, _, d, g in judged))
    flags = ["-q", "-m", "official", "--baseline", str(baseline), "--format", "json"]
    call_command("evaluate", str(qrels), str(run), *flags)
    whole = capsys.readouterr().out
    chunked(3, 64)
    call_command("evaluate", str(qrels), str(run), *flags)
    assert capsys.readouterr().out == whole
    assert len(chunked.calls) == 2  # the run and the baseline
