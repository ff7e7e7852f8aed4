"""Writing a campaign as a backup document (see the package docstring for the format).

The document is streamed: one list item per line, read from the database in chunks, so a
campaign of any size is written in bounded memory. Everything is read in one snapshot
(a REPEATABLE READ transaction on PostgreSQL, a deferred read transaction on SQLite), so the
file is consistent even while judges work, and they are never held up by it. Rows are listed in the order they were created (primary key order): the importer
creates them in the same order, which keeps every ordering that breaks ties by creation
(a judge's topics, the history) as it was.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.services.roles import Role
from annotation.backup import schema
from annotation.backup.exporting_trust import certified_design, gates, trust_people
from annotation.backup.rows import (
    CHUNK,
)
from annotation.backup.rows import (
    json_value as _json_value,
)
from annotation.backup.rows import (
    local_ids as _local_ids,
)
from annotation.backup.rows import (
    rows as _rows,
)
from annotation.backup.rows import (
    username as _username,
)
from annotation.backup.rows import (
    values as _values,
)
from annotation.backup.rows import (
    write as _write,
)
from annotation.backup.rows import (
    write_list as _write_list,
)
from annotation.models import (
    Assignment,
    AuditPair,
    Campaign,
    CampaignJudge,
    ExternalGrade,
    ExternalJudge,
    Judgment,
    JudgmentChange,
    JudgmentImport,
    LeadDecision,
    MachineAnswer,
    MachineAudit,
    MachineJudge,
    MachineRun,
    Publication,
)


@dataclass(frozen=True)
class ExportSummary:
    campaign: Campaign
    counts: dict[str, int]  # rows per top-level list, publications' qrels entries as "entries"

    @property
    def text(self) -> str:
        return ", ".join(f"{n:,} {key}" for key, n in self.counts.items())


def write_campaign_file(*, campaign: Campaign, path: str | os.PathLike) -> ExportSummary:
    """Write the backup to ``path`` (gzip-compressed when the name ends in ``.gz``). The file
    appears whole or not at all: it is written next to its place and renamed at the end."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as raw:
            binary: IO[bytes] = raw
            if path.name.endswith(".gz"):
                # mtime 0: the same campaign gives the same bytes, whenever it is compressed.
                binary = gzip.GzipFile(
                    filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0
                )
            text = io.TextIOWrapper(binary, encoding="utf-8", newline="\n")
            summary = export_campaign(campaign=campaign, out=text)
            text.flush()
            text.detach()
            if binary is not raw:
                binary.close()  # writes the gzip trailer; raw stays open
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return summary


def export_campaign(*, campaign: Campaign, out: IO[str]) -> ExportSummary:
    """Write the campaign's backup document to a text stream."""
    with _snapshot():
        campaign = Campaign.objects.select_related("lead", "suggestions_from__judge").get(
            pk=campaign.pk
        )
        counts: dict[str, int] = {}
        out.write("{")
        _write(out, "format", schema.FORMAT)
        out.write(",")
        _write(out, "version", schema.VERSION)
        out.write(",")
        _write(out, "exported_at", schema.to_json_time(timezone.now()))
        out.write(",\n")
        _write(out, "campaign", _campaign(campaign))
        sections = {
            "users": _users(campaign),
            "judges": _judges(campaign),
            "topics": _values(campaign.topics, schema.TOPIC),
            "documents": _values(campaign.documents, schema.DOCUMENT),
            "pairs": _pairs(campaign),
            "assignments": _assignments(campaign),
            "judgments": _judgments(campaign),
            "changes": _changes(campaign),
            "decisions": _decisions(campaign),
            "publications": _publications(campaign, counts),
            "external_judges": _external_judges(campaign),
            "imports": _imports(campaign),
            "external_grades": _external_grades(campaign),
            "machine_runs": _machine_runs(campaign),
            "machine_answers": _machine_answers(campaign),
            "audits": _audits(campaign),
        }
        for key, items in sections.items():
            out.write(",\n")
            counts[key] = _write_list(out, key, items)
        out.write(",\n")
        design = certified_design(campaign)
        _write(out, "certified_design", design)
        counts["certified_design"] = int(design is not None)
        out.write(",\n")
        counts["gates"] = _write_list(out, "gates", gates(campaign))
        out.write("\n}\n")
    counts["entries"] = counts.pop("entries", 0)
    return ExportSummary(campaign=campaign, counts=counts)


@contextlib.contextmanager
def _snapshot() -> Iterator[None]:
    """One consistent view of the database for the whole export."""
    if connection.in_atomic_block:  # the caller's transaction is the snapshot
        yield
        return
    if connection.vendor == "sqlite":
        # Django starts our SQLite transactions IMMEDIATE (config/settings.py), which takes
        # the write lock: judges could not save a grade until the export ends. A deferred
        # read transaction is a snapshot too (WAL mode) and blocks no writer.
        with connection.cursor() as cursor:
            cursor.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("COMMIT")
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _campaign(campaign: Campaign) -> dict:
    fields = {**schema.CAMPAIGN, **schema.CAMPAIGN_V2, **schema.CAMPAIGN_V4, **schema.CAMPAIGN_V5}
    row = {key: _json_value(getattr(campaign, name)) for key, name in fields.items()}
    row["lead"] = campaign.lead.get_username()
    row["suggestions_from"] = (
        None if campaign.suggestions_from is None else campaign.suggestions_from.judge.name
    )
    return row


def _external_judges(campaign: Campaign) -> Iterator[dict]:
    """Outside people and machines, a machine run here with its configuration (never its
    key, only whether one was stored: a restored machine judge reads it from an allowed
    ``api_key_env`` or is given a new one)."""
    machines = {
        m.judge_id: m
        for m in MachineJudge.objects.filter(judge__campaign=campaign).select_related("created_by")
    }
    judges = ExternalJudge.objects.filter(campaign=campaign).select_related("created_by")
    for judge in judges.order_by("pk"):
        row = {
            key: _json_value(getattr(judge, name)) for key, name in schema.EXTERNAL_JUDGE.items()
        }
        row["created_by"] = _username(judge.created_by)
        machine = machines.get(judge.pk)
        if machine is None:
            row["machine"] = None
        else:
            row["machine"] = {
                key: _json_value(getattr(machine, name)) for key, name in schema.MACHINE.items()
            }
            row["machine"]["created_by"] = _username(machine.created_by)
            row["machine"]["api_key_stored"] = bool(machine.api_key_sealed)
        yield row


def _import_ids(campaign: Campaign) -> dict[int, int]:
    return _local_ids(JudgmentImport.objects.filter(campaign=campaign))


def _run_ids(campaign: Campaign) -> dict[int, int]:
    return _local_ids(MachineRun.objects.filter(machine__judge__campaign=campaign))


def _imports(campaign: Campaign) -> Iterator[dict]:
    """The provenance of imported grades: file name, SHA-256, choices, counts, who, when."""
    local = _import_ids(campaign)
    fields = schema.IMPORT
    for row in _rows(
        JudgmentImport.objects.filter(campaign=campaign),
        ("id", *fields, "imported_by"),
        ("pk", *fields.values(), "imported_by__username"),
    ):
        row["id"] = local[row["id"]]
        yield row


def _external_grades(campaign: Campaign) -> Iterator[dict]:
    local = _import_ids(campaign)
    fields = schema.EXTERNAL_GRADE
    for row in _rows(
        ExternalGrade.objects.filter(pair__campaign=campaign),
        (*fields, "judge", "qid", "docno", "source"),
        (
            *fields.values(),
            "judge__name",
            "pair__topic__qid",
            "pair__document__docno",
            "source_id",
        ),
    ):
        if row["source"] is not None:
            row["source"] = local[row["source"]]
        yield row


def _machine_runs(campaign: Campaign) -> Iterator[dict]:
    """A machine judge's runs, without their background jobs (the instance's, not the
    campaign's)."""
    local = _run_ids(campaign)
    fields = schema.MACHINE_RUN
    for row in _rows(
        MachineRun.objects.filter(machine__judge__campaign=campaign),
        ("id", "judge", "topic", *fields, "started_by"),
        ("pk", "machine__judge__name", "topic__qid", *fields.values(), "started_by__username"),
    ):
        row["id"] = local[row["id"]]
        yield row


def _machine_answers(campaign: Campaign) -> Iterator[dict]:
    """Raw answers, tokens, cost, time; failures with their raw text."""
    local = _run_ids(campaign)
    fields = schema.MACHINE_ANSWER
    for row in _rows(
        MachineAnswer.objects.filter(machine__judge__campaign=campaign),
        ("judge", "qid", "docno", "run", *fields, "recorded"),
        (
            "machine__judge__name",
            "pair__topic__qid",
            "pair__document__docno",
            "run_id",
            *fields.values(),
            "recorded_id",
        ),
    ):
        if row["run"] is not None:
            row["run"] = local[row["run"]]
        row["recorded"] = row["recorded"] is not None
        yield row


def _audits(campaign: Campaign) -> Iterator[dict]:
    """Each audit with the pairs it sent to human judges, and why."""
    fields = schema.AUDIT
    for row in _rows(
        MachineAudit.objects.filter(campaign=campaign),
        ("pk", *fields, "sent_by"),
        ("pk", *fields.values(), "sent_by__username"),
    ):
        pairs = AuditPair.objects.filter(audit_id=row.pop("pk"))
        row["pairs"] = list(
            _rows(
                pairs,
                (*schema.AUDIT_PAIR_REFS, *schema.AUDIT_PAIR),
                ("pair__topic__qid", "pair__document__docno", *schema.AUDIT_PAIR.values()),
            )
        )
        yield row


def _users(campaign: Campaign) -> Iterator[dict]:
    """Every person the campaign names, with their roles (never passwords or admin rights)."""
    in_campaign = Q(pair__campaign=campaign)
    ids = {campaign.lead_id}
    ids.update(CampaignJudge.objects.filter(campaign=campaign).values_list("judge_id", flat=True))
    # order_by(): the models' default orderings would otherwise join DISTINCT.
    ids.update(
        Assignment.objects.filter(in_campaign)
        .order_by()
        .values_list("judge_id", flat=True)
        .distinct()
    )
    ids.update(
        JudgmentChange.objects.filter(assignment__pair__campaign=campaign, changed_by__isnull=False)
        .order_by()
        .values_list("changed_by_id", flat=True)
        .distinct()
    )
    ids.update(
        LeadDecision.objects.filter(in_campaign, decided_by__isnull=False)
        .order_by()
        .values_list("decided_by_id", flat=True)
        .distinct()
    )
    for publication in Publication.objects.filter(campaign=campaign).select_related("qrels"):
        ids.update(u for u in (publication.published_by_id, publication.qrels.created_by_id) if u)
    for queryset, column in (
        (ExternalJudge.objects.filter(campaign=campaign), "created_by_id"),
        (MachineJudge.objects.filter(judge__campaign=campaign), "created_by_id"),
        (JudgmentImport.objects.filter(campaign=campaign), "imported_by_id"),
        (MachineRun.objects.filter(machine__judge__campaign=campaign), "started_by_id"),
        (MachineAudit.objects.filter(campaign=campaign), "sent_by_id"),
        *trust_people(campaign),
    ):
        ids.update(
            queryset.filter(**{f"{column}__isnull": False})
            .order_by()
            .values_list(column, flat=True)
            .distinct()
        )
    users = get_user_model().objects.filter(pk__in=ids).prefetch_related("groups")
    for user in users.order_by("username"):
        row = {key: getattr(user, key) for key in schema.USER}
        row["roles"] = sorted(g.name for g in user.groups.all() if g.name in Role.values)
        yield row


def _judges(campaign: Campaign) -> Iterator[dict]:
    return _rows(
        CampaignJudge.objects.filter(campaign=campaign),
        ("username", "added_at"),
        ("judge__username", "added_at"),
    )


def _pairs(campaign: Campaign) -> Iterator[dict]:
    return _rows(
        campaign.pairs,
        (*schema.PAIR_REFS, *schema.PAIR),
        ("topic__qid", "document__docno", *schema.PAIR.values()),
    )


_ASSIGNMENT_LOOKUPS = ("pair__topic__qid", "pair__document__docno", "judge__username")


def _assignments(campaign: Campaign) -> Iterator[dict]:
    return _rows(
        Assignment.objects.filter(pair__campaign=campaign),
        (*schema.ASSIGNMENT_REFS, *schema.ASSIGNMENT),
        (*_ASSIGNMENT_LOOKUPS, *schema.ASSIGNMENT.values()),
    )


def _judgments(campaign: Campaign) -> Iterator[dict]:
    return _rows(
        Judgment.objects.filter(assignment__pair__campaign=campaign),
        (*schema.JUDGMENT_REFS, *schema.JUDGMENT),
        (*(f"assignment__{x}" for x in _ASSIGNMENT_LOOKUPS), *schema.JUDGMENT.values()),
    )


def _changes(campaign: Campaign) -> Iterator[dict]:
    return _rows(
        JudgmentChange.objects.filter(assignment__pair__campaign=campaign),
        (*schema.CHANGE_REFS, *schema.CHANGE),
        (
            *(f"assignment__{x}" for x in _ASSIGNMENT_LOOKUPS),
            "changed_by__username",
            *schema.CHANGE.values(),
        ),
    )


def _decision_ids(campaign: Campaign) -> dict[int, int]:
    """Database id → file-local id (1, 2, … in creation order) of the campaign's decisions."""
    return _local_ids(LeadDecision.objects.filter(pair__campaign=campaign))


def _decisions(campaign: Campaign) -> Iterator[dict]:
    local = _decision_ids(campaign)
    rows = _rows(
        LeadDecision.objects.filter(pair__campaign=campaign),
        ("pk", "qid", "docno", "decided_by", "supersedes", *schema.DECISION),
        (
            "pk",
            "pair__topic__qid",
            "pair__document__docno",
            "decided_by__username",
            "supersedes_id",
            *schema.DECISION.values(),
        ),
    )
    for row in rows:
        row["id"] = local[row.pop("pk")]
        if row["supersedes"] is not None:
            row["supersedes"] = local[row["supersedes"]]
        yield row


def _publications(campaign: Campaign, counts: dict[str, int]) -> Iterator[dict]:
    local = _decision_ids(campaign)
    publications = (
        Publication.objects.filter(campaign=campaign)
        .select_related("qrels__created_by", "published_by")
        .order_by("pk")
    )
    for publication in publications:
        qrels = publication.qrels
        row = {k: _json_value(getattr(publication, f)) for k, f in schema.PUBLICATION_V4.items()}
        row["published_by"] = _username(publication.published_by)
        qrels_row = {k: _json_value(getattr(qrels, f)) for k, f in schema.QRELS.items()}
        qrels_row["created_by"] = _username(qrels.created_by)
        qrels_row["entries"] = [
            list(entry)
            for entry in qrels.entries.order_by("pk").values_list("qid", "docno", "grade")
        ]
        counts["entries"] = counts.get("entries", 0) + len(qrels_row["entries"])
        row["qrels"] = qrels_row
        grades = []
        for values in (
            publication.grades.order_by("pk")
            .values_list(*schema.GRADE.values(), "decision_id")
            .iterator(chunk_size=CHUNK)
        ):
            grade = dict(zip(schema.GRADE, values[:-1], strict=True))
            grade["decision"] = None if values[-1] is None else local[values[-1]]
            grades.append(grade)
        row["grades"] = grades
        yield row
