"""Checking a whole backup document before anything is stored.

Every problem is reported with the JSON path of the value at fault
(``backup.json: topics[3].qid: missing``), the first :data:`MAX_PROBLEMS` of them and a count
of the rest. Checked: every key present and no unknown key, in every object; types, lengths,
ranges and choices of each value as its model field needs them; duplicates (a qid, a docno,
a pair, an assignment, a judgment, a decision id, a qrels name and version, a qrels entry, a
published grade); references (to users, topics, documents, pairs, assignments and
decisions; in version 3 to imports, machine runs and outside and machine judges); the
database's constraints (a slot within its overlap, one judge per slot, a judgment graded or
skipped, one first decision per pair and each decision superseded at most once, a decision
superseding one of its own pair listed before it, one answer per pair per machine judge, a
graded answer with a grade and a failed one without, a pair sent to one audit at most, one
sample audit per seed and size); judgments' and calibration grades on the campaign's scale
(what update_campaign keeps true; decisions, history and published grades may hold grades of
an earlier, longer scale); each qrels version's checksum, topic and judgment counts against
its entries; and what ties the version 3 rows together as the instance made them (an import's
SHA-256 as 64 lower-case hexadecimal digits, a machine run or answer of a machine judge with
its configuration, an answer's run of the same judge, an answer recorded only when graded and
only where that judge's grade of the pair is in ``external_grades``, audited pairs in the
pool).

Nothing here reads or writes the database; :mod:`annotation.backup.restoring` checks what
depends on the target instance (users, existing qrels versions).

Modules: base (the error, the checked document, the checker's reporting, shapes and
references), then one per subject, each a part of the checker: document (the top level
and users), campaign (settings, judges, topics, documents, pairs, assignments, judgments,
history), decisions (lead decisions, publications and their qrels), external (outside and
machine judges, their grades, imports), machines (machine runs and answers), audits, trust
(version 4: the suggestion settings, the certified design, the gullibility gates).
"""

from __future__ import annotations

from typing import Any

from .audits import AuditChecks
from .base import MAX_PROBLEMS, Backup, BackupError
from .campaign import CampaignChecks
from .decisions import DecisionChecks
from .document import DocumentChecks
from .external import ExternalChecks
from .machines import MachineChecks
from .trust import TrustChecks

__all__ = ["MAX_PROBLEMS", "Backup", "BackupError", "check_document"]


class _Check(
    DocumentChecks,
    CampaignChecks,
    DecisionChecks,
    ExternalChecks,
    MachineChecks,
    AuditChecks,
    TrustChecks,
):
    """One document's check: every subject's checks over the state they share."""


def check_document(document: Any, *, name: str) -> Backup:
    """The checked backup, from a parsed JSON document; raises :class:`BackupError`."""
    return _Check(name).document(document)
