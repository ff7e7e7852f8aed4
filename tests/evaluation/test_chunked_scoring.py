"""Large runs are scored in chunks of whole topics (evaluation.trec.topics,
evaluation.measures.chunked): the output must be byte for byte the in-memory path's, per
topic (-q), without the summary (-n) and in every format; files the chunked reader cannot
vouch for are read whole, errors and all."""

from pathlib import Path

import polars as pl
import pytest

from evaluation import cli, cli_inputs, measures, trec
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


def outputs(qrels_path: Path, run_path: Path, flags: list[str]) -> list[str]:
    """What evaluate prints for these files and flags in each format, -q and not."""
    args = cli.build_parser().parse_args([str(qrels_path), str(run_path), *flags])
    specs, options = cli.options_from(args)
    qrels = cli_inputs.read_relevance("qrels", qrels_path, cli.read_file)
    zscores = cli_inputs.read_zscores(args.zscores, cli.read_file)
    try:
        result, runid = cli.score_run_file(qrels, run_path, specs, options, zscores=zscores)
    except cli.UsageError as error:
        return [f"error: {error}"]
    return [
        cli.render(result, fmt=fmt, per_topic=per_topic, runid=runid, summary=args.summary)
        for fmt in cli.FORMATS
        for per_topic in (True, False)
    ]


@pytest.fixture
def chunked(monkeypatch):
    """Run evaluate with every run file chunked: ``chunked(lines, piece_bytes)``."""
    calls = []
    original = topic_chunks.iter_run_topics

    def configure(lines: int, piece_bytes: int | None) -> None:
        monkeypatch.setattr(cli, "CHUNKED_BYTES", 0)

        def iterate(path, **options):
            calls.append(path)
            options["chunk_lines"] = lines
            return original(path, **options, piece_bytes=piece_bytes)

        monkeypatch.setattr(trec, "iter_run_topics", iterate)

    configure.calls = calls
    return configure


@pytest.mark.parametrize("seed", SEEDS)
def test_chunked_scoring_prints_what_the_in_memory_path_prints(tmp_path, seed, chunked):
    qrels, run = write_files(tmp_path, seed)
    expected = {tuple(flags): outputs(qrels, run, flags) for flags in COMMAND_LINES}
    for lines, piece_bytes in CHUNKINGS:
        chunked(lines, piece_bytes)
        for flags in COMMAND_LINES:
            got = outputs(qrels, run, flags)
            assert got == expected[tuple(flags)], (seed, lines, piece_bytes, flags)
    assert chunked.calls, "the chunked path was never taken"


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


def test_declined_files_are_read_whole_with_the_same_errors_and_numbers(tmp_path, chunked):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 c 1\n2 0 b 1\n")
    run = tmp_path / "run"
    good = "1 Q0 a 1 2.0 t\n2 Q0 b 1 2.0 t\n1 Q0 c 2 1.0 t\n"  # topic 1 comes back
    bad = "1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n"
    results = {}
    for setting in ("whole", "chunked"):
        if setting == "chunked":
            chunked(1, 16)
        for name, text in (("good", good), ("bad", bad)):
            run.write_text(text)
            results[setting, name] = outputs(qrels, run, ["-q", "-m", "map", "-m", "P.1"])
    assert results["whole", "good"] == results["chunked", "good"]
    assert results["whole", "bad"] == results["chunked", "bad"]
    assert results["chunked", "bad"] == [
        f"error: {run}:2: docno 'a' already appears for topic '1' on line 1"
    ]


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
