"""Where a run's stored files go when no row holds them any more: deleted with their runs
once the deletion commits, and swept up when an import killed before its commit left them
(evaluation/services/runs.py writes them)."""

from __future__ import annotations

from datetime import timedelta

from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from evaluation.models import Run, SearchRun
from jobs.services import walk_storage, written_before

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


def delete_run_files(runs) -> None:
    """Delete the stored upload, artifact and top lists of ``runs`` (and the documents a
    search endpoint returned for them) once the deletion commits (if it rolls back, the rows
    still point at their files)."""
    names = [
        name
        for run in runs
        for name in (run.original_file.name, run.artifact.name, run.top_lists.name)
        if name
    ]
    names += [
        name
        for name in SearchRun.objects.filter(run__in=[run.pk for run in runs]).values_list(
            "documents", flat=True
        )
        if name
    ]

    def delete_files():
        for name in names:
            default_storage.delete(name)

    transaction.on_commit(delete_files)
