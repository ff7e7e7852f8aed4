"""Runs: importing a TREC run file (all-or-nothing: the file is parsed and validated
completely before anything is written, and if writing fails half-way the row rolls back and
the stored files are deleted), reading a run back whole or by topic, and finding one by name.

A process killed between writing a run's files and committing its row cannot delete them;
they sit in the run's own folder (runs/<sha256>/) with no row pointing at them, and
``sweep_orphan_run_files`` (run by ``manage.py recover_jobs``, in
evaluation/services/run_files.py) deletes them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import polars as pl
from django.core.files.base import ContentFile, File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Q

from accounts.services.teams import default_team_pk
from common import text_limits
from evaluation import trec
from evaluation.analysis import topk
from evaluation.models import Run, System
from evaluation.services.common import MESSAGES, ImportRejected, check_texts, read_upload, sha256
from evaluation.trec import metadata as run_metadata
from evaluation.trec import source as trec_source
from jobs.faults import pause_point

# Uploads at least this large (as given, maybe gzip), and every gzip upload (a few megabytes
# can expand to hundreds), are copied to a local scratch folder a mebibyte at a time instead
# of being read into memory; those whose text reaches LARGE_RUN_BYTES are then checked and
# converted a few million lines at a time (trec.iter_run_topics), so that importing a run of
# tens of millions of lines needs a few hundred megabytes, not ten times the file.
LARGE_UPLOAD_BYTES = 64 * 1024 * 1024
LARGE_RUN_BYTES = 400_000_000
RUN_COLUMNS = tuple(trec.RUN_SCHEMA)


def import_run(
    *,
    source: IO[bytes] | bytes,
    filename: str,
    system: System | str,
    name: str = "",
    description: str = "",
    user=None,
    max_bytes: int | None = None,
    new_system: dict | None = None,
    notices: list | None = None,
    team: int | None = None,
) -> Run:
    """Validate a TREC run file and store it: the upload as given, plus a Parquet artifact,
    and its ir_metadata header, if any (evaluation.trec.metadata).
    What the file holds that trec_eval accepts but its author may not mean (fields after the
    sixth, a rank that is not an integer) is appended to ``notices`` (trec.Notice), if given.
    A ``system`` given by name is created if new, with ``new_system``'s fields (description,
    tags), in the same transaction as the run, so a refused file leaves no system behind;
    by name, it is the system of that name in ``team`` (a team's pk; the default team when
    None)."""
    name = name or default_run_name(filename)
    _check_run_texts(filename, system, name, description, new_system)
    stored = {
        "filename": filename,
        "system": system,
        "name": name,
        "description": description,
        "user": user,
        "new_system": new_system,
        "team": team,
    }
    if _is_large(source):
        with tempfile.TemporaryDirectory(prefix="qrelsmith-run-") as scratch:
            upload = _spool(source, Path(scratch), filename, max_bytes)
            _refuse_duplicate(upload.checksum, filename)
            # TrecFormatError (file:line) for a bad header, as read_run's for a bad line.
            header = run_metadata.read_ir_metadata(upload.text, name=filename)
            summary = _convert_large(upload, Path(scratch), filename, notices)
            with open(upload.raw, "rb") as original, open(summary.artifact, "rb") as artifact:
                return _store_run(
                    **stored,
                    checksum=upload.checksum,
                    size=upload.size,
                    original=File(original),
                    artifact=File(artifact),
                    summary=summary,
                    header=header,
                )
    data = read_upload(source)
    checksum = sha256(data)
    _refuse_duplicate(checksum, filename)
    header = run_metadata.read_ir_metadata(data, name=filename, max_bytes=max_bytes)
    frame = trec.read_run(data, name=filename, max_bytes=max_bytes, notices=notices)
    artifact = io.BytesIO()
    frame.write_parquet(artifact, compression="zstd", statistics=False)
    summary = _RunSummary(
        frame["tag"][-1], frame.height, frame["qid"].n_unique(), tops=_top_lists_bytes(frame)
    )
    del frame
    return _store_run(
        **stored,
        checksum=checksum,
        size=len(data),
        original=ContentFile(data),
        artifact=ContentFile(artifact.getvalue()),
        summary=summary,
        header=header,
    )


@dataclass(frozen=True)
class _RunSummary:
    tag: str  # the last line's: what trec_eval prints as the runid
    lines: int
    topics: int
    tops: bytes  # the top lists (topk.stored_tops) as Parquet
    artifact: Path | None = None


@dataclass(frozen=True)
class _Spooled:
    raw: Path  # the upload as given
    text: Path  # its text: the same file, or the decompressed copy of a gzip upload
    checksum: str
    size: int


def _refuse_duplicate(checksum: str, filename: str) -> None:
    existing = Run.objects.filter(checksum=checksum).select_related("system").first()
    if existing is not None:
        raise ImportRejected(
            MESSAGES["duplicate_run"].format(filename=filename, run=existing), existing=existing
        )


def _is_large(source) -> bool:
    if isinstance(source, bytes | bytearray | memoryview):
        return False
    size = getattr(source, "size", None)
    return (isinstance(size, int) and size >= LARGE_UPLOAD_BYTES) or _is_gzip(source)


def _is_gzip(source) -> bool:
    """Whether a file object's content starts as gzip does (its position is kept)."""
    try:
        position = source.tell()
        head = source.read(2)
        source.seek(position)
    except (AttributeError, OSError, ValueError):  # not seekable: read into memory
        return False
    return head == b"\x1f\x8b"


def _spool(source, scratch: Path, filename: str, max_bytes: int | None) -> _Spooled:
    """The upload copied into ``scratch`` a piece at a time (hashed on the way), and its text
    decompressed beside it when it is gzip; TrecFormatError (line 0) as the readers raise it
    for input larger than ``max_bytes`` or not valid gzip."""
    raw = scratch / "upload"
    digest = hashlib.sha256()
    size = 0
    pieces = (
        source.chunks() if hasattr(source, "chunks") else iter(lambda: source.read(1 << 20), b"")
    )
    with open(raw, "wb") as out:
        for piece in pieces:
            digest.update(piece)
            out.write(piece)
            size += len(piece)
    with open(raw, "rb") as file:
        gzipped = file.read(2) == b"\x1f\x8b"
    text = raw
    if gzipped:
        text = scratch / "text"
        with open(text, "wb") as out:
            for chunk in trec_source.iter_chunks(raw, name=filename, max_bytes=max_bytes):
                out.write(chunk)
    else:
        with trec_source.whole_input(raw, name=filename, max_bytes=max_bytes):
            pass  # raises for a file over the limit, or UTF-16 text
    return _Spooled(raw, text, digest.hexdigest(), size)


def _convert_large(
    upload: _Spooled, scratch: Path, filename: str, notices: list | None
) -> _RunSummary:
    """Check the spooled run and write its Parquet artifact in ``scratch``: chunk by chunk
    when the text is large and its topics come in blocks, else read whole (which is also
    what names every error of a file with errors)."""
    artifact = scratch / "ranking.parquet"
    if upload.text.stat().st_size >= LARGE_RUN_BYTES:
        parts, tops, tag, lines, topics = [], [], "", 0, 0
        try:
            for number, chunk in enumerate(
                trec.iter_run_topics(upload.text, name=filename, columns=RUN_COLUMNS)
            ):
                part = scratch / f"part{number:06d}.parquet"
                chunk.write_parquet(part, compression="zstd", statistics=False)
                parts.append(part)
                tops.append(topk.stored_tops(chunk, topk.STORED_DEPTH))  # whole topics
                tag = chunk["tag"][-1]
                lines += chunk.height
                topics += chunk["qid"].n_unique()  # chunks hold whole topics
        except trec.NotInTopicBlocks:
            for part in parts:
                part.unlink()
        else:
            # The streaming engine copies the parts into one file with bounded memory.
            pl.scan_parquet(parts).sink_parquet(artifact, compression="zstd", statistics=False)
            for part in parts:
                part.unlink()
            return _RunSummary(tag, lines, topics, _parquet_bytes(pl.concat(tops)), artifact)
    frame = trec.read_run(upload.text, name=filename, notices=notices)
    frame.write_parquet(artifact, compression="zstd", statistics=False)
    return _RunSummary(
        frame["tag"][-1], frame.height, frame["qid"].n_unique(), _top_lists_bytes(frame), artifact
    )


def _store_run(
    *,
    filename,
    system,
    name,
    description,
    user,
    new_system,
    team: int | None,
    checksum: str,
    size: int,
    original: File,
    artifact: File,
    summary: _RunSummary,
    header: run_metadata.RunMetadata | None,
) -> Run:
    stored: list[str] = []
    try:
        with transaction.atomic():
            if isinstance(system, str):
                system, _ = System.objects.get_or_create(
                    name=system,
                    team_id=team or default_team_pk(),
                    defaults={"created_by": user, **(new_system or {})},
                )
            if Run.objects.filter(system=system, name=name).exists():
                raise ImportRejected(
                    MESSAGES["run_name_taken"].format(filename=filename, system=system, name=name)
                )
            run = Run(
                system=system,
                name=name,
                description=description,
                tag=summary.tag,
                original_filename=filename,
                checksum=checksum,
                size_bytes=size,
                line_count=summary.lines,
                topic_count=summary.topics,
                uploaded_by=user,
                ir_metadata=header.data if header else {},
                ir_metadata_text=header.text if header else "",
            )
            run.original_file.save(_safe_filename(filename), original, save=False)
            stored.append(run.original_file.name)
            run.artifact.save("ranking.parquet", artifact, save=False)
            stored.append(run.artifact.name)
            run.top_lists.save(TOP_LISTS_FILE, ContentFile(summary.tops), save=False)
            stored.append(run.top_lists.name)
            run.top_depth = topk.STORED_DEPTH
            run.save()
            pause_point("import_run.before_commit")
    except IntegrityError:
        _delete_files(stored)
        # Lost a race with an identical upload: report it like the check above would have.
        existing = Run.objects.filter(checksum=checksum).first()
        if existing is None:
            raise
        raise ImportRejected(
            MESSAGES["duplicate_run"].format(filename=filename, run=existing), existing=existing
        ) from None
    except BaseException:
        _delete_files(stored)
        raise
    return run


def _check_run_texts(filename, system, name, description, new_system) -> None:
    """ImportRejected, before the file is read, for a name longer than its column or a
    description or tags longer than common.text_limits allows."""
    texts = {
        "run_name": (name, Run._meta.get_field("name").max_length),
        "description": (description, text_limits.DESCRIPTION),
    }
    if isinstance(system, str):
        texts["system_name"] = (system, System._meta.get_field("name").max_length)
    new_system = new_system or {}
    texts["system_description"] = (new_system.get("description", ""), text_limits.DESCRIPTION)
    check_texts(filename, **texts)
    tags = new_system.get("tags", [])
    if len(tags) > text_limits.TAGS:
        raise ImportRejected(f"{filename}: a system has at most {text_limits.TAGS} tags.")
    for tag in tags:
        check_texts(filename, tag=(tag, text_limits.TAG))


def default_run_name(filename: str) -> str:
    base = filename.rsplit("/", 1)[-1]
    for suffix in (".gz", ".trec", ".run", ".txt", ".tsv"):
        base = base.removesuffix(suffix)
    return base or "run"


def _safe_filename(filename: str) -> str:
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in base)[:100] or "run.txt"


TOP_LISTS_FILE = "top.parquet"


def _top_lists_bytes(frame: pl.DataFrame) -> bytes:
    return _parquet_bytes(topk.stored_tops(frame, topk.STORED_DEPTH))


def _parquet_bytes(frame: pl.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.write_parquet(out, compression="zstd")
    return out.getvalue()


def store_top_lists(run: Run) -> Run:
    """Fill the top lists of a run stored before runs kept them (from its artifact, once)."""
    if run.top_depth:
        return run
    run.top_lists.save(
        TOP_LISTS_FILE, ContentFile(_top_lists_bytes(load_run_frame(run))), save=False
    )
    run.top_depth = topk.STORED_DEPTH
    Run.objects.filter(pk=run.pk).update(top_lists=run.top_lists.name, top_depth=run.top_depth)
    return run


def load_run_top(run: Run, k: int, *, trec_eval_version: int = 9, depth: int | None = None):
    """topk.top_k of the run, from its stored top lists when they are deep enough (a small
    file), else from the whole artifact."""
    keep = k if depth is None else min(k, depth)
    if run.top_depth and keep <= run.top_depth:
        with run.top_lists.open("rb") as handle:
            stored = pl.read_parquet(handle)
        return topk.top_k_of_stored(
            stored, k, stored_depth=run.top_depth, trec_eval_version=trec_eval_version, depth=depth
        )
    return topk.top_k(load_run_frame(run), k, trec_eval_version=trec_eval_version, depth=depth)


def _delete_files(names: list[str]) -> None:
    for name in names:
        default_storage.delete(name)


def load_run_frame(run: Run) -> pl.DataFrame:
    with run.artifact.open("rb") as handle:
        return pl.read_parquet(handle, columns=["qid", "docno", "score"])


# Stored runs with at least this many lines are scored a few million lines at a time.
LARGE_RUN_LINES = 10_000_000
_BATCH_LINES = 1 << 20


def iter_run_chunks(run: Run) -> Iterator[pl.DataFrame]:
    """The run's (qid, docno, score) lines in chunks of whole topics, read from its Parquet
    artifact by polars' streaming engine a batch at a time (object storage: copied to a
    local temporary file first, a mebibyte at a time). Raises trec.NotInTopicBlocks, maybe
    after some chunks, when a topic's lines are not consecutive."""
    try:
        path = run.artifact.path
    except NotImplementedError:  # object storage
        path = None
    with contextlib.ExitStack() as stack:
        if path is None:
            copy = stack.enter_context(tempfile.NamedTemporaryFile(suffix=".parquet"))
            with run.artifact.open("rb") as handle:
                shutil.copyfileobj(handle, copy, 1 << 20)
            copy.flush()
            path = copy.name
        batches = (
            pl.scan_parquet(path)
            .select("qid", "docno", "score")
            .collect_batches(chunk_size=_BATCH_LINES)
        )
        yield from trec.regroup_topics(batches)


def search_runs(runs, text: str):
    """The runs whose system, name, tag, description or ir_metadata header contains
    ``text`` (case-insensitive); every run for blank text."""
    text = text.replace("\x00", "").strip()
    if not text:
        return runs
    return runs.filter(
        Q(system__name__icontains=text)
        | Q(name__icontains=text)
        | Q(tag__icontains=text)
        | Q(description__icontains=text)
        | Q(ir_metadata_text__icontains=text)
    )


def find_run(label: str) -> Run:
    """``system/run`` or a run name that is unique across systems."""
    runs = Run.objects.select_related("system")
    if "/" in label:
        system, _, name = label.partition("/")
        try:
            return runs.get(system__name=system, name=name)
        except Run.DoesNotExist:
            raise Run.DoesNotExist(f"no run {name!r} in system {system!r}") from None
    matches = list(runs.filter(name=label)[:2])
    if len(matches) != 1:
        raise Run.DoesNotExist(
            f"no run named {label!r}" if not matches else f"{label!r} is ambiguous: use system/run"
        )
    return matches[0]


def load_run_topics(run: Run, qids: list[str]) -> pl.DataFrame:
    """The run's (qid, docno, score) lines of these topics only: the Parquet artifact is
    scanned with the filter pushed down, not read whole."""
    try:
        source = run.artifact.path  # local storage: let polars read only what it needs
    except NotImplementedError:  # object storage: no local path
        with run.artifact.open("rb") as handle:
            source = io.BytesIO(handle.read())
    return (
        pl.scan_parquet(source)
        .filter(pl.col("qid").is_in(qids))
        .select("qid", "docno", "score")
        .collect()
    )
