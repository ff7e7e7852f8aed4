"""`evaluate` without Django: trec_eval's flags, its output byte for byte, on plain files.

`manage.py evaluate QRELS RUN` hands two plain files straight to ``main`` before Django is
set up (about half a second saved per call, which matters when CI scores many runs); the
Django command shares this parser and these writers for stored qrels and runs. Pure.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from evaluation import measures, trec
from evaluation.cli import inputs as cli_inputs
from evaluation.cli.start import (
    MISSING_FILES,
    SCORING_COLUMNS,
    StartedFiles,
    build_parser,
    run_reader,
)
from evaluation.measures import reference, specs
from evaluation.measures.inputs import check_measures, default_measures


class UsageError(Exception):
    """A mistake in the command line or the input files; printed, exit status 1."""


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
            # ir_measures scores every topic of the qrels, those the run lacks too.
            complete=chosen.options.complete or getattr(args, "format", "") == "ir_measures",
        )
        requests = measures.parse_requests(chosen.measures)
        trec_specs = [r.trec for r in requests if r.trec is not None]
        if trec_specs:
            check_measures(rel_format, measures.parse_measures(trec_specs))
    except ValueError as error:
        raise UsageError(str(error)) from None
    return list(chosen.measures), options


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
    result: measures.Evaluation,
    *,
    fmt: str,
    per_topic: bool,
    runid: str,
    summary: bool = True,
    places: int | str = 4,
) -> str:
    if fmt == "trec":
        return measures.format_trec_eval(
            result, per_topic=per_topic, runid=runid, summary=summary, places=places
        )
    if fmt == "json":
        return _json(result, per_topic=per_topic, runid=runid)
    if fmt == "ir_measures":
        return measures.format_ir_measures(result, per_topic=per_topic, places=places)
    return _csv(result, per_topic=per_topic)


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


def score_run_file(
    qrels,
    path: Path,
    specs,
    options,
    *,
    rel_format="qrels",
    zscores=None,
    chunk_lines=None,
    started: StartedFiles | None = None,
) -> tuple[measures.Evaluation, str]:
    """The run file at ``path`` scored (as ``score``) and its runid. Runs whose topics each
    come in one block of lines are read and scored in chunks of whole topics; any other file
    is read whole, which also reports its errors.

    ``qrels`` is the relevance frame, or a function that returns it (raising UsageError for a
    bad file; ``main`` reads the qrels file on a thread that way): it is called once the run's
    first chunk is read, so the two files are read at once, and its errors still come before
    the run file's. The run is taken from ``started`` when it began reading it there."""
    reader = started.run(path, chunk_lines) if started is not None else None
    try:
        if rel_format == "qrels":
            try:
                chunkable = measures.can_chunk(specs, options)
            except ValueError as error:
                _resolved(qrels)
                raise UsageError(str(error)) from None
            if chunkable:
                reader = reader or run_reader(path, chunk_lines)
                return _score_in_chunks(qrels, reader, specs, options, zscores)
        qrels = _resolved(qrels)
        if reader is not None:  # begun for chunks: its pieces are the whole file's
            run = _read_whole(reader)
        else:
            run = read_file(trec.read_run, path, columns=SCORING_COLUMNS)
    finally:
        if reader is not None:  # its workers stop and its file closes, whatever happened
            reader.__exit__(None, None, None)
    return score(qrels, run, specs, options, rel_format=rel_format, zscores=zscores), runid_of(run)


def _resolved(qrels):
    return qrels() if callable(qrels) else qrels


def _read_whole(reader: trec.RunTopics):
    """What read_file(trec.read_run, ...) gives for the reader's file, from the reader."""
    notices: list[trec.Notice] = []
    try:
        with reader:
            run = reader.read_whole(notices)
    except trec.TrecFormatError as error:
        raise UsageError(str(error)) from None
    _write_notices(notices)
    return run


def _score_in_chunks(qrels, reader: trec.RunTopics, specs, options, zscores):
    """score_run_file's chunked path; a file the chunks cannot vouch for is read whole (with
    its errors and notices, as read_file reads it) and scored whole."""
    tags = []

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


def main(argv: list[str], started: StartedFiles | None = None) -> int:
    """`evaluate` on plain files; ``started``: the files manage.py began reading, which are
    taken from there (cli_start.StartedFiles)."""
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
            qrels = pool.submit(_read_relevance, args, started).result
            try:
                zscores = cli_inputs.read_zscores(args.zscores, read_file)
            except UsageError:
                qrels()
                raise
            scored = {"rel_format": args.rel_format, "zscores": zscores, "started": started}
            result, runid = score_run_file(qrels, Path(args.run), specs, options, **scored)
    except UsageError as error:
        # The same words Django's CommandError prints, so both paths read alike.
        sys.stderr.write(f"CommandError: {error}\n")
        return 1
    output = render(
        result,
        fmt=args.format,
        per_topic=args.per_topic,
        runid=runid,
        summary=args.summary,
        places=args.places,
    )
    sys.stdout.write(output)
    sys.stdout.flush()
    return 0


def _read_relevance(args, started: StartedFiles | None):
    path = Path(args.qrels)
    if started is not None and args.rel_format == "qrels":
        frame = read_file(started.qrels, path)
        if frame is not None:
            return frame
    return cli_inputs.read_relevance(args.rel_format, path, read_file)
