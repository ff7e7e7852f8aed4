"""A whole instance (every table and every stored file) as one `.tar.gz`, and back.

    backup_instance(path=...)  -> BackupSummary      (manage.py backup_instance -o FILE)
    restore_instance(path=...) -> BackupSummary      (manage.py restore_instance FILE)

The archive holds `manifest.json` (format, when, the migrations applied, rows per model, and
each stored file's size and SHA-256), `data.jsonl` (Django's serialised rows, users and
groups by natural key, so they load into any database: SQLite -> PostgreSQL works) and
`files/<name>` for every file in the default storage (local folder or S3 bucket).

Left out on purpose: sessions (everyone logs in again), content types and permissions
(made by `migrate`), and the task queue's own rows (a job's state is in jobs.Job; queued
work is started again with `manage.py recover_jobs --retry`).

Restoring is all-or-nothing and only into an empty instance: `migrate` first, on the same
release that made the backup (the migrations must match); every file's checksum is verified
before anything is written; the rows load in one transaction; if anything fails, the files
already written are deleted and the database is unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.files.base import File
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from jobs.services import walk_storage

__all__ = ["BackupError", "BackupSummary", "backup_instance", "restore_instance"]

FORMAT = "instance-backup"
VERSION = 1
EXCLUDED = ["contenttypes", "auth.permission", "sessions", "django_tasks_database"]
CHUNK = 1024 * 1024

MESSAGES = {
    "not_a_backup": "{path}: not an instance backup ({why}).",
    "version": "{path}: backup format version {found}; this release reads version {expected}.",
    "unsafe_member": "{path}: member {member!r} is not a plain file under the backup's folders.",
    "missing_member": "{path}: {member} is missing from the archive.",
    "checksum": "{path}: files/{name} does not match its SHA-256 in the manifest (damaged).",
    "migrations": "{path}: made with other migrations than this database has ({detail}). "
    "Restore with the release that made the backup, then upgrade.",
    "not_empty_db": "The database already holds data ({what}): restore only into a new, "
    "migrated, empty database.",
    "not_empty_storage": "The file storage already holds {name!r}: restore only into empty "
    "storage.",
}


class BackupError(Exception):
    """A refusal to show as it is: nothing was written."""


@dataclass(frozen=True)
class BackupSummary:
    objects: dict[str, int]
    files: int
    bytes: int
    secrets_left_out: int = 0

    @property
    def text(self) -> str:
        rows = sum(self.objects.values())
        text = f"{rows:,} rows of {len(self.objects)} models, {self.files:,} files ({self.bytes:,} bytes)"
        if self.secrets_left_out:
            text += (
                f"; {self.secrets_left_out:,} stored key(s) left out (a backup never holds "
                "one): store them again after a restore"
            )
        return text


# --- backup ------------------------------------------------------------------------------


def _applied_migrations() -> dict[str, list[str]]:
    applied: dict[str, list[str]] = {}
    for app, name in MigrationRecorder(connection).applied_migrations():
        applied.setdefault(app, []).append(name)
    return {app: sorted(names) for app, names in sorted(applied.items())}


def _sha256_of(name: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with default_storage.open(name, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _stored_files() -> list[str]:
    try:
        folders, files = default_storage.listdir("")
    except FileNotFoundError:
        return []
    names = list(files)
    for folder in folders:
        names.extend(walk_storage(folder))
    return sorted(names)


def backup_instance(*, path: str | os.PathLike) -> BackupSummary:
    """Write the archive to ``path``; it appears whole or not at all (written beside its
    place, renamed at the end)."""
    path = Path(path)
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data.jsonl"
        call_command(
            "dumpdata",
            natural_foreign=True,
            natural_primary=True,
            exclude=EXCLUDED,
            format="jsonl",
            output=str(data),
            verbosity=0,
        )
        objects, secrets_left_out = _count_and_strip_secrets(data)
        files = []
        for name in _stored_files():
            sha256, size = _sha256_of(name)
            files.append({"name": name, "size": size, "sha256": sha256})
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "created_at": timezone.now().isoformat(),
            "database": connection.vendor,
            "migrations": _applied_migrations(),
            "objects": dict(sorted(objects.items())),
            # Rows whose stored secret (a machine judge's key) was left out: store it again
            # after a restore. A backup never holds a secret, not even encrypted.
            "secrets_left_out": secrets_left_out,
            "files": files,
        }
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
        os.close(handle)
        try:
            with tarfile.open(temporary, "w:gz") as archive:
                _add_bytes(archive, "manifest.json", json.dumps(manifest, indent=1).encode())
                archive.add(data, arcname="data.jsonl")
                for entry in files:
                    info = tarfile.TarInfo(f"files/{entry['name']}")
                    info.size = entry["size"]
                    info.mtime = int(timezone.now().timestamp())
                    with default_storage.open(entry["name"], "rb") as handle_:
                        archive.addfile(info, handle_)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
    return BackupSummary(
        objects,
        len(files),
        sum(f["size"] for f in files),
        sum(len(keys) for keys in secrets_left_out.values()),
    )


def _count_and_strip_secrets(data: Path) -> tuple[dict[str, int], dict[str, list]]:
    """Rows per model, and the rows' secrets blanked in place: a model lists its secret
    fields in ``secret_fields`` (annotation.MachineJudge: its sealed key). Returns the
    primary keys whose secret was left out, per model."""
    objects: dict[str, int] = {}
    left_out: dict[str, list] = {}
    stripped = data.with_suffix(".stripped")
    with data.open(encoding="utf-8") as rows, stripped.open("w", encoding="utf-8") as out:
        for line in rows:
            row = json.loads(line)
            model = row["model"]
            objects[model] = objects.get(model, 0) + 1
            secret_fields = getattr(apps.get_model(model), "secret_fields", ())
            if any(row["fields"].get(name) for name in secret_fields):
                for name in secret_fields:
                    row["fields"][name] = ""
                left_out.setdefault(model, []).append(row.get("pk"))
                line = json.dumps(row, ensure_ascii=False) + "\n"
            out.write(line)
    os.replace(stripped, data)
    return objects, left_out


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(timezone.now().timestamp())
    archive.addfile(info, io.BytesIO(data))


# --- restore -----------------------------------------------------------------------------


def _read_manifest(archive: tarfile.TarFile, path: Path) -> dict:
    try:
        member = archive.getmember("manifest.json")
        manifest = json.loads(archive.extractfile(member).read())
    except (KeyError, AttributeError, ValueError) as error:
        why = "no readable manifest.json" if not isinstance(error, ValueError) else str(error)
        raise BackupError(MESSAGES["not_a_backup"].format(path=path, why=why)) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(MESSAGES["not_a_backup"].format(path=path, why="wrong format"))
    if manifest.get("version") != VERSION:
        raise BackupError(
            MESSAGES["version"].format(path=path, found=manifest.get("version"), expected=VERSION)
        )
    return manifest


def _check_members(archive: tarfile.TarFile, manifest: dict, path: Path) -> None:
    expected = {"manifest.json", "data.jsonl"} | {f"files/{f['name']}" for f in manifest["files"]}
    for member in archive.getmembers():
        name = PurePosixPath(member.name)
        if (
            not member.isfile()
            or name.is_absolute()
            or ".." in name.parts
            or member.name not in expected
        ):
            raise BackupError(MESSAGES["unsafe_member"].format(path=path, member=member.name))
    present = set(archive.getnames())
    for member in sorted(expected - present):
        raise BackupError(MESSAGES["missing_member"].format(path=path, member=member))


def _check_migrations(manifest: dict, path: Path) -> None:
    ours = _applied_migrations()
    theirs = manifest.get("migrations", {})
    differences = []
    for app in sorted(set(ours) | set(theirs)):
        missing = sorted(set(theirs.get(app, [])) - set(ours.get(app, [])))
        extra = sorted(set(ours.get(app, [])) - set(theirs.get(app, [])))
        if missing:
            differences.append(f"{app}: the backup has {', '.join(missing)}")
        if extra:
            differences.append(f"{app}: this database has {', '.join(extra)}")
    if differences:
        raise BackupError(
            MESSAGES["migrations"].format(path=path, detail="; ".join(differences[:5]))
        )


def _check_empty() -> None:
    held = []
    if get_user_model().objects.exists():
        held.append("users")
    for label in ("annotation.Campaign", "evaluation.QrelsVersion", "evaluation.Run"):
        if apps.get_model(label).objects.exists():
            held.append(label.split(".")[1].lower() + "s")
    if held:
        raise BackupError(MESSAGES["not_empty_db"].format(what=", ".join(held)))
    stored = _stored_files()
    if stored:
        raise BackupError(MESSAGES["not_empty_storage"].format(name=stored[0]))


def _verify_files(archive: tarfile.TarFile, manifest: dict, path: Path) -> None:
    for entry in manifest["files"]:
        digest = hashlib.sha256()
        handle = archive.extractfile(f"files/{entry['name']}")
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
        if digest.hexdigest() != entry["sha256"]:
            raise BackupError(MESSAGES["checksum"].format(path=path, name=entry["name"]))


def restore_instance(*, path: str | os.PathLike) -> BackupSummary:
    path = Path(path)
    try:
        archive = tarfile.open(path, "r:gz")  # noqa: SIM115 - closed by the with below
    except (tarfile.TarError, OSError) as error:
        raise BackupError(MESSAGES["not_a_backup"].format(path=path, why=error)) from None
    with archive:
        manifest = _read_manifest(archive, path)
        _check_members(archive, manifest, path)
        _check_migrations(manifest, path)
        _check_empty()
        _verify_files(archive, manifest, path)
        written: list[str] = []
        try:
            for entry in manifest["files"]:
                handle = archive.extractfile(f"files/{entry['name']}")
                saved = default_storage.save(entry["name"], File(handle, entry["name"]))
                written.append(saved)
                if saved != entry["name"]:  # the rows point at the original name
                    raise BackupError(MESSAGES["not_empty_storage"].format(name=entry["name"]))
            with tempfile.TemporaryDirectory() as scratch:
                data = Path(scratch) / "data.jsonl"
                with data.open("wb") as out:
                    shutil.copyfileobj(archive.extractfile("data.jsonl"), out, CHUNK)
                with transaction.atomic():
                    call_command("loaddata", str(data), verbosity=0)
        except BaseException:
            for name in written:
                with contextlib.suppress(Exception):
                    default_storage.delete(name)
            raise
    files = manifest["files"]
    left_out = manifest.get("secrets_left_out", {})
    return BackupSummary(
        manifest["objects"],
        len(files),
        sum(f["size"] for f in files),
        sum(len(keys) for keys in left_out.values()),
    )
