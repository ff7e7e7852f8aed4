"""What the qrels and run imports share: the refusal that is not a line of the file, reading
an upload, and the checksum that names a stored file."""

from __future__ import annotations

import hashlib
from typing import IO

from common import text_limits

MESSAGES = {
    "duplicate_run": "{filename}: this file was already uploaded as run {run} (same SHA-256).",
    "run_name_taken": "{filename}: system {system} already has a run named {name!r}.",
    "empty_name": "a name is required",
}


class ImportRejected(Exception):
    """An import refused for a reason that is not a line of the file (duplicate, name taken)."""

    def __init__(self, message: str, *, existing=None):
        super().__init__(message)
        self.existing = existing


def check_texts(filename: str, **texts: tuple[str, int]) -> None:
    """ImportRejected for the first ``what=(text, limit)`` whose text is longer than its
    limit, before a file is read (``what`` with underscores for spaces: run_name)."""
    for what, (text, limit) in texts.items():
        problem = text_limits.too_long(f"the {what.replace('_', ' ')}", text, limit)
        if problem:
            raise ImportRejected(f"{filename}: {problem}.")


def read_upload(source: IO[bytes] | bytes) -> bytes:
    if isinstance(source, bytes):
        return source
    if hasattr(source, "chunks"):  # Django UploadedFile: avoids one huge read() of a temp file
        return b"".join(source.chunks())
    return source.read()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_of(upload) -> str:
    """The SHA-256 of an uploaded file, read in its chunks (a run's checksum)."""
    digest = hashlib.sha256()
    for chunk in upload.chunks():
        digest.update(chunk)
    return digest.hexdigest()
