"""Backing up a whole campaign to one JSON file, and restoring it on any instance.

``manage.py export_campaign ID -o backup.json[.gz]`` writes it; ``manage.py import_campaign
backup.json[.gz]`` creates it again as a new campaign. The file holds everything the
campaign is made of: topics, documents, the pool, assignments, judgments with their whole
history, lead decisions, publications with their qrels versions and provenance, outside and
machine judges with their grades and the imports those came from, machine runs and answers,
the audits sent to human judges, the certified design with its inclusion probabilities, the
gullibility gates with their overrides, the gate threshold and the suggestion settings, and
the stop rule with what it did (paused, resumed).

Format ``qrelsmith-campaign``, version 5
----------------------------------------
One UTF-8 JSON object (gzip-compressed when the file name ends in ``.gz``; the importer
recognises gzip by its first bytes). Database ids never appear: rows name each other by
natural keys — a user by ``username``, a topic by ``qid``, a document by ``docno``, a pair by
``qid`` + ``docno``, an assignment (and its judgment and history) by ``qid`` + ``docno`` +
``judge``, an outside or machine judge by its ``name`` — and lead decisions (which form
chains), judgment imports and machine runs by a file-local ``id`` (1, 2, …, in each list).
Times are ISO 8601 with their UTC offset and microseconds
(``2026-11-20T09:30:00.123456+00:00``). Every key below is required and no other key is allowed; the order of keys does not matter.
Lists are in the order the rows were created, and the importer creates them in that order.
The importer also reads ``relevance-studio-campaign``, the name the product had before issue
15; version 4: version 5 without the campaign's ``stop_rule``, ``stop_confidence``,
``stop_top``, ``paused_at`` and ``stop_event`` (restored as ``none``, 0.95, 3, not paused, no
event); version 3: version 4 without ``certified_design`` and ``gates``, without the campaign's
``gate_threshold``, ``blind_share`` and ``suggestions_from`` (restored as 0.02, 0.2 and
none: suggestions off) and without a publication's ``machine_gates`` (restored as empty);
version 2: the same document without ``imports``, ``machine_runs``,
``machine_answers``, ``audits``, an external grade's ``source`` and the ``created_by`` of
external judges and machine configurations (restored as none of those: grades from no
import, judges created by nobody); and version 1: version 2 without the campaign's
``pool_ordering``, ``machine_grades_adjudicate`` and ``machine_grades_fill`` (restored as
``random``, false, false) and without ``external_judges`` and ``external_grades``::

    {
      "format": "qrelsmith-campaign",
      "version": 5,
      "exported_at": time,
      "campaign": {"name", "description", "scale": [{"grade", "label", "definition"}, …],
                   "guidelines", "overlap", "relevance_threshold", "seed",
                   "adjudication_rule", "gold_min_accuracy", "created_at", "lead": username,
                   "pool_ordering", "machine_grades_adjudicate", "machine_grades_fill",
                   "gate_threshold", "blind_share", "suggestions_from": name | null,
                   "stop_rule", "stop_confidence", "stop_top", "paused_at": time | null,
                   "stop_event": {} | {"rule", "confidence", "top", "measure",
                                       "described", "spent", "undecided", "at": time,
                                       "resumed_at": time, "resumed_by": username}},
      "users": [{"username", "first_name", "last_name", "email",
                 "roles": ["judge" | "lead" | "engineer", …]}],
      "judges": [{"username", "added_at"}],
      "topics": [{"qid", "query", "description", "narrative"}],
      "documents": [{"docno", "title", "text", "url"}],
      "pairs": [{"qid", "docno", "source", "gold_grade", "added_at"}],
      "assignments": [{"qid", "docno", "judge", "slot", "overlap", "position", "status",
                       "created_at"}],
      "judgments": [{"qid", "docno", "judge", "grade", "skip_reason", "note", "seconds",
                     "last_request", "created_at", "updated_at"}],
      "changes": [{"qid", "docno", "judge", "action", "old_grade", "new_grade", "note",
                   "changed_by", "changed_at"}],
      "decisions": [{"id", "qid", "docno", "grade", "reason", "rule", "decided_by",
                     "decided_at", "supersedes": id | null}],
      "publications": [{"rule", "relevance_threshold", "counts", "left_out", "published_by",
                        "published_at", "machine_gates",
                        "qrels": {"name", "version", "description", "source",
                                  "original_filename", "checksum", "topic_count",
                                  "judgment_count", "created_by", "created_at",
                                  "entries": [[qid, docno, grade], …]},
                        "grades": [{"qid", "docno", "grade", "basis", "judges",
                                    "decision": id | null}]}],
      "external_judges": [{"name", "kind": "outside" | "machine", "description",
                           "created_at", "created_by": username | null,
                           "machine": null | {each of MachineJudge.CONFIG_FIELDS (its
                                              configuration, never its key), "created_at",
                                              "created_by": username | null}}],
      "imports": [{"id", "file_name", "sha256", "format", "judge_kind", "mapping", "options",
                   "counts", "imported_by": username | null, "imported_at"}],
      "external_grades": [{"judge": name, "qid", "docno", "grade", "note", "seconds",
                           "judged_at", "details", "recorded_at", "updated_at",
                           "source": import id | null}],
      "machine_runs": [{"id", "judge": name, "topic": qid | null, "scope", "pairs", "graded",
                        "failed", "prompt_tokens", "completion_tokens", "cost", "seconds",
                        "cancel_requested_at", "cancelled", "started_by": username | null,
                        "created_at", "finished_at"}],
      "machine_answers": [{"judge": name, "qid", "docno", "run": run id | null, "outcome",
                           "grade", "failure", "reason", "raw", "model", "prompt_tokens",
                           "completion_tokens", "cost", "seconds", "attempts", "tries",
                           "answered_at", "recorded": true | false}],
      "audits": [{"kind", "size", "seed", "sent", "assigned", "sent_by": username | null,
                  "sent_at", "pairs": [{"qid", "docno", "reason"}]}],
      "certified_design": null | {"machine": name, "strategy", "seed", "budget",
                  "budget_is_share", "strata", "pool_size", "chosen", "expected_size",
                  "withdrawn", "redraws", "created_at", "created_by": username | null,
                  "audit": position in audits (1, 2, ...) | null,
                  "pairs": [{"qid", "docno", "probability", "stratum", "chosen"}]},
      "gates": [{"machine": name, "threshold", "relevant_from", "max_pairs", "seed", "pairs",
                 "calls": [[qid | null, docno | null, original, stuffed, instruction,
                            shuffled], …],
                 "rises", "failures", "blocked", "conclusive", "created_at", "finished_at",
                 "cancel_requested_at", "cancelled",
                 "started_by": username | null, "override_reason",
                 "overridden_by": username | null, "overridden_at"}]
    }

A machine judge's key is never written: a restored one reads it from ``api_key_env`` or is
given a new one. An answer's ``recorded`` says whether it points at its judge's grade of the
pair in ``external_grades`` (the grade the answer recorded). A machine run's background job
belongs to the instance (its log, its worker) and is not carried: a restored run has none.
Not carried: the pool ordering's state, recomputed from the grades; a design's pooled run
ids (evaluation's runs are the instance's: a restored design names none); a gate's job (a
gate that had not finished restores as failed). A gate's calls name pairs by qid and docno. The stop
rule's record is kept as it was: a restored campaign is paused, or its rule quiet after a
resume, as on the instance that wrote it (its ``resumed_by`` is the name recorded then, not a
reference to a user). An external grade's
``details`` are kept as they were, also where they mention ids of the instance that made them
(a machine's grade names its machine and run there).

``users`` lists everyone the campaign names (lead, judges, whoever graded, changed, decided,
published, created an outside or machine judge, imported grades, started a machine run or sent
an audit, drew the certified sample, started or overrode a gate) with their roles; never passwords, admin rights or other groups. A decision
``supersedes`` one listed before it, of the same pair. Values are those of the model fields
(annotation/models/, evaluation/models.py), null where the field allows it.

Importing
---------
All or nothing, in one transaction, after the whole document is checked
(:mod:`annotation.backup.checking` lists what; problems name their JSON path, e.g.
``backup.json: topics[3].qid: missing``). It always creates a new campaign, also when one of
the same name exists. People are matched by username; a missing one is created inactive, with
an unusable password and the roles of the file, and the command says so (``--no-create-users``
refuses instead); existing users are left as they are. A qrels name and version that already
exists is refused (qrels versions are immutable and evaluations point at them), except when it
holds exactly the same grades (same checksum and entries) and no campaign published it: then
the publication points at it, and the command says it was reused. So importing the same
backup twice is refused when the campaign published qrels, and gives a second campaign when
it did not. Identifiers that only matter inside the database (ids) are new; note that pairs
assigned after the import are shuffled by the new ids, so they get a different (equally
random) order than they would have on the old instance.
"""

from annotation.backup.checking import Backup, BackupError
from annotation.backup.exporting import ExportSummary, export_campaign, write_campaign_file
from annotation.backup.reading import parse_backup, read_backup
from annotation.backup.restoring import ImportSummary, restore_backup
from annotation.backup.schema import FORMAT, VERSION

__all__ = [
    "FORMAT",
    "VERSION",
    "Backup",
    "BackupError",
    "ExportSummary",
    "ImportSummary",
    "export_campaign",
    "import_campaign",
    "parse_backup",
    "read_backup",
    "restore_backup",
    "write_campaign_file",
]


def import_campaign(
    source, *, name: str | None = None, max_bytes: int | None = None, create_users: bool = True
) -> ImportSummary:
    """Read, check and store a backup (a path, bytes or a binary file) as a new campaign."""
    return restore_backup(
        read_backup(source, name=name, max_bytes=max_bytes), create_users=create_users
    )
