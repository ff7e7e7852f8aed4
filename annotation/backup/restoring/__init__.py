"""Storing a checked backup as a new campaign, in one transaction: all of it or nothing.

Modules: inserting (writing rows with statements built from the models' metadata, and
why not ``bulk_create``; the state every part shares), then one per subject, each a part
of the restorer: campaign (the campaign and its judging, users, the order of the whole
restore and its summary), external (outside and machine judges, their grades, imports,
machine runs and answers, audits), publications (lead decisions, publications and their
qrels), trust (version 4: the suggested machine, the certified design, the gates).
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from annotation.backup.checking import Backup, BackupError

from .campaign import CampaignRestore, ImportSummary
from .external import ExternalRestore
from .publications import PublicationRestore
from .trust import TrustRestore

__all__ = ["ImportSummary", "restore_backup"]


class _Restore(CampaignRestore, ExternalRestore, PublicationRestore, TrustRestore):
    """One backup's restore: every subject's part over the state they share."""


def restore_backup(backup: Backup, *, create_users: bool = True) -> ImportSummary:
    """Create the backup's campaign (always a new one, whatever campaigns exist) with
    everything in it. Users are matched by username; missing ones are created inactive with
    an unusable password and their roles, or refused when ``create_users`` is False. A qrels
    name and version that already exists is refused, unless it has the same checksum and
    entries and no campaign published it: then it is reused. Raises :class:`BackupError`
    and stores nothing on any problem."""
    try:
        with transaction.atomic():
            return _Restore(backup).run(create_users=create_users)
    except IntegrityError as error:
        # Checked before writing; only a concurrent writer can get here (e.g. the same qrels
        # name and version published meanwhile).
        raise BackupError(backup.name, [f"the database refused the import: {error}"]) from None
