"""Runs: importing a TREC run file (all-or-nothing: the file is parsed and validated
completely before anything is written, and if writing fails half-way the row rolls back and
the stored files are deleted), reading a run back whole or by topic, and finding one by name.

A process killed between writing a run's files and committing its row cannot delete them;
they sit in the run's own folder (runs/<sha256>/) with no row pointing at them, and
``sweep_orphan_run_files`` (run by ``manage.py recover_jobs``) deletes them.
"""

from __future__ import annotations

import io
from datetime import timedelta
from typing import IO

import polars as pl
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from evaluation import run_metadata, topk, trec
from evaluation.models import Run, System
from evaluation.services.common import MESSAGES, ImportRejected, read_upload, sha256
from jobs.faults import pause_point
from jobs.services import walk_storage, written_before


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
) -> Run:
    """Validate a TREC run file and store it: the upload as given, plus a Parquet artifact,
    and its ir_metadata header, if any (evaluation.run_metadata).
    What the file holds that trec_eval accepts but its author may not mean (fields after the
    sixth, a rank that is not an integer) is appended to ``notices`` (trec.Notice), if given.
    A ``system`` given by name is created if new, with ``new_system``'s fields (description,
    tags), in the same transaction as the run, so a refused file leaves no system behind."""
    data = read_upload(source)
    checksum = sha256(data)
    existing = Run.objects.filter(checksum=checksum).select_related("system").first()
    if existing is not None:
        raise ImportRejected(
            MESSAGES["duplicate_run"].format(filename=filename, run=existing), existing=existing
        )
    # TrecFormatError (file:line) for a bad header, as read_run's for a bad line.
    header = run_metadata.read_ir_metadata(data, name=filename, max_bytes=max_bytes)
    frame = trec.read_run(data, name=filename, max_bytes=max_bytes, notices=notices)
    name = name or default_run_name(filename)
    artifact = io.BytesIO()
    frame.write_parquet(artifact, compression="zstd", statistics=False)
    tops = _top_lists_bytes(frame)

    stored: list[str] = []
    try:
        with transaction.atomic():
            if isinstance(system, str):
                system, _ = System.objects.get_or_create(
                    name=system, defaults={"created_by": user, **(new_system or {})}
                )
            if Run.objects.filter(system=system, name=name).exists():
                raise ImportRejected(
                    MESSAGES["run_name_taken"].format(filename=filename, system=system, name=name)
                )
            run = Run(
                system=system,
                name=name,
                description=description,
                tag=frame["tag"][-1],  # what trec_eval prints as the runid
                original_filename=filename,
                checksum=checksum,
                size_bytes=len(data),
                line_count=frame.height,
                topic_count=frame["qid"].n_unique(),
                uploaded_by=user,
                ir_metadata=header.data if header else {},
                ir_metadata_text=header.text if header else "",
            )
            run.original_file.save(_safe_filename(filename), ContentFile(data), save=False)
            stored.append(run.original_file.name)
            run.artifact.save("ranking.parquet", ContentFile(artifact.getvalue()), save=False)
            stored.append(run.artifact.name)
            run.top_lists.save(TOP_LISTS_FILE, ContentFile(tops), save=False)
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
    out = io.BytesIO()
    topk.stored_tops(frame, topk.STORED_DEPTH).write_parquet(out, compression="zstd")
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


RUN_FILES = "runs"


def sweep_orphan_run_files(*, older_than: timedelta) -> list[str]:
    """Delete stored run files that no run points at, written more than ``older_than`` ago:
    what an import killed before its commit left (an import in progress writes its files
    moments before committing, so a few minutes' margin never touches one). Returns the
    names deleted."""
    cutoff = timezone.now() - older_than
    by_checksum: dict[str, list[str]] = {}
    for name in walk_storage(RUN_FILES):
        parts = name.split("/")  # runs/<first two hex digits>/<sha256>/<file>
        by_checksum.setdefault(parts[2] if len(parts) == 4 else "", []).append(name)
    kept = set()
    checksums = list(by_checksum)
    for at in range(0, len(checksums), 500):  # SQLite caps the parameters of one query
        for row in Run.objects.filter(checksum__in=checksums[at : at + 500]).values_list(
            "original_file", "artifact", "top_lists"
        ):
            kept.update(row)
    deleted = []
    for names in by_checksum.values():
        for name in names:
            if name not in kept and written_before(name, cutoff):
                default_storage.delete(name)
                deleted.append(name)
    return sorted(deleted)


def load_run_frame(run: Run) -> pl.DataFrame:
    with run.artifact.open("rb") as handle:
        return pl.read_parquet(handle, columns=["qid", "docno", "score"])


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
        return runs.get(system__name=system, name=name)
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
