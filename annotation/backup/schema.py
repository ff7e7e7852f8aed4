"""The keys of a campaign backup (format versions 1 to 3) and how one JSON value is checked against
the model field it is stored in. Shared by the writer and the reader, so the two cannot drift.

A checker takes a JSON value and returns what goes into the model field, or raises
:class:`Bad` with the message a person reads after the value's JSON path. It checks what the
database would refuse or silently change (types, lengths, integer ranges, choices, NUL
characters, which PostgreSQL refuses in text and in ``jsonb``) and nothing more, so whatever a
campaign can hold, its backup can restore; and the caps on free text people type
(common.text_limits, TEXT_CAPS), so a backup cannot bring in what the app refuses when typed.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations

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
    Publication,
    PublishedGrade,
    Topic,
)
from common import text_limits
from evaluation.models import QrelsEntry, QrelsVersion

FORMAT = "qrelsmith-campaign"
# What the importer accepts: FORMAT, and the name backups had before the product was renamed
# (issue 15); their content is the same version 1.
READ_FORMATS = (FORMAT, "relevance-studio-campaign")
VERSION = 3
# Version 1 (before outside and machine judges) still restores: its campaign has no pool
# ordering nor machine settings (they restore as their defaults) and no judges of those kinds.
# Version 2 (before the provenance of imported grades, machine runs, answers and audits)
# restores with none of those: its outside and machine grades come from no import.
READ_VERSIONS = (1, 2, 3)

# Version 2's top-level keys, in the order its writer put them.
TOP_KEYS_V2 = (
    "format",
    "version",
    "exported_at",
    "campaign",
    "users",
    "judges",
    "topics",
    "documents",
    "pairs",
    "assignments",
    "judgments",
    "changes",
    "decisions",
    "publications",
    "external_judges",
    "external_grades",
)
TOP_KEYS_V1 = TOP_KEYS_V2[:-2]
# Version 3's, in the order the writer puts them: imports before the grades that name them,
# machine runs before the answers that name them.
TOP_KEYS = (
    *TOP_KEYS_V2[:-1],
    "imports",
    "external_grades",
    "machine_runs",
    "machine_answers",
    "audits",
)
TOP_KEYS_OF = {1: TOP_KEYS_V1, 2: TOP_KEYS_V2, 3: TOP_KEYS}

# Each section: (JSON key, model field name). Keys naming people (usernames), pairs
# (qid + docno) and decisions (file-local ids) are references, checked by the reader.
CAMPAIGN = {
    "name": "name",
    "description": "description",
    "scale": "scale",
    "guidelines": "guidelines",
    "overlap": "overlap",
    "relevance_threshold": "relevance_threshold",
    "seed": "seed",
    "adjudication_rule": "adjudication_rule",
    "gold_min_accuracy": "gold_min_accuracy",
    "created_at": "created_at",
}
# Version 2's campaign keys beyond version 1's.
CAMPAIGN_V2 = {
    "pool_ordering": "pool_ordering",
    "machine_grades_adjudicate": "machine_grades_adjudicate",
    "machine_grades_fill": "machine_grades_fill",
}
CAMPAIGN_REFS = ("lead",)
USER = ("username", "first_name", "last_name", "email")
USER_REFS = ("roles",)
JUDGE = {"added_at": "added_at"}
JUDGE_REFS = ("username",)
TOPIC = {"qid": "qid", "query": "query", "description": "description", "narrative": "narrative"}
DOCUMENT = {"docno": "docno", "title": "title", "text": "text", "url": "url"}
PAIR = {"source": "source", "gold_grade": "gold_grade", "added_at": "added_at"}
PAIR_REFS = ("qid", "docno")
ASSIGNMENT = {
    "slot": "slot",
    "overlap": "overlap",
    "position": "position",
    "status": "status",
    "created_at": "created_at",
}
ASSIGNMENT_REFS = ("qid", "docno", "judge")
JUDGMENT = {
    "grade": "grade",
    "skip_reason": "skip_reason",
    "note": "note",
    "seconds": "seconds",
    "last_request": "last_request",
    "created_at": "created_at",
    "updated_at": "updated_at",
}
JUDGMENT_REFS = ("qid", "docno", "judge")
CHANGE = {
    "action": "action",
    "old_grade": "old_grade",
    "new_grade": "new_grade",
    "note": "note",
    "changed_at": "changed_at",
}
CHANGE_REFS = ("qid", "docno", "judge", "changed_by")
DECISION = {"grade": "grade", "reason": "reason", "rule": "rule", "decided_at": "decided_at"}
DECISION_REFS = ("id", "qid", "docno", "decided_by", "supersedes")
PUBLICATION = {
    "rule": "rule",
    "relevance_threshold": "relevance_threshold",
    "counts": "counts",
    "left_out": "left_out",
    "published_at": "published_at",
}
PUBLICATION_REFS = ("published_by", "qrels", "grades")
QRELS = {
    "name": "name",
    "version": "version",
    "description": "description",
    "source": "source",
    "original_filename": "original_filename",
    "checksum": "checksum",
    "topic_count": "topic_count",
    "judgment_count": "judgment_count",
    "created_at": "created_at",
}
QRELS_REFS = ("created_by", "entries")
GRADE = {"qid": "qid", "docno": "docno", "grade": "grade", "basis": "basis", "judges": "judges"}
GRADE_REFS = ("decision",)
# Outside people and machines (version 2). A machine judge run here carries its
# configuration ("machine"; null for one whose grades were imported), never its key.
EXTERNAL_JUDGE = {
    "name": "name",
    "kind": "kind",
    "description": "description",
    "created_at": "created_at",
}
EXTERNAL_JUDGE_REFS = ("machine",)
# Version 3 also names who created the judge, and who its configuration (usernames or null).
EXTERNAL_JUDGE_REFS_V3 = (*EXTERNAL_JUDGE_REFS, "created_by")
MACHINE_REFS_V3 = ("created_by",)
MACHINE = {key: key for key in (*MachineJudge.CONFIG_FIELDS, "created_at")}
EXTERNAL_GRADE = {
    "grade": "grade",
    "note": "note",
    "seconds": "seconds",
    "judged_at": "judged_at",
    "details": "details",
    "recorded_at": "recorded_at",
    "updated_at": "updated_at",
}
EXTERNAL_GRADE_REFS = ("judge", "qid", "docno")
# Version 3: the import that gave the grade (a file-local import id, or null).
EXTERNAL_GRADE_REFS_V3 = (*EXTERNAL_GRADE_REFS, "source")
# The provenance of imported grades (version 3), named by a file-local id (1, 2, ...).
IMPORT = {
    key: key
    for key in (
        "file_name",
        "sha256",
        "format",
        "judge_kind",
        "mapping",
        "options",
        "counts",
        "imported_at",
    )
}
IMPORT_REFS = ("id", "imported_by")
# A machine judge's runs (version 3), named by a file-local id. The background job that ran
# one belongs to the instance (its log and worker), not to the campaign: it is not carried.
MACHINE_RUN = {
    key: key
    for key in (
        "scope",
        "pairs",
        "graded",
        "failed",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "seconds",
        "cancel_requested_at",
        "cancelled",
        "created_at",
        "finished_at",
    )
}
MACHINE_RUN_REFS = ("id", "judge", "topic", "started_by")
# What a machine judge answered for a pair (version 3); "recorded": whether it points at the
# judge's grade of the pair (external_grades).
MACHINE_ANSWER = {key: key for key in MachineAnswer.RECORD_FIELDS}
MACHINE_ANSWER_REFS = ("judge", "qid", "docno", "run", "recorded")
# Pairs sent to human judges to check the machines (version 3), each audit with its pairs.
AUDIT = {key: key for key in ("kind", "size", "seed", "sent", "assigned", "sent_at")}
AUDIT_REFS = ("sent_by", "pairs")
AUDIT_PAIR = {"reason": "reason"}
AUDIT_PAIR_REFS = ("qid", "docno")

MODELS = {
    "campaign": Campaign,
    "judges": CampaignJudge,
    "topics": Topic,
    "documents": Document,
    "pairs": Pair,
    "assignments": Assignment,
    "judgments": Judgment,
    "changes": JudgmentChange,
    "decisions": LeadDecision,
    "publications": Publication,
    "qrels": QrelsVersion,
    "entries": QrelsEntry,
    "grades": PublishedGrade,
    "external_judges": ExternalJudge,
    "machine": MachineJudge,
    "external_grades": ExternalGrade,
    "imports": JudgmentImport,
    "machine_runs": MachineRun,
    "machine_answers": MachineAnswer,
    "audits": MachineAudit,
    "audit_pairs": AuditPair,
}


# Text columns without a length of their own that hold what a person typed: capped as where it
# is typed. (Generated text, such as a qrels version's description, keeps no cap here.)
TEXT_CAPS = {
    (Campaign, "description"): text_limits.DESCRIPTION,
    (Campaign, "guidelines"): text_limits.GUIDELINES,
    (Topic, "query"): text_limits.QUERY,
    (Topic, "description"): text_limits.TOPIC_TEXT,
    (Topic, "narrative"): text_limits.TOPIC_TEXT,
    (Judgment, "note"): text_limits.NOTE,
    (JudgmentChange, "note"): text_limits.NOTE,
    (LeadDecision, "reason"): text_limits.REASON,
}


class Bad(Exception):
    """A JSON value the field cannot take; the message follows the value's path."""


Checker = Callable[[Any], Any]

INTEGER_RANGES = BaseDatabaseOperations.integer_field_ranges


def to_json_time(value: dt.datetime) -> str:
    """ISO 8601 in UTC with its offset, microseconds kept (what the reader takes back)."""
    if value.tzinfo is not dt.UTC:  # what the database gives is UTC already
        value = value.astimezone(dt.UTC)
    return value.isoformat()


def checkers(model: type[models.Model], keys: dict[str, str]) -> dict[str, Checker]:
    """One checker per JSON key, for the model fields the keys name."""
    return {key: field_checker(model._meta.get_field(name)) for key, name in keys.items()}


def field_checker(field: models.Field) -> Checker:
    """The checker for one concrete model field (text, integer, float, date-time, UUID, JSON)."""
    if isinstance(field, models.BooleanField):
        check = _check_bool
    elif isinstance(field, models.DateTimeField):
        check = _check_time
    elif isinstance(field, models.UUIDField):
        check = _check_uuid
    elif isinstance(field, models.JSONField):
        check = _check_json
    elif isinstance(field, models.FloatField):
        check = _check_float
    elif isinstance(field, models.IntegerField):
        check = integer_checker(*INTEGER_RANGES[field.get_internal_type()])
    elif isinstance(field, models.CharField | models.TextField):
        check = text_checker(field.max_length or TEXT_CAPS.get((field.model, field.name)))
    else:  # a field type this format does not know yet: fail loudly, in development
        raise TypeError(f"no backup checker for {field!r}")
    if field.choices:
        check = _with_choices(check, [value for value, _ in field.flatchoices])
    if field.null:
        check = _or_null(check)
    return check


def username_checker() -> Checker:
    """Text that the user model accepts as a username (its length and validators)."""
    field = get_user_model()._meta.get_field("username")
    text = text_checker(field.max_length)

    def check(value):
        value = text(value)
        try:
            field.run_validators(value)
        except ValidationError as error:
            raise Bad(" ".join(error.messages)) from None
        return value

    return check


def text_checker(max_length: int | None) -> Checker:
    def check(value):
        if type(value) is not str:
            raise Bad("must be text")
        if max_length is not None and len(value) > max_length:
            raise Bad(f"is longer than {max_length} characters")
        if "\x00" in value:
            raise Bad("contains a NUL character")
        return value

    return check


def integer_checker(low: int, high: int) -> Checker:
    def check(value):
        if type(value) is not int:  # bool is not int here, nor is 1.0
            raise Bad("must be an integer")
        if not low <= value <= high:
            raise Bad(f"must be between {low} and {high}")
        return value

    return check


def _check_bool(value):
    if type(value) is not bool:
        raise Bad("must be true or false")
    return value


def _check_float(value):
    if type(value) not in (int, float):
        raise Bad("must be a number")
    if not math.isfinite(value):
        raise Bad("must be a finite number")
    return float(value)


def _check_time(value):
    if type(value) is not str:
        raise Bad("must be a date and time in ISO 8601, e.g. 2026-11-20T09:30:00.123456+00:00")
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise Bad(f"{value[:40]!r} is not a date and time in ISO 8601") from None
    if parsed.tzinfo is None:
        raise Bad(f"{value[:40]!r} has no time zone (add +00:00 for UTC)")
    return parsed


def _check_uuid(value):
    if type(value) is not str:
        raise Bad("must be a UUID as text")
    try:
        return uuid.UUID(value)
    except ValueError:
        raise Bad(f"{value[:40]!r} is not a UUID") from None


def _check_json(value):
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            if "\x00" in item:
                raise Bad("contains a NUL character")
        elif type(item) is list:
            stack.extend(item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                if "\x00" in key:
                    raise Bad("contains a NUL character")
                stack.append(inner)
    return value


def _with_choices(check: Checker, allowed: list) -> Checker:
    shown = ", ".join(map(str, allowed))

    def checked(value):
        value = check(value)
        if value not in allowed:
            raise Bad(f"{value!r} is not one of {shown}")
        return value

    return checked


def _or_null(check: Checker) -> Checker:
    def checked(value):
        if value is None:
            return None
        try:
            return check(value)
        except Bad as bad:
            raise Bad(f"{bad} or null") from None

    return checked
