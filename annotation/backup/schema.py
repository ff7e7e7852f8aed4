"""The keys of a campaign backup (format versions 1 to 5) and how one JSON value is checked against
the model field it is stored in. Shared by the writer and the reader, so the two cannot drift.

A checker takes a JSON value and returns what goes into the model field, or raises
:class:`Bad` with the message a person reads after the value's JSON path. It checks what the
database would refuse or silently change (types, lengths, integer ranges, choices, NUL
characters, which PostgreSQL refuses in text and in ``jsonb``) and nothing more, so whatever a
campaign can hold, its backup can restore; and the caps on free text people type
(common.text_limits, TEXT_CAPS), so a backup cannot bring in what the app refuses when typed.
"""

from __future__ import annotations

from annotation.models import (
    Assignment,
    AuditPair,
    Campaign,
    CampaignJudge,
    CertifiedDesign,
    DesignPair,
    Document,
    ExternalGrade,
    ExternalJudge,
    GullibilityGate,
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
from evaluation.models import QrelsEntry, QrelsVersion

from .fields import (  # noqa: F401  (re-exported: one home for the keys and their checks)
    INTEGER_RANGES,
    TEXT_CAPS,
    Bad,
    Checker,
    checkers,
    field_checker,
    integer_checker,
    text_checker,
    to_json_time,
    username_checker,
)

FORMAT = "qrelsmith-campaign"
# What the importer accepts: FORMAT, and the name backups had before the product was renamed
# (issue 15); their content is the same version 1.
READ_FORMATS = (FORMAT, "relevance-studio-campaign")
VERSION = 5
# Version 1 (before outside and machine judges) still restores: its campaign has no pool
# ordering nor machine settings (they restore as their defaults) and no judges of those kinds.
# Version 2 (before the provenance of imported grades, machine runs, answers and audits)
# restores with none of those: its outside and machine grades come from no import.
# Version 3 (before issue 33's certified design, gullibility gates, gate threshold and
# suggestion settings) restores with no design and no gates, the threshold and the
# suggestion settings as their defaults (suggestions off).
# Version 4 (before the stop rule was carried) restores with no stop rule: judging not paused.
READ_VERSIONS = (1, 2, 3, 4, 5)

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
TOP_KEYS_V3 = (
    *TOP_KEYS_V2[:-1],
    "imports",
    "external_grades",
    "machine_runs",
    "machine_answers",
    "audits",
)
# Version 4's: the certified design after the audit it sent, the gates after the machines.
TOP_KEYS = (*TOP_KEYS_V3, "certified_design", "gates")
# Version 5 adds campaign keys only.
TOP_KEYS_OF = {1: TOP_KEYS_V1, 2: TOP_KEYS_V2, 3: TOP_KEYS_V3, 4: TOP_KEYS, 5: TOP_KEYS}

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
# Version 4's: the gullibility gate's threshold and post-editing's blind share (the blind
# pairs are drawn on the campaign's seed); the machine judge whose grade is suggested is a
# reference (its name, or null).
CAMPAIGN_V4 = {"gate_threshold": "gate_threshold", "blind_share": "blind_share"}
# Version 5's: the stop rule (annotation/services/stopping.py), and what it did: whether it
# paused judging and its record (who resumed is a name in that record, not a reference), so a
# restored campaign is paused, or quiet after a resume, as it was.
CAMPAIGN_V5 = {
    "stop_rule": "stop_rule",
    "stop_confidence": "stop_confidence",
    "stop_top": "stop_top",
    "paused_at": "paused_at",
    "stop_event": "stop_event",
}
CAMPAIGN_REFS = ("lead",)
CAMPAIGN_REFS_V4 = (*CAMPAIGN_REFS, "suggestions_from")
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
# Version 4: the gates of the machines whose grades filled it, as recorded then (the gate ids
# there are the instance's that published it, kept as they were).
PUBLICATION_V4 = {**PUBLICATION, "machine_gates": "machine_gates"}
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

# The certified design (version 4; null when none was drawn): its machine judge by name, the
# certified audit that sent the sample by its position in ``audits`` (1, 2, ...), every pool
# pair's inclusion probability. The pooled runs' ids belong to the instance (evaluation's
# runs are not in a campaign backup): not carried, restored as none.
DESIGN = {
    key: key
    for key in (
        "strategy",
        "seed",
        "budget",
        "budget_is_share",
        "strata",
        "pool_size",
        "chosen",
        "expected_size",
        "withdrawn",
        "redraws",
        "created_at",
    )
}
DESIGN_REFS = ("machine", "audit", "created_by", "pairs")
DESIGN_PAIR = {"probability": "probability", "stratum": "stratum", "chosen": "chosen"}
DESIGN_PAIR_REFS = ("qid", "docno")
# A machine judge's gullibility gates (version 4), with the override's reason, who and when.
# Calls name their pair by qid and docno ([qid, docno, original, stuffed, instruction,
# shuffled]; null qid and docno for a pair no longer in the pool). The background job is the
# instance's, as a machine run's: a gate that had not finished restores as failed.
GATE = {
    key: key
    for key in (
        "threshold",
        "relevant_from",
        "max_pairs",
        "seed",
        "pairs",
        "rises",
        "failures",
        "blocked",
        "conclusive",
        "created_at",
        "finished_at",
        "override_reason",
        "overridden_at",
        "cancel_requested_at",
        "cancelled",
    )
}
GATE_REFS = ("machine", "calls", "started_by", "overridden_by")

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
    "certified_design": CertifiedDesign,
    "design_pairs": DesignPair,
    "gates": GullibilityGate,
}
