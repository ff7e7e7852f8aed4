"""Qrels versions: importing a TREC qrels file as the next version of a name, storing rows
made elsewhere (a campaign's publication), reading a version back, and what changed between
two versions. A version never changes once stored.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from typing import IO

import polars as pl
from django.db import transaction

from accounts.services.teams import default_team_pk
from common import text_limits
from common.ids import parse_id
from evaluation import trec
from evaluation.models import QrelsEntry, QrelsSource, QrelsVersion
from evaluation.services.common import MESSAGES, ImportRejected, check_texts, read_upload, sha256
from jobs.services.limits import TooLargeForRequest


def qrels_to_trec_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    trec.write_qrels(frame, buffer)
    return buffer.getvalue()


def qrels_checksum(frame: pl.DataFrame) -> str:
    """The checksum a version of these (qid, docno, grade) rows is stored with: SHA-256 of
    their canonical TREC export, so equal grades give equal checksums in any row order."""
    return sha256(qrels_to_trec_bytes(frame.sort(["qid", "docno"])))


def import_qrels(
    *,
    source: IO[bytes] | bytes,
    filename: str,
    name: str,
    description: str = "",
    user=None,
    max_bytes: int | None = None,
    max_rows: int | None = None,
    team: int | None = None,
) -> QrelsVersion:
    """Validate a TREC qrels file and publish it as the next version of ``name``. A file of
    more than ``max_rows`` grades (a request's SYNC_WRITE_ROWS) raises
    jobs.services.limits.TooLargeForRequest once read, before anything is stored: the API then hands
    it to a job (evaluation.tasks.import_qrels_task)."""
    if not name:
        raise ImportRejected(MESSAGES["empty_name"])
    check_texts(
        filename,
        name=(name, QrelsVersion._meta.get_field("name").max_length),
        description=(description, text_limits.DESCRIPTION),
    )
    frame = trec.read_qrels(read_upload(source), name=filename, max_bytes=max_bytes)
    if max_rows is not None and frame.height > max_rows:
        raise TooLargeForRequest(
            count=frame.height, what="grades", instead="A job imports the file instead."
        )
    return store_qrels(
        frame=frame,
        name=name,
        description=description,
        source=QrelsSource.IMPORTED,
        filename=filename,
        user=user,
        team=team,
    )


def store_qrels(
    *,
    frame: pl.DataFrame,
    name: str,
    source: QrelsSource,
    description: str = "",
    filename: str = "",
    user=None,
    team: int | None = None,
) -> QrelsVersion:
    """Store valid (qid, docno, grade) rows as the next version of ``name``, in ``team`` (a
    team's pk; the default team when None); the checksum is that of the canonical TREC
    export, so equal grades give equal checksums. Version numbers count across teams."""
    frame = frame.sort(["qid", "docno"])
    checksum = qrels_checksum(frame)
    with transaction.atomic():
        # Lock the name's versions so two imports of the same name get distinct numbers.
        latest = (
            QrelsVersion.objects.select_for_update()
            .filter(name=name)
            .order_by("-version")
            .values_list("version", flat=True)
            .first()
        )
        version = QrelsVersion.objects.create(
            name=name,
            version=(latest or 0) + 1,
            description=description,
            source=source,
            original_filename=filename,
            checksum=checksum,
            topic_count=frame["qid"].n_unique(),
            judgment_count=frame.height,
            created_by=user,
            team_id=team or default_team_pk(),
        )
        QrelsEntry.objects.bulk_create(
            (
                QrelsEntry(qrels=version, qid=qid, docno=docno, grade=grade)
                for qid, docno, grade in frame.select("qid", "docno", "grade").iter_rows()
            ),
            batch_size=5000,
        )
    return version


def share_qrels(*, qrels: QrelsVersion, teams) -> None:
    """Make ``teams`` exactly the other teams that may read ``qrels`` (never change it: a
    version is immutable, and only its own team publishes the next one). Its own team
    among them changes nothing."""
    qrels.shared_with.set([team for team in teams if team.pk != qrels.team_id])


@dataclass(frozen=True)
class QrelsDiff:
    added: list[tuple[str, str, int]]
    removed: list[tuple[str, str, int]]
    changed: list[tuple[str, str, int, int]]  # qid, docno, old grade, new grade
    unchanged: int


def diff_qrels(old: QrelsVersion, new: QrelsVersion) -> QrelsDiff:
    """What changed from one qrels version to another, pair by pair."""
    before = {(q, d): g for q, d, g in old.entries.values_list("qid", "docno", "grade")}
    after = {(q, d): g for q, d, g in new.entries.values_list("qid", "docno", "grade")}
    changed = sorted(
        (q, d, before[q, d], g)
        for (q, d), g in after.items()
        if (q, d) in before and before[q, d] != g
    )
    return QrelsDiff(
        added=sorted((q, d, g) for (q, d), g in after.items() if (q, d) not in before),
        removed=sorted((q, d, g) for (q, d), g in before.items() if (q, d) not in after),
        changed=changed,
        unchanged=sum(1 for key, g in after.items() if before.get(key) == g),
    )


def load_qrels_frame(qrels: QrelsVersion) -> pl.DataFrame:
    rows = qrels.entries.order_by("qid", "docno").values_list("qid", "docno", "grade")
    return pl.DataFrame(
        list(rows),
        schema={"qid": pl.String, "docno": pl.String, "grade": pl.Int64},
        orient="row",
    )


def find_qrels(label: str) -> QrelsVersion:
    """``name`` (its latest version) or ``name@N``."""
    name, _, number = label.partition("@")
    versions = QrelsVersion.objects.filter(name=name)
    if number:
        version = parse_id(number)
        if version is None:
            raise QrelsVersion.DoesNotExist(
                f"{label!r}: the version must be a number, e.g. {name}@2"
            )
        return versions.get(version=version)
    latest = versions.order_by("-version").first()
    if latest is None:
        raise QrelsVersion.DoesNotExist(f"no qrels named {name!r}")
    return latest


@functools.lru_cache(maxsize=4)
def _qrels_frame(pk: int, checksum: str) -> pl.DataFrame:
    return load_qrels_frame(QrelsVersion(pk=pk))


def cached_qrels_frame(qrels: QrelsVersion) -> pl.DataFrame:
    """``load_qrels_frame``, kept for the last few versions: qrels never change once
    published, and the dashboards read the same version on every page."""
    return _qrels_frame(qrels.pk, qrels.checksum)


def diff_data(old: QrelsVersion, new: QrelsVersion) -> dict:
    """What changed from ``old`` to ``new`` (evaluation.services.diff_qrels) as JSON-ready
    data; ``manage.py diff_qrels --json`` prints the same."""
    diff = diff_qrels(old, new)
    keys = ("qid", "docno", "grade")
    return {
        "old": {"id": old.pk, "label": old.label},
        "new": {"id": new.pk, "label": new.label},
        "added": [dict(zip(keys, row, strict=True)) for row in diff.added],
        "removed": [dict(zip(keys, row, strict=True)) for row in diff.removed],
        "changed": [
            {"qid": q, "docno": d, "old_grade": a, "new_grade": b} for q, d, a, b in diff.changed
        ],
        "unchanged": diff.unchanged,
    }
