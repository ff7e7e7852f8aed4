"""`evaluate` without Django: trec_eval's flags, its output byte for byte, on plain files.

`manage.py evaluate QRELS RUN` hands two plain files straight to ``main`` before Django is
set up (about half a second saved per call, which matters when CI scores many runs); the
Django command shares this parser and these writers for stored qrels and runs. Pure.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import itertools
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from evaluation import cli_inputs, measures, trec
from evaluation.measures import reference, specs
from evaluation.measures.inputs import check_measures, default_measures

DESCRIPTION = (
    "Score a run against qrels like trec_eval. QRELS and RUN are file paths (the database "
    "is not touched) or stored names: qrels NAME or NAME@VERSION, run SYSTEM/RUN."
)


FORMATS = ("trec", "json", "csv", "ir_measures")


class UsageError(Exception):
    """A mistake in the command line or the input files; printed, exit status 1."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Optional only so that --list-measures needs no files; check_files insists otherwise.
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
    cli_inputs.add_arguments(parser)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="trec",
        help="trec: trec_eval's names and layout; ir_measures: its 'qid measure value' lines "
        "(measure names in its dialect); json; csv",
    )
    parser.add_argument(
        "--save", action="store_true", help="store the evaluation (stored qrels and run only)"
    )


MISSING_FILES = "QRELS and RUN are required (or --list-measures)"


def check_files(args) -> None:
    if not args.qrels or not args.run:
        raise UsageError(MISSING_FILES)


def options_from(args) -> tuple[list[str], measures.Options]:
    """The measure specs and engine options for parsed arguments, read by
    evaluation.measures.specs as every other input shape is; UsageError if invalid."""
    if getattr(args, "num_docs_in_coll", 0) < 0:
        raise UsageError(
            f"-N {args.num_docs_in_coll}: a collection cannot hold fewer than 0 documents"
        )
    rel_format = getattr(args, "rel_format", "qrels")
    try:
        chosen = specs.read_scoring_options(
            measures=args.measures,
            gain=args.gain,
            relevance_level=args.relevance_level,
            complete=args.complete,
            depth=args.depth,
            trec_eval_version=args.trec_eval_version,
            default_measures=default_measures(rel_format),
        )
        options = dataclasses.replace(
            chosen.options,
            judged_only=getattr(args, "judged_only", False),
            num_docs_in_coll=getattr(args, "num_docs_in_coll", 0),
        )
        requests = measures.parse_requests(chosen.measures)
        trec_specs = [r.trec for r in requests if r.trec is not None]
        if trec_specs:
            check_measures(rel_format, measures.parse_measures(trec_specs))
    except ValueError as error:
        raise UsageError(str(error)) from None
    return list(chosen.measures), options


# What scoring and the runid need; every line is still checked in full.
SCORING_COLUMNS = ("qid", "docno", "score", "tag")


def read_file(reader, path: Path, **options):
    """The file read by ``reader``; a run's notices (what trec_eval accepts but its author may
    not mean, such as fields after the sixth) go to stderr, never to the scores on stdout."""
    notices: list[trec.Notice] = []
    if reader is trec.read_run:
        options["notices"] = notices
    try:
        frame = reader(path, name=str(path), **options)
    except trec.TrecFormatError as error:
        raise UsageError(str(error)) from None
    _write_notices(notices)
    return frame


def score(qrels, run, specs, options, *, rel_format="qrels", zscores=None) -> measures.Evaluation:
    """``qrels`` is the relevance frame of ``rel_format`` (cli_inputs.read_relevance)."""
    try:
        return cli_inputs.evaluate(rel_format, qrels, run, specs, options, zscores)
    except ValueError as error:
        raise UsageError(str(error)) from None


def render(
    result: measures.Evaluation, *, fmt: str, per_topic: bool, runid: str, summary: bool = True
) -> str:
    if fmt == "trec":
        return measures.format_trec_eval(result, per_topic=per_topic, runid=runid, summary=summary)
    if fmt == "json":
        return _json(result, per_topic=per_topic, runid=runid)
    if fmt == "ir_measures":
        return _ir_measures(result, per_topic=per_topic)
    return _csv(result, per_topic=per_topic)


def _ir_measures(result: measures.Evaluation, *, per_topic: bool) -> str:
    """What `ir_measures QRELS RUN MEASURES [-q]` prints: 'qid<TAB>measure<TAB>value' per
    topic and 'all' lines with -q, 'measure<TAB>value' lines without; 4 decimals."""
    names = measures.ir_names(result.measures, result.options.relevance_level)
    lines = []
    if per_topic:
        for row in result.per_topic.iter_rows(named=True):
            qid = row.pop("qid")
            lines += [f"{qid}\t{names[name]}\t{row[name]:.4f}\n" for name in result.measures]
        lines += [f"all\t{names[n]}\t{result.means[n]:.4f}\n" for n in result.measures]
    else:
        lines += [f"{names[n]}\t{result.means[n]:.4f}\n" for n in result.measures]
    return "".join(lines)


def _json(result, *, per_topic, runid) -> str:
    options = result.options
    document = {
        "runid": runid,
        "options": {
            "relevance_level": options.relevance_level,
            "gain": options.gain,
            "trec_eval_version": options.trec_eval_version,
            "depth": options.depth,
            "complete": options.complete,
            "judged_only": options.judged_only,
            "num_docs_in_coll": options.num_docs_in_coll,
            "zscores": result.zscored,
        },
        "measures": result.measures,
        "ir_measures_names": measures.ir_names(result.measures, options.relevance_level),
        "all": result.means,
    }
    if per_topic:
        document["per_topic"] = {
            row.pop("qid"): row for row in result.per_topic.iter_rows(named=True)
        }
    return json.dumps(document, indent=2) + "\n"


def _csv(result, *, per_topic) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["qid", *result.measures])
    if per_topic:
        for row in result.per_topic.iter_rows():
            writer.writerow([row[0], *map(repr, row[1:])])
    writer.writerow(["all", *(repr(result.means[name]) for name in result.measures)])
    return buffer.getvalue()


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


def score_run_file(
    qrels, path: Path, specs, options, *, rel_format="qrels", zscores=None, chunk_lines=None
) -> tuple[measures.Evaluation, str]:
    """The run file at ``path`` scored (as ``score``) and its runid. Runs whose topics each
    come in one block of lines are read and scored in chunks of whole topics; any other file
    is read whole, which also reports its errors.

    ``qrels`` is the relevance frame, or a function that returns it (raising UsageError for a
    bad file; ``main`` reads the qrels file on a thread that way): it is called once the run's
    first chunk is read, so the two files are read at once, and its errors still come before
    the run file's."""
    if rel_format == "qrels":
        try:
            chunkable = measures.can_chunk(specs, options)
        except ValueError as error:
            _resolved(qrels)
            raise UsageError(str(error)) from None
        if chunkable:
            large = path.stat().st_size >= CHUNKED_BYTES
            lines = chunk_lines or (trec.CHUNK_LINES if large else PIPELINE_CHUNK_LINES)
            return _score_in_chunks(qrels, path, specs, options, zscores, lines, keep=not large)
    qrels = _resolved(qrels)
    run = read_file(trec.read_run, path, columns=SCORING_COLUMNS)
    return score(qrels, run, specs, options, rel_format=rel_format, zscores=zscores), runid_of(run)


def _resolved(qrels):
    return qrels() if callable(qrels) else qrels


def _score_in_chunks(qrels, path, specs, options, zscores, chunk_lines, *, keep):
    """score_run_file's chunked path; a file the chunks cannot vouch for is read whole (with
    its errors and notices, as read_file reads it) and scored whole."""
    tags = []
    reader = trec.RunTopics(
        path, name=str(path), chunk_lines=chunk_lines, columns=SCORING_COLUMNS, keep=keep
    )

    def chunks():
        for chunk in reader:
            tags[:] = [runid_of(chunk)]
            yield chunk

    notices: list[trec.Notice] = []
    try:
        with reader:
            given = chunks()
            try:
                first = next(given, None)  # the qrels are read meanwhile, if on a thread
            except trec.NotInTopicBlocks:
                first = given = None
            qrels = _resolved(qrels)
            if given is not None:
                try:
                    result = measures.evaluate_in_chunks(
                        qrels,
                        itertools.chain([] if first is None else [first], given),
                        specs,
                        options,
                        zscores=zscores,
                    )
                    return result, tags[0] if tags else ""
                except trec.NotInTopicBlocks:
                    pass  # read whole below, once the chunks' frames are let go
                except ValueError as scoring_error:
                    # As on the whole path, the run file's own errors come before scoring's.
                    if not reader.finished:
                        reader.read_whole(notices)
                        _write_notices(notices)
                    raise UsageError(str(scoring_error)) from None
            first = given = None
            run = reader.read_whole(notices)
    except trec.TrecFormatError as error:
        _resolved(qrels)  # the qrels file's errors first
        raise UsageError(str(error)) from None
    _write_notices(notices)
    return score(qrels, run, specs, options, zscores=zscores), runid_of(run)


def _write_notices(notices: list[trec.Notice]) -> None:
    for notice in notices:
        sys.stderr.write(f"notice: {notice}\n")


def runid_of(run_frame) -> str:
    # trec_eval prints the tag of the run file's last line as the runid.
    # An expression: the reader stores a tag shared by every line once, not per line.
    return run_frame.select(pl.col("tag").last()).item() if run_frame.height else ""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="manage.py evaluate", description=DESCRIPTION)
    add_arguments(parser)
    return parser


def files_only(argv: list[str]) -> bool:
    """True when ``argv`` names two existing files and nothing needs Django (no --save, no
    Django options such as --settings): then ``main`` can run without setting Django up."""
    try:
        args, unknown = build_parser().parse_known_args(argv)
    except SystemExit:  # a usage error: let Django's command report it the usual way
        return False
    if unknown or args.save:
        return False
    if args.list_measures:
        return True
    return bool(args.qrels and args.run) and Path(args.qrels).is_file() and Path(args.run).is_file()


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.list_measures:
        sys.stdout.write(reference.format_text())
        return 0
    try:
        check_files(args)
        specs, options = options_from(args)
        # The qrels file is read on a thread while the run's first pieces are read (its
        # errors still come first: score_run_file asks for it before looking at the run's).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="qrels") as pool:
            qrels = pool.submit(
                cli_inputs.read_relevance, args.rel_format, Path(args.qrels), read_file
            ).result
            try:
                zscores = cli_inputs.read_zscores(args.zscores, read_file)
            except UsageError:
                qrels()
                raise
            scored = {"rel_format": args.rel_format, "zscores": zscores}
            result, runid = score_run_file(qrels, Path(args.run), specs, options, **scored)
    except UsageError as error:
        # The same words Django's CommandError prints, so both paths read alike.
        sys.stderr.write(f"CommandError: {error}\n")
        return 1
    output = render(
        result, fmt=args.format, per_topic=args.per_topic, runid=runid, summary=args.summary
    )
    sys.stdout.write(output)
    sys.stdout.flush()
    return 0
