"""Storing a checked backup as a new campaign, in one transaction: all of it or nothing.

Rows are written with statements built from the models' metadata (:func:`_insert`), every
column given, in the file's order. Two reasons not to use
``bulk_create``: it sets ``auto_now_add`` and ``auto_now`` fields to the present, so every
creation time would need a second UPDATE per row; and for a campaign of 100,000 assignments
(some 400,000 rows with judgments and history) the ORM's per-object work alone takes about a
minute on this machine, against a few seconds for the statements. Ids are assigned in
insertion order, so the rows keep the relative order they had, and every ordering that
breaks ties by id (a judge's topics, the history) is as it was.
"""

from __future__ import annotations

import datetime as dt
import operator
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, connection, models, transaction

from accounts.roles import Role
from annotation.backup import schema
from annotation.backup.checking import Backup, BackupError
from annotation.models import (
    Assignment,
    AuditPair,
    Campaign,
    CampaignJudge,
    Document,
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
    Pair,
    PoolOrdering,
    Publication,
    PublishedGrade,
    StopRule,
    Topic,
)
from annotation.services import tallies
from annotation.services.tallies import count_topics, tally_judges, tally_pairs
from evaluation.models import QrelsEntry, QrelsVersion

# Parameters per INSERT: under SQLite's limit of 32,766 variables.
MAX_PARAMETERS = 30_000
MAX_ROWS = 1000


@dataclass
class ImportSummary:
    campaign: Campaign
    counts: dict[str, int]
    created_users: list[str] = field(default_factory=list)
    existing_users: list[str] = field(default_factory=list)
    created_qrels: list[str] = field(default_factory=list)
    reused_qrels: list[str] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        """What the import did, for people (the import command prints these)."""
        lines = [
            f"Created campaign {self.campaign.name!r} (id {self.campaign.pk}): "
            + ", ".join(f"{n:,} {key}" for key, n in self.counts.items())
            + "."
        ]
        if self.created_qrels:
            lines.append(f"Created qrels {', '.join(self.created_qrels)}.")
        if self.reused_qrels:
            lines.append(
                f"Reused qrels {', '.join(self.reused_qrels)}: already here with the same grades."
            )
        if self.existing_users:
            lines.append(
                f"Linked {len(self.existing_users)} existing user(s), left unchanged: "
                + ", ".join(self.existing_users)
                + "."
            )
        if self.created_users:
            lines.append(
                f"Created {len(self.created_users)} user(s), inactive and without a password "
                "(an admin activates them and sets a password): "
                + ", ".join(self.created_users)
                + "."
            )
        return lines


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


def _batches(items: Sequence, size: int) -> Iterator[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _sqlite_datetime(value: dt.datetime) -> str:
    """What SQLite's adapt_datetimefield_value makes of an aware datetime under USE_TZ (the
    naive UTC time as text), without its per-call checks: a backup has millions."""
    if value.utcoffset():
        value = value.astimezone(dt.UTC)
    return str(value.replace(tzinfo=None))


def _adapter(field: models.Field) -> Callable[[Any], Any] | None:
    """How a value becomes a query parameter; None: as it is (text, numbers, ids)."""
    if isinstance(field, models.DateTimeField):
        # What DateTimeField.get_db_prep_value does for an aware datetime, minus the checks
        # the reader already made.
        if connection.vendor == "sqlite" and settings.USE_TZ:
            return _sqlite_datetime
        return connection.ops.adapt_datetimefield_value
    if isinstance(field, models.UUIDField | models.JSONField):
        return lambda value: field.get_db_prep_save(value, connection)
    return None


def _insert(
    model: type[models.Model], rows: Sequence[dict[str, Any]], *, ids: bool = True
) -> list[int]:
    """Insert rows given as {attname: value} for every concrete field but the id, in order;
    return their new ids in the same order (``ids=False``: nothing, for the tables whose
    ids nothing refers to). A field missing from a row is a KeyError, so a model that gains
    a field fails here until the backup carries it.

    PostgreSQL: COPY (psycopg's parsing of one huge parameterised INSERT costs more than the
    database's work), with ids drawn from the table's sequence first when they are wanted,
    else left to the column's default (each nextval() in the server, in the rows' order:
    drawing 600,000 ids to the client took seconds). SQLite: multi-row ``INSERT …
    RETURNING``. Either way ids grow in the rows' order.
    """
    if not rows:
        return []
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    names = [f.attname for f in fields]
    adapters = [_adapter(f) for f in fields]

    # Per row (millions in a large backup): one itemgetter call, then only the columns
    # that need adapting.
    getter = operator.itemgetter(*names)
    adapted = [(i, adapt) for i, adapt in enumerate(adapters) if adapt is not None]

    def values(row: dict[str, Any]) -> list[Any]:
        found = getter(row)
        out = list(found) if len(names) > 1 else [found]
        for i, adapt in adapted:
            if out[i] is not None:
                out[i] = adapt(out[i])
        return out

    quote = connection.ops.quote_name
    table, pk = model._meta.db_table, model._meta.pk.column
    columns = ", ".join(quote(f.column) for f in fields)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and not ids:
            with cursor.cursor.copy(f"COPY {quote(table)} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(values(row))
            return []
        if connection.vendor == "postgresql":
            drawn = _draw_ids(cursor, table, pk, len(rows))
            copy_sql = f"COPY {quote(table)} ({quote(pk)}, {columns}) FROM STDIN"
            with cursor.cursor.copy(copy_sql) as copy:
                for pk_value, row in zip(drawn, rows, strict=True):
                    copy.write_row([pk_value, *values(row)])
            return list(drawn)
        new_ids = []
        head = f"INSERT INTO {quote(table)} ({columns}) VALUES "
        one = "(" + ", ".join(["%s"] * len(fields)) + ")"
        tail = f" RETURNING {quote(pk)}"
        for batch in _batches(rows, max(1, min(MAX_ROWS, MAX_PARAMETERS // len(fields)))):
            params = [value for row in batch for value in values(row)]
            cursor.execute(head + ", ".join([one] * len(batch)) + tail, params)
            # Ids are handed out in the order the rows are inserted, whatever order
            # RETURNING lists them in.
            new_ids.extend(sorted(row[0] for row in cursor.fetchall()))
        return new_ids


def _draw_ids(cursor, table: str, pk: str, n: int) -> Sequence[int]:
    """``n`` new ids from the table's sequence, ascending. Drawn in the server; when they
    came out contiguous (nobody else drew one meanwhile: the usual case) only their range
    crosses to the client, else every id."""
    cursor.execute(
        "WITH drawn AS (SELECT nextval(pg_get_serial_sequence(%s, %s)) AS id "
        "FROM generate_series(1, %s)) "
        "SELECT min(id), max(id), CASE WHEN max(id) - min(id) + 1 = %s THEN NULL "
        "ELSE array_agg(id ORDER BY id) END FROM drawn",
        [table, pk, n, n],
    )
    low, high, every = cursor.fetchone()
    return range(low, high + 1) if every is None else every


def _analyze(models_: Sequence[type[models.Model]]) -> None:
    """PostgreSQL: refresh the planner's statistics of the tables a large backup filled (the
    rows of this transaction count), so the lead's pages are planned for the campaign's
    size from the first request, not once autovacuum gets to them. A second or two."""
    if connection.vendor != "postgresql":
        return
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + ", ".join(quote(m._meta.db_table) for m in models_))


def _fields(row: dict, keys: dict[str, str]) -> dict[str, Any]:
    return {name: row[key] for key, name in keys.items()}


class _Restore:
    def __init__(self, backup: Backup):
        self.backup = backup
        self.users: dict[str, int] = {}

    def run(self, *, create_users: bool) -> ImportSummary:
        backup = self.backup
        qrels = self.check_qrels()
        summary_users = self.link_users(create_users)
        [campaign_id] = _insert(
            Campaign,
            [
                {
                    "lead_id": self.users[backup.campaign["lead"]],
                    **_fields(backup.campaign, schema.CAMPAIGN),
                    # Format version 1 carries no outside or machine judges, so their
                    # settings restore as off (their defaults); nor the pool ordering, which
                    # restores as today's random order (the lead may choose it again);
                    # nor the stop rule, which restores as none, judging not paused.
                    "machine_grades_adjudicate": False,
                    "machine_grades_fill": False,
                    "pool_ordering": PoolOrdering.RANDOM,
                    **_fields(
                        backup.campaign,
                        {k: v for k, v in schema.CAMPAIGN_V2.items() if k in backup.campaign},
                    ),
                    # The ordering's state is recomputed from the grades (services/ordering.py).
                    "pool_ordering_state": {},
                    "stop_rule": StopRule.NONE,
                    "stop_confidence": 0.95,
                    "stop_top": 3,
                    "paused_at": None,
                    "stop_event": {},
                }
            ],
        )
        self.campaign_id = campaign_id
        _insert(
            CampaignJudge,
            [
                {
                    "campaign_id": campaign_id,
                    "judge_id": self.users[r["username"]],
                    **_fields(r, schema.JUDGE),
                }
                for r in backup.judges
            ],
            ids=False,
        )
        topic_ids = self.insert(
            Topic,
            backup.topics,
            lambda r: {"campaign_id": campaign_id, **_fields(r, schema.TOPIC)},
            lambda r: r["qid"],
        )
        document_ids = self.insert(
            Document,
            backup.documents,
            lambda r: {"campaign_id": campaign_id, **_fields(r, schema.DOCUMENT)},
            lambda r: r["docno"],
        )
        tallies = self.tallies()
        pair_ids = self.insert(
            Pair,
            backup.pairs,
            lambda r: {
                "campaign_id": campaign_id,
                "topic_id": topic_ids[r["qid"]],
                "document_id": document_ids[r["docno"]],
                **_fields(r, schema.PAIR),
                **tallies[r["qid"], r["docno"]],
            },
            lambda r: (r["qid"], r["docno"]),
        )
        assignment_ids = self.insert(
            Assignment,
            backup.assignments,
            lambda r: {
                "pair_id": pair_ids[r["qid"], r["docno"]],
                "judge_id": self.users[r["judge"]],
                **_fields(r, schema.ASSIGNMENT),
            },
            lambda r: (r["qid"], r["docno"], r["judge"]),
        )
        _insert(
            Judgment,
            [
                {
                    "assignment_id": assignment_ids[r["qid"], r["docno"], r["judge"]],
                    **_fields(r, schema.JUDGMENT),
                }
                for r in backup.judgments
            ],
            ids=False,
        )
        _insert(
            JudgmentChange,
            [
                {
                    "assignment_id": assignment_ids[r["qid"], r["docno"], r["judge"]],
                    "changed_by_id": self.user(r["changed_by"]),
                    **_fields(r, schema.CHANGE),
                }
                for r in backup.changes
            ],
            ids=False,
        )
        tally_judges(campaign_id=campaign_id)
        external = self.create_external(topic_ids, pair_ids)
        decision_ids = self.create_decisions(pair_ids)
        count_topics(campaign=Campaign(pk=campaign_id))
        _analyze([Topic, Document, Pair, Assignment, Judgment, JudgmentChange, LeadDecision])
        created_qrels, reused_qrels = self.create_publications(qrels, decision_ids)
        counts = {
            "judges": len(backup.judges),
            "topics": len(backup.topics),
            "documents": len(backup.documents),
            "pairs": len(backup.pairs),
            "assignments": len(backup.assignments),
            "judgments": len(backup.judgments),
            "history entries": len(backup.changes),
            "lead decisions": len(backup.decisions),
            "publications": len(backup.publications),
            **external,
            **self.create_audits(pair_ids),
        }
        return ImportSummary(
            campaign=Campaign.objects.get(pk=campaign_id),
            counts=counts,
            created_users=summary_users[0],
            existing_users=summary_users[1],
            created_qrels=created_qrels,
            reused_qrels=reused_qrels,
        )

    def create_external(
        self, topic_ids: dict[str, int], pair_ids: dict[tuple[str, str], int]
    ) -> dict[str, int]:
        """Outside people and machines with their grades (format version 2), and (version 3)
        the imports the grades came from, the machines' runs and answers; the pairs' tallies
        then count the grades that count in adjudication. A machine judge's key is never in a
        backup: it comes back without one; nor is a run's background job (the instance's)."""
        backup = self.backup
        counts: dict[str, int] = {}
        import_ids = self.insert(
            JudgmentImport,
            backup.imports,
            lambda r: {
                "campaign_id": self.campaign_id,
                "imported_by_id": self.user(r["imported_by"]),
                **_fields(r, schema.IMPORT),
            },
            lambda r: r["id"],
        )
        if backup.imports:
            counts["judgment imports"] = len(backup.imports)
        if not backup.external_judges:
            return counts
        judge_ids = self.insert(
            ExternalJudge,
            backup.external_judges,
            lambda r: {
                "campaign_id": self.campaign_id,
                "created_by_id": self.user(r["created_by"]),
                **_fields(r, schema.EXTERNAL_JUDGE),
            },
            lambda r: r["name"],
        )
        machine_ids = self.insert(
            MachineJudge,
            [r for r in backup.external_judges if r["machine"] is not None],
            lambda r: {
                "judge_id": judge_ids[r["name"]],
                "api_key": "",
                "created_by_id": self.user(r["machine"]["created_by"]),
                **_fields(r["machine"], schema.MACHINE),
            },
            lambda r: r["name"],
        )
        grade_rows = [
            {
                "judge_id": judge_ids[r["judge"]],
                "pair_id": pair_ids[r["qid"], r["docno"]],
                "source_id": None if r["source"] is None else import_ids[r["source"]],
                **_fields(r, schema.EXTERNAL_GRADE),
            }
            for r in backup.external_grades
        ]
        # Ids only when an answer points at its grade: most grades nothing refers to.
        grade_ids = _insert(
            ExternalGrade, grade_rows, ids=any(r["recorded"] for r in backup.machine_answers)
        )
        recorded = {
            (r["judge"], r["qid"], r["docno"]): pk
            for r, pk in zip(backup.external_grades, grade_ids, strict=False)
        }
        run_ids = self.insert(
            MachineRun,
            backup.machine_runs,
            lambda r: {
                "machine_id": machine_ids[r["judge"]],
                "topic_id": None if r["topic"] is None else topic_ids[r["topic"]],
                "job_id": None,
                "started_by_id": self.user(r["started_by"]),
                **_fields(r, schema.MACHINE_RUN),
            },
            lambda r: r["id"],
        )
        _insert(
            MachineAnswer,
            [
                {
                    "machine_id": machine_ids[r["judge"]],
                    "pair_id": pair_ids[r["qid"], r["docno"]],
                    "run_id": None if r["run"] is None else run_ids[r["run"]],
                    "recorded_id": recorded[r["judge"], r["qid"], r["docno"]]
                    if r["recorded"]
                    else None,
                    **_fields(r, schema.MACHINE_ANSWER),
                }
                for r in backup.machine_answers
            ],
            ids=False,
        )
        tally_pairs(campaign=Campaign.objects.get(pk=self.campaign_id))
        counts = {
            "outside or machine judges": len(backup.external_judges),
            "their grades": len(backup.external_grades),
            **counts,
        }
        if backup.machine_runs:
            counts["machine runs"] = len(backup.machine_runs)
        if backup.machine_answers:
            counts["machine answers"] = len(backup.machine_answers)
        return counts

    def create_audits(self, pair_ids: dict[tuple[str, str], int]) -> dict[str, int]:
        """Audits and the pairs they sent (format version 3); the assignments they made are
        among the backup's assignments."""
        backup = self.backup
        if not backup.audits:
            return {}
        audit_ids = _insert(
            MachineAudit,
            [
                {
                    "campaign_id": self.campaign_id,
                    "sent_by_id": self.user(r["sent_by"]),
                    **_fields(r, schema.AUDIT),
                }
                for r in backup.audits
            ],
        )
        _insert(
            AuditPair,
            [
                {
                    "audit_id": audit_id,
                    "pair_id": pair_ids[p["qid"], p["docno"]],
                    **_fields(p, schema.AUDIT_PAIR),
                }
                for r, audit_id in zip(backup.audits, audit_ids, strict=True)
                for p in r["pairs"]
            ],
            ids=False,
        )
        return {"audits": len(backup.audits)}

    def tallies(self) -> dict:
        """Each pair's tally of its judges (annotation/services/tallies.py), counted from
        the file's assignments and judgments: derived, so not in the file."""
        grade_of = {(r["qid"], r["docno"], r["judge"]): r["grade"] for r in self.backup.judgments}
        rows = defaultdict(list)
        for r in self.backup.assignments:
            grade = grade_of.get((r["qid"], r["docno"], r["judge"]))
            rows[r["qid"], r["docno"]].append((r["status"], grade))
        return {
            (r["qid"], r["docno"]): dict(
                zip(
                    tallies.FIELDS,
                    tallies.tally_of(rows.get((r["qid"], r["docno"]), [])),
                    strict=True,
                )
            )
            for r in self.backup.pairs
        }

    def user(self, username: str | None) -> int | None:
        return None if username is None else self.users[username]

    @staticmethod
    def insert(model, rows: list[dict], values, key) -> dict:
        """Insert the rows' ``values``; return {``key`` of a row: its new id}."""
        ids = _insert(model, [values(r) for r in rows])
        return {key(r): pk for r, pk in zip(rows, ids, strict=True)}

    # --- users --------------------------------------------------------------------------

    def link_users(self, create_users: bool) -> tuple[list[str], list[str]]:
        user_model = get_user_model()
        wanted = [row["username"] for row in self.backup.users]
        self.users = dict(
            user_model.objects.filter(username__in=wanted).values_list("username", "pk")
        )
        missing = [row for row in self.backup.users if row["username"] not in self.users]
        existing = sorted(self.users)
        if missing and not create_users:
            raise BackupError(
                self.backup.name,
                [
                    f"{row['path']}.username: no user {row['username']!r} on this instance "
                    "(--no-create-users: create it first, or allow the import to create it)"
                    for row in missing
                ],
            )
        groups = {g.name: g for g in Group.objects.filter(name__in=Role.values)}
        for row in missing:
            user = user_model(
                **{key: row[key] for key in schema.USER}, is_active=False, is_staff=False
            )
            user.set_unusable_password()
            user.save()
            for role in row["roles"]:
                if role not in groups:
                    groups[role], _ = Group.objects.get_or_create(name=role)
                user.groups.add(groups[role])
            self.users[user.get_username()] = user.pk
        return sorted(row["username"] for row in missing), existing

    # --- decisions ----------------------------------------------------------------------

    def create_decisions(self, pair_ids: dict[tuple[str, str], int]) -> dict[int, int]:
        """File-local id → new id. A decision refers to the one it supersedes, so a batch
        ends before a decision whose predecessor is still in it."""
        ids: dict[int, int] = {}
        batch: list[tuple[int, dict]] = []

        def flush():
            for row, pk in zip(batch, _insert(LeadDecision, [v for _, v in batch]), strict=True):
                ids[row[0]] = pk
            batch.clear()

        for row in self.backup.decisions:
            earlier = row["supersedes"]
            if earlier is not None and earlier not in ids:
                flush()  # the superseded decision is in this batch: store it first
            values = {
                "pair_id": pair_ids[row["qid"], row["docno"]],
                "decided_by_id": self.user(row["decided_by"]),
                "supersedes_id": None if earlier is None else ids[earlier],
                **_fields(row, schema.DECISION),
            }
            batch.append((row["id"], values))
            if len(batch) >= MAX_ROWS:
                flush()
        if batch:
            flush()
        return ids

    # --- qrels and publications ---------------------------------------------------------

    def check_qrels(self) -> list[QrelsVersion | None]:
        """For each publication, the existing qrels version to reuse, or None to create it."""
        problems, found = [], []
        for row in self.backup.publications:
            qrels = row["qrels"]
            label = f"{qrels['name']} v{qrels['version']}"
            existing = (
                QrelsVersion.objects.select_for_update()
                .filter(name=qrels["name"], version=qrels["version"])
                .first()
            )
            found.append(existing)
            if existing is None:
                continue
            where = f"{row['path']}.qrels"
            publication = Publication.objects.filter(qrels=existing).select_related("campaign")
            publication = publication.first()
            if publication is not None:
                problems.append(
                    f"{where}: qrels {label} already exists here, published by campaign "
                    f"{publication.campaign.name!r} (id {publication.campaign_id}); this "
                    "backup seems imported already (delete that campaign to import it again)"
                )
            elif existing.checksum != qrels["checksum"] or set(
                existing.entries.values_list("qid", "docno", "grade")
            ) != set(qrels["entries"]):
                problems.append(
                    f"{where}: qrels {label} already exists here with other grades "
                    f"(sha256 {existing.checksum}, the backup's is {qrels['checksum']}); "
                    "qrels versions never change, so the import is refused"
                )
        if problems:
            raise BackupError(self.backup.name, problems)
        return found

    def create_publications(
        self, existing: list[QrelsVersion | None], decision_ids: dict[int, int]
    ) -> tuple[list[str], list[str]]:
        created, reused = [], []
        for row, qrels in zip(self.backup.publications, existing, strict=True):
            data = row["qrels"]
            label = f"{data['name']} v{data['version']}"
            if qrels is None:
                [qrels_id] = _insert(
                    QrelsVersion,
                    [
                        {
                            "created_by_id": self.user(data["created_by"]),
                            **_fields(data, schema.QRELS),
                        }
                    ],
                )
                _insert(
                    QrelsEntry,
                    [
                        {"qrels_id": qrels_id, "qid": qid, "docno": docno, "grade": grade}
                        for qid, docno, grade in data["entries"]
                    ],
                    ids=False,
                )
                created.append(label)
            else:
                qrels_id = qrels.pk
                reused.append(label)
            [publication_id] = _insert(
                Publication,
                [
                    {
                        "campaign_id": self.campaign_id,
                        "qrels_id": qrels_id,
                        "published_by_id": self.user(row["published_by"]),
                        **_fields(row, schema.PUBLICATION),
                    }
                ],
            )
            _insert(
                PublishedGrade,
                [
                    {
                        "publication_id": publication_id,
                        "decision_id": None
                        if g["decision"] is None
                        else decision_ids[g["decision"]],
                        **_fields(g, schema.GRADE),
                    }
                    for g in row["grades"]
                ],
                ids=False,
            )
        return created, reused
