"""What `evaluate` needs before the scoring engine: its command line, and the start of reading
its two files.

`manage.py evaluate QRELS RUN` on two plain files parses its arguments here and starts reading
both files (``StartedFiles``) as soon as polars and evaluation.trec are loaded; it imports
evaluation.cli.main and the measures (about a tenth of a second of Python, on one core) while
worker threads parse the qrels and the run's first pieces on the other. evaluation.cli.main then
takes what was started, or starts the same readers itself (the Django command, tests): the
files are read, and their errors reported, alike either way. Pure.
"""

from __future__ import annotations

import argparse
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import polars as pl

from evaluation import trec

__all__ = [
    "CHUNKED_BYTES",
    "DESCRIPTION",
    "FORMATS",
    "MISSING_FILES",
    "PIPELINE_CHUNK_LINES",
    "SCORING_COLUMNS",
    "StartedFiles",
    "add_arguments",
    "build_parser",
    "files_only",
    "run_reader",
    "start",
]

DESCRIPTION = (
    "Score a run against qrels like trec_eval. QRELS and RUN are file paths (the database "
    "is not touched) or stored names: qrels NAME or NAME@VERSION, run SYSTEM/RUN."
)
FORMATS = ("trec", "json", "csv", "ir_measures")
MISSING_FILES = "QRELS and RUN are required (or --list-measures)"

# What scoring and the runid need; every line is still checked in full.
SCORING_COLUMNS = ("qid", "docno", "score", "tag")
# Runs whose topics each come in one block of lines (the usual case) are scored a chunk of
# whole topics at a time while worker threads read the next pieces of the file
# (evaluation.trec.topics, evaluation.measures.chunked): the same numbers, and the two cores
# read and score at once. Below CHUNKED_BYTES the pieces read are kept, so a file that is not
# in topic blocks is not read twice; from it on they are not (bounded memory), and such a
# file is read again whole.
CHUNKED_BYTES = 400_000_000
# Lines per chunk: small enough that scoring starts soon and the last chunk, scored once
# everything is read, is short; large enough that each chunk's fixed costs stay small.
PIPELINE_CHUNK_LINES = 500_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Optional only so that --list-measures needs no files; cli.check_files insists otherwise.
    parser.add_argument("qrels", nargs="?", help="qrels file, or stored NAME / NAME@VERSION")
    parser.add_argument("run", nargs="?", help="run file, or stored SYSTEM/RUN")
    parser.add_argument(
        "--list-measures",
        action="store_true",
        help="list every measure: its names in both dialects, parameters, formula, and how "
        "ties, unjudged documents and -c affect it; then exit",
    )
    parser.add_argument("-q", dest="per_topic", action="store_true", help="per-topic values too")
    parser.add_argument(
        "-m",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="a measure in trec_eval's dialect (ndcg_cut.10, P.5,10, map) or ir_measures' "
        "(nDCG@10, P(rel=2)@5, AP, RR@10, ERR@20, RBP(p=0.8)); repeatable, and the dialects "
        "mix (default: trec_eval's official set)",
    )
    parser.add_argument(
        "-c", dest="complete", action="store_true", help="score topics missing from the run as 0"
    )
    parser.add_argument(
        "-l",
        dest="relevance_level",
        default=None,
        metavar="LEVEL",
        help="lowest grade that counts as relevant for binary measures (default 1)",
    )
    parser.add_argument(
        "-M",
        dest="depth",
        default=None,
        metavar="DEPTH",
        help="score only the top DEPTH documents of each topic",
    )
    parser.add_argument(
        "--gain",
        choices=["linear", "exp"],
        default="linear",
        help="nDCG gain: the grade (trec_eval) or 2^grade-1",
    )
    parser.add_argument(
        "--trec-eval-version",
        type=int,
        choices=[9, 10],
        default=9,
        help="follow trec_eval 9.0.8 (default) or 10.0 semantics",
    )
    _add_trec_eval_inputs(parser)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="trec",
        help="trec: trec_eval's names and layout; ir_measures: its 'qid measure value' lines "
        "(measure names in its dialect); json; csv",
    )
    parser.add_argument(
        "--places",
        type=_places,
        default=4,
        metavar="N",
        help="decimals printed by the trec and ir_measures formats (default 4), or 'full': "
        "the shortest text that reads back as the same number",
    )
    parser.add_argument(
        "--save", action="store_true", help="store the evaluation (stored qrels and run only)"
    )


MAX_PLACES = 17  # a double's 17 significant digits; "full" prints every one that matters


def _places(text: str) -> int | str:
    if text.strip().lower() == "full":
        return "full"
    try:
        places = int(text)
    except ValueError:
        places = -1
    if not 0 <= places <= MAX_PLACES:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a number of decimals from 0 to {MAX_PLACES}, nor 'full'"
        )
    return places


def _add_trec_eval_inputs(parser: argparse.ArgumentParser) -> None:
    """trec_eval's inputs beyond qrels (read and scored by evaluation.cli.inputs)."""
    parser.add_argument(
        "-R",
        dest="rel_format",
        choices=trec.REL_FORMATS,
        default="qrels",
        metavar="FORMAT",
        help="format of the relevance file: qrels (default), prefs (qid jg jsg docno level), "
        "qrels_prefs (a qrels file read as preferences), qrels_jg (a qrels file whose "
        "iteration field names judgment groups)",
    )
    parser.add_argument(
        "-Z",
        dest="zscores",
        metavar="ZSCORES_FILE",
        help="print each value as a z-score, with the mean and standard deviation of each "
        "topic and measure from this file (lines: qid measure mean stddev)",
    )
    parser.add_argument(
        "-J",
        dest="judged_only",
        action="store_true",
        help="judged documents only: drop unjudged documents from each ranking first "
        "(trec_eval warns: easy to misread)",
    )
    parser.add_argument(
        "-N",
        dest="num_docs_in_coll",
        type=int,
        default=0,
        metavar="NUM",
        help="number of documents in the collection (trec_eval's utility measure uses it)",
    )
    parser.add_argument(
        "-n",
        dest="summary",
        action="store_false",
        help="no summary: print no 'all' lines (with -q, only the per-topic lines)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="manage.py evaluate", description=DESCRIPTION)
    add_arguments(parser)
    return parser


def files_only(argv: list[str]) -> bool:
    """True when ``argv`` names two existing files and nothing needs Django (no --save, no
    Django options such as --settings): then evaluation.cli.main can run without setting Django
    up."""
    try:
        args, unknown = build_parser().parse_known_args(argv)
    except SystemExit:  # a usage error: let Django's command report it the usual way
        return False
    if unknown or args.save:
        return False
    if args.list_measures:
        return True
    return bool(args.qrels and args.run) and Path(args.qrels).is_file() and Path(args.run).is_file()


def run_reader(path: Path, chunk_lines: int | None = None) -> trec.RunTopics:
    """The reader that scores the run file at ``path`` in chunks: its pieces kept below
    CHUNKED_BYTES, chunks of PIPELINE_CHUNK_LINES lines (trec.CHUNK_LINES from it on) unless
    ``chunk_lines`` says otherwise."""
    large = path.stat().st_size >= CHUNKED_BYTES
    lines = chunk_lines or (trec.CHUNK_LINES if large else PIPELINE_CHUNK_LINES)
    return trec.RunTopics(
        path, name=str(path), chunk_lines=lines, columns=SCORING_COLUMNS, keep=not large
    )


class StartedFiles:
    """The two files of `evaluate QRELS RUN` being read from now on: with ``-R qrels`` the
    qrels file on a thread of its own, and the run's pieces on run_reader's worker threads.

    ``qrels(path)`` gives trec.read_qrels' frame (or raises its error) for the file started,
    ``run(path)`` the started reader, inside its with block, for the caller to iterate (or
    read whole) and close; each is None for any other file, or when the run could not be
    opened (the caller's own reader then reports why). ``close`` lets go of whatever was not
    taken.
    """

    def __init__(self, qrels: Path, run: Path, *, rel_format: str = "qrels") -> None:
        self._qrels_path, self._run_path = qrels, run
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qrels")
        self._qrels: Future[pl.DataFrame] | None = None
        if rel_format == "qrels":
            self._qrels = self._pool.submit(trec.read_qrels, qrels, name=str(qrels))
        self._run: trec.RunTopics | None = None
        try:
            reader = run_reader(run)
            reader.__enter__()
        except (trec.TrecFormatError, OSError):
            return  # the caller's own reader says why
        reader.start()
        self._run = reader

    def qrels(self, path: Path, *, name: str | None = None) -> pl.DataFrame | None:
        """The started qrels file's frame, as trec.read_qrels(path, name=name) gives it."""
        if self._qrels is None or path != self._qrels_path or name not in (None, str(path)):
            return None
        future, self._qrels = self._qrels, None
        return future.result()

    def run(self, path: Path, chunk_lines: int | None = None) -> trec.RunTopics | None:
        """The started run reader, if it is what run_reader(path, chunk_lines) would give."""
        reader = self._run
        if reader is None or path != self._run_path or chunk_lines is not None:
            return None
        self._run = None
        return reader

    def close(self) -> None:
        # A qrels file not taken is left to finish on its thread (nothing waits for it).
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._qrels = None
        if self._run is not None:
            self._run.__exit__(None, None, None)  # waits for the pieces being parsed
            self._run = None


def start(argv: list[str]) -> StartedFiles | None:
    """The files of an `evaluate` command line that files_only accepts, started; None when
    there is nothing to read (--list-measures)."""
    args = build_parser().parse_args(argv)
    if args.list_measures:
        return None
    return StartedFiles(Path(args.qrels), Path(args.run), rel_format=args.rel_format)
