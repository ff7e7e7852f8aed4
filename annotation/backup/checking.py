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
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from accounts.roles import Role
from annotation.backup import schema
from annotation.backup.schema import Bad, Checker, checkers, integer_checker, text_checker
from annotation.models import Topic
from annotation.scales import validate_scale
from evaluation.models import QrelsEntry
from evaluation.services import qrels_to_trec_bytes

MAX_PROBLEMS = 50


class BackupError(ValueError):
    """A backup refused: ``problems`` holds the first ones (``path: message``), ``total``
    counts them all; ``str()`` gives one ``file: path: message`` per line."""

    def __init__(self, name: str, problems: list[str], total: int | None = None):
        self.name = name
        self.problems = problems
        self.total = len(problems) if total is None else total
        super().__init__(name, problems, self.total)

    def __str__(self) -> str:
        lines = [f"{self.name}: {problem}" for problem in self.problems]
        rest = self.total - len(self.problems)
        if rest > 0:
            lines.append(f"... and {rest} more problem{'s' if rest > 1 else ''}")
        return "\n".join(lines)


@dataclass
class Backup:
    """A checked backup document: model field values by section, references still as
    natural keys (usernames, qid and docno, file-local decision ids)."""

    name: str
    exported_at: dt.datetime
    campaign: dict[str, Any]
    users: list[dict[str, Any]]
    judges: list[dict[str, Any]]
    topics: list[dict[str, Any]]
    documents: list[dict[str, Any]]
    pairs: list[dict[str, Any]]
    assignments: list[dict[str, Any]]
    judgments: list[dict[str, Any]]
    changes: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    publications: list[dict[str, Any]]
    version: int = schema.VERSION
    external_judges: list[dict[str, Any]] = field(default_factory=list)
    external_grades: list[dict[str, Any]] = field(default_factory=list)
    imports: list[dict[str, Any]] = field(default_factory=list)
    machine_runs: list[dict[str, Any]] = field(default_factory=list)
    machine_answers: list[dict[str, Any]] = field(default_factory=list)
    audits: list[dict[str, Any]] = field(default_factory=list)


def check_document(document: Any, *, name: str) -> Backup:
    """The checked backup, from a parsed JSON document; raises :class:`BackupError`."""
    return _Check(name).document(document)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


_QID = text_checker(Topic._meta.get_field("qid").max_length)
_DOCNO = text_checker(QrelsEntry._meta.get_field("docno").max_length)
_ENTRY_GRADE = integer_checker(*schema.INTEGER_RANGES["SmallIntegerField"])
_DECISION_ID = integer_checker(1, 2**63 - 1)  # also the file-local ids of imports and runs
_HEX = frozenset("0123456789abcdef")


class _Check:
    def __init__(self, name: str):
        self.name = name
        self.problems: list[str] = []
        self.total = 0
        self.usernames: set[str] = set()
        self.grades: list[int] | None = None  # the campaign's scale, once known to be valid
        self.topics: dict[str, int] = {}
        self.documents: dict[str, int] = {}
        self.pairs: dict[tuple[str, str], int] = {}
        self.assignments: dict[tuple[str, str, str], int] = {}
        self.decisions: dict[int, tuple[int, tuple[str, str]]] = {}  # id -> (index, pair)
        self.version = schema.VERSION
        self.external_judges: dict[str, str] = {}  # name -> its path
        self.machines: set[str] = set()  # names of the machine judges with a configuration
        self.imports: dict[int, str] = {}  # file-local id -> its path
        self.external_grades: set[tuple[str, str, str]] = set()  # (judge, qid, docno)
        self.runs: dict[int, str] = {}  # file-local id -> its path
        self.run_judges: dict[int, str | None] = {}  # file-local id -> its judge (None: bad)

    # --- reporting ----------------------------------------------------------------------

    def add(self, path: str, message: str) -> None:
        self.total += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{path}: {message}")

    def fail(self) -> BackupError:
        return BackupError(self.name, self.problems, self.total)

    # --- shapes -------------------------------------------------------------------------

    def object(
        self, path: str, value: Any, checks: dict[str, Checker], refs: tuple[str, ...] = ()
    ) -> tuple[dict[str, Any], bool]:
        """The object's checked values (references as given) and whether all were fine:
        every key of ``checks`` and ``refs`` present, no other key, no key twice."""
        if type(value) is dict and value.keys() == checks.keys() | refs:
            # The common case, quickly: exactly the expected keys.
            try:
                result = {key: check(value[key]) for key, check in checks.items()}
            except Bad:
                pass  # reported below, with the key's path
            else:
                for key in refs:
                    result[key] = value[key]
                return result, True
        if not isinstance(value, dict):
            self.add(path or "document", "must be an object")
            return {}, False
        ok = True
        for key in getattr(value, "duplicates", ()):
            self.add(path or "document", f"key {key!r} appears more than once")
            ok = False
        result: dict[str, Any] = {}
        for key, check in checks.items():
            if key not in value:
                self.add(_join(path, key), "missing")
                ok = False
                continue
            try:
                result[key] = check(value[key])
            except Bad as bad:
                self.add(_join(path, key), str(bad))
                ok = False
        for key in refs:
            if key not in value:
                self.add(_join(path, key), "missing")
                ok = False
            else:
                result[key] = value[key]
        if len(value) > len(checks) + len(refs):
            for key in value:
                if key not in checks and key not in refs:
                    self.add(_join(path, key), "unknown key")
                    ok = False
        return result, ok

    def list(self, path: str, value: Any) -> list:
        if not isinstance(value, list):
            self.add(path, "must be a list")
            return []
        return value

    def check(self, path: str, check: Checker, value: Any) -> Any:
        """The checked value, or None after reporting it."""
        try:
            return check(value)
        except Bad as bad:
            self.add(path, str(bad))
            return None

    # --- references ---------------------------------------------------------------------

    def user(self, path: str, value: Any, *, nullable: bool) -> str | None:
        """The username, or None (null, or reported as wrong)."""
        if value is None and nullable:
            return None
        if type(value) is not str:
            self.add(path, "must be a username" + (" or null" if nullable else ""))
            return None
        if value not in self.usernames:
            self.add(path, f"user {_show(value)} is not in users")
            return None
        return value

    def pair(self, path: str, row: dict) -> tuple[str, str] | None:
        qid, docno = row["qid"], row["docno"]
        if type(qid) is str and type(docno) is str and (qid, docno) in self.pairs:
            return qid, docno  # a known pair is valid text
        qid = self.check(f"{path}.qid", _QID, row["qid"])
        docno = self.check(f"{path}.docno", _DOCNO, row["docno"])
        if qid is None or docno is None:
            return None
        if (qid, docno) not in self.pairs:
            self.add(path, f"pair ({_show(qid)}, {_show(docno)}) is not in pairs")
            return None
        return qid, docno

    def assignment(self, path: str, row: dict) -> tuple[str, str, str] | None:
        key = (row["qid"], row["docno"], row["judge"])
        if all(type(part) is str for part in key) and key in self.assignments:
            return key  # a known assignment is valid text
        pair = self.pair(path, row)
        judge = row["judge"]
        if type(judge) is not str:
            self.add(f"{path}.judge", "must be a username")
            return None
        if pair is None:
            return None
        key = (*pair, judge)
        if key not in self.assignments:
            self.add(
                path,
                f"pair ({_show(pair[0])}, {_show(pair[1])}) is not assigned to {_show(judge)} "
                "in assignments",
            )
            return None
        return key

    def on_scale(self, path: str, grade: int | None) -> None:
        if grade is not None and self.grades is not None and grade not in self.grades:
            shown = ", ".join(map(str, self.grades))
            self.add(path, f"grade {grade} is not on the campaign's scale ({shown})")

    # --- the document -------------------------------------------------------------------

    def document(self, document: Any) -> Backup:
        if not isinstance(document, dict):
            raise BackupError(self.name, ["the document must be a JSON object"])
        if document.get("format") not in schema.READ_FORMATS:
            raise BackupError(
                self.name,
                [f"format: must be {schema.FORMAT!r} (this is not a Qrelsmith campaign backup)"],
            )
        version = document.get("version")
        if type(version) is not int:
            raise BackupError(self.name, ["version: must be an integer"])
        if version not in schema.READ_VERSIONS:
            *first, last = map(str, schema.READ_VERSIONS)
            shown = f"{', '.join(first)} and {last}"
            raise BackupError(
                self.name,
                [
                    f"version: {version} is not a version this Qrelsmith reads "
                    f"(it reads versions {shown})"
                ],
            )
        self.version = version
        keys = schema.TOP_KEYS_OF[version]
        top, _ = self.object(
            "",
            document,
            {"exported_at": schema.field_checker(schema.Campaign._meta.get_field("created_at"))},
            tuple(k for k in keys if k != "exported_at"),
        )
        get = top.get  # a missing section is reported once, as missing, and read as empty
        users = self.users(get("users", []))
        campaign = self.campaign(get("campaign")) if "campaign" in top else {}
        judges = self.judges(get("judges", []))
        topics = self.keyed("topics", get("topics", []), schema.TOPIC, "qid", self.topics)
        documents = self.keyed(
            "documents", get("documents", []), schema.DOCUMENT, "docno", self.documents
        )
        pairs = self.pair_rows(get("pairs", []))
        assignments = self.assignment_rows(get("assignments", []))
        judgments = self.judgment_rows(get("judgments", []))
        changes = self.change_rows(get("changes", []))
        decisions = self.decision_rows(get("decisions", []))
        publications = self.publication_rows(get("publications", []))
        external_judges = self.external_judge_rows(get("external_judges", []))
        imports = self.import_rows(get("imports", []))
        external_grades = self.external_grade_rows(get("external_grades", []))
        machine_runs = self.machine_run_rows(get("machine_runs", []))
        machine_answers = self.machine_answer_rows(get("machine_answers", []))
        audits = self.audit_rows(get("audits", []))
        if self.total:
            raise self.fail()
        return Backup(
            version=version,
            external_judges=external_judges,
            external_grades=external_grades,
            imports=imports,
            machine_runs=machine_runs,
            machine_answers=machine_answers,
            audits=audits,
            name=self.name,
            exported_at=top["exported_at"],
            campaign=campaign,
            users=users,
            judges=judges,
            topics=topics,
            documents=documents,
            pairs=pairs,
            assignments=assignments,
            judgments=judgments,
            changes=changes,
            decisions=decisions,
            publications=publications,
        )

    def rows(
        self,
        section: str,
        value: Any,
        checks: dict[str, Checker],
        refs: tuple[str, ...],
        each: Callable[[str, dict], bool],
    ) -> list[dict]:
        """The section's rows that passed ``object`` and then ``each``, which checks the
        references (all present) and reports its problems."""
        result = []
        for index, item in enumerate(self.list(section, value)):
            path = f"{section}[{index}]"
            row, ok = self.object(path, item, checks, refs)
            if row and (ok or all(key in row for key in refs)) and each(path, row) and ok:
                result.append(row)
        return result

    def users(self, value: Any) -> list[dict]:
        username = schema.username_checker()
        user_model = schema.get_user_model()
        checks = {
            "username": username,
            **{
                key: text_checker(user_model._meta.get_field(key).max_length)
                for key in schema.USER
                if key != "username"
            },
        }
        first: dict[str, int] = {}

        def each(path: str, row: dict) -> bool:
            ok = True
            name = row.get("username")
            if name is not None:
                if name in first:
                    self.add(f"{path}.username", f"{_show(name)} is already users[{first[name]}]")
                    ok = False
                else:
                    first[name] = int(path[6:-1])
                    self.usernames.add(name)
                    row["path"] = path
            if "roles" in row:
                roles = row["roles"]
                if not isinstance(roles, list) or any(
                    type(r) is not str or r not in Role.values for r in roles
                ):
                    self.add(
                        f"{path}.roles",
                        f"must be a list of roles out of {', '.join(Role.values)}",
                    )
                    ok = False
                elif len(set(roles)) != len(roles):
                    self.add(f"{path}.roles", "names a role more than once")
                    ok = False
            return ok

        return self.rows("users", value, checks, schema.USER_REFS, each)

    def campaign(self, value: Any) -> dict:
        fields = schema.CAMPAIGN if self.version < 2 else {**schema.CAMPAIGN, **schema.CAMPAIGN_V2}
        row, ok = self.object(
            "campaign", value, checkers(schema.Campaign, fields), schema.CAMPAIGN_REFS
        )
        if "lead" in row:
            self.user("campaign.lead", row["lead"], nullable=False)
        if "scale" in row:
            try:
                validate_scale(row["scale"])
                self.grades = [item["grade"] for item in row["scale"]]
            except ValueError as error:
                self.add("campaign.scale", str(error))
        threshold = row.get("relevance_threshold")
        if None not in (self.grades, threshold) and threshold not in self.grades:
            self.add("campaign.relevance_threshold", f"{threshold} is not a grade of the scale")
        if row.get("overlap") == 0:
            self.add("campaign.overlap", "must be at least 1")
        accuracy = row.get("gold_min_accuracy")
        if accuracy is not None and not 0 <= accuracy <= 1:
            self.add("campaign.gold_min_accuracy", "must be a fraction between 0 and 1")
        return row if ok else {}

    def judges(self, value: Any) -> list[dict]:
        first: dict[str, str] = {}

        def each(path: str, row: dict) -> bool:
            name = self.user(f"{path}.username", row["username"], nullable=False)
            if name is None:
                return False
            if name in first:
                self.add(f"{path}.username", f"{_show(name)} is already {first[name]}")
                return False
            first[name] = path
            return True

        return self.rows(
            "judges", value, checkers(schema.CampaignJudge, schema.JUDGE), schema.JUDGE_REFS, each
        )

    def keyed(
        self, section: str, value: Any, fields: dict[str, str], key: str, known: dict[str, int]
    ) -> list[dict]:
        """Topics or documents: unique by qid or docno."""

        def each(path: str, row: dict) -> bool:
            if key not in row:
                return True
            index = int(path[len(section) + 1 : -1])
            if row[key] in known:
                self.add(
                    f"{path}.{key}", f"{_show(row[key])} is already {section}[{known[row[key]]}]"
                )
                return False
            known[row[key]] = index
            return True

        return self.rows(section, value, checkers(schema.MODELS[section], fields), (), each)

    def pair_rows(self, value: Any) -> list[dict]:
        def each(path: str, row: dict) -> bool:
            qid = self.check(f"{path}.qid", _QID, row["qid"])
            docno = self.check(f"{path}.docno", _DOCNO, row["docno"])
            ok = qid is not None and docno is not None
            if qid is not None and qid not in self.topics:
                self.add(f"{path}.qid", f"topic {_show(qid)} is not in topics")
                ok = False
            if docno is not None and docno not in self.documents:
                self.add(f"{path}.docno", f"document {_show(docno)} is not in documents")
                ok = False
            if qid is not None and docno is not None:
                if (qid, docno) in self.pairs:
                    self.add(path, f"the pair is already pairs[{self.pairs[qid, docno]}]")
                    return False
                self.pairs[qid, docno] = int(path[6:-1])
            if "gold_grade" in row:
                self.on_scale(f"{path}.gold_grade", row["gold_grade"])
            return ok

        return self.rows("pairs", value, checkers(schema.Pair, schema.PAIR), schema.PAIR_REFS, each)

    def assignment_rows(self, value: Any) -> list[dict]:
        slots: dict[tuple[str, str, int], int] = {}

        def each(path: str, row: dict) -> bool:
            pair = self.pair(path, row)
            judge = self.user(f"{path}.judge", row["judge"], nullable=False)
            index = int(path[12:-1])
            ok = pair is not None and judge is not None
            if ok:
                key = (*pair, judge)
                if key in self.assignments:
                    self.add(
                        path,
                        f"the pair is already assigned to {_show(judge)} at "
                        f"assignments[{self.assignments[key]}]",
                    )
                    return False
                self.assignments[key] = index
            slot, overlap = row.get("slot"), row.get("overlap")
            if slot is not None and overlap is not None:
                if not 1 <= slot <= overlap:
                    self.add(f"{path}.slot", f"must be between 1 and the overlap ({overlap})")
                    ok = False
                elif pair is not None:
                    if (*pair, slot) in slots:
                        self.add(
                            f"{path}.slot",
                            f"slot {slot} of the pair is already taken at "
                            f"assignments[{slots[*pair, slot]}]",
                        )
                        ok = False
                    else:
                        slots[*pair, slot] = index
            return ok

        return self.rows(
            "assignments",
            value,
            checkers(schema.Assignment, schema.ASSIGNMENT),
            schema.ASSIGNMENT_REFS,
            each,
        )

    def judgment_rows(self, value: Any) -> list[dict]:
        judged: dict[tuple[str, str, str], str] = {}

        def each(path: str, row: dict) -> bool:
            key = self.assignment(path, row)
            ok = key is not None
            if key is not None:
                if key in judged:
                    self.add(path, f"the assignment already has a judgment at {judged[key]}")
                    ok = False
                judged[key] = path
            if "grade" in row and "skip_reason" in row:
                if row["grade"] is None and row["skip_reason"] == "":
                    self.add(path, "a judgment needs a grade or a skip reason")
                    ok = False
                self.on_scale(f"{path}.grade", row["grade"])
            if row.get("seconds") is not None and row["seconds"] < 0:
                self.add(f"{path}.seconds", "must not be negative")
                ok = False
            return ok

        return self.rows(
            "judgments",
            value,
            checkers(schema.Judgment, schema.JUDGMENT),
            schema.JUDGMENT_REFS,
            each,
        )

    def change_rows(self, value: Any) -> list[dict]:
        def each(path: str, row: dict) -> bool:
            key = self.assignment(path, row)
            self.user(f"{path}.changed_by", row["changed_by"], nullable=True)
            return key is not None

        return self.rows(
            "changes",
            value,
            checkers(schema.JudgmentChange, schema.CHANGE),
            schema.CHANGE_REFS,
            each,
        )

    def decision_rows(self, value: Any) -> list[dict]:
        first: dict[tuple[str, str], str] = {}  # pair -> path of its first decision
        superseded: dict[int, str] = {}  # id -> path of the decision superseding it

        def each(path: str, row: dict) -> bool:
            index = int(path[10:-1])
            number = self.check(f"{path}.id", _DECISION_ID, row["id"])
            pair = self.pair(path, row)
            self.user(f"{path}.decided_by", row["decided_by"], nullable=True)
            ok = number is not None and pair is not None
            if number is not None:
                if number in self.decisions:
                    self.add(
                        f"{path}.id", f"{number} is already decisions[{self.decisions[number][0]}]"
                    )
                    return False
                self.decisions[number] = (index, pair)
            earlier = row["supersedes"]
            if earlier is None:
                if pair is not None and pair in first:
                    self.add(
                        f"{path}.supersedes",
                        f"the pair's first decision is {first[pair]}: a later one must "
                        "supersede the pair's current decision",
                    )
                    ok = False
                elif pair is not None:
                    first[pair] = path
            elif type(earlier) is not int or earlier not in self.decisions or earlier == number:
                self.add(
                    f"{path}.supersedes",
                    f"decision {_show(earlier)} is not among the decisions listed before this one",
                )
                ok = False
            else:
                before_index, before_pair = self.decisions[earlier]
                if None not in (pair, before_pair) and before_pair != pair:
                    self.add(
                        f"{path}.supersedes",
                        f"decisions[{before_index}] is about another pair",
                    )
                    ok = False
                if earlier in superseded:
                    self.add(
                        f"{path}.supersedes",
                        f"decisions[{before_index}] is already superseded by {superseded[earlier]}",
                    )
                    ok = False
                superseded[earlier] = path
            return ok

        return self.rows(
            "decisions",
            value,
            checkers(schema.LeadDecision, schema.DECISION),
            schema.DECISION_REFS,
            each,
        )

    def external_judge_rows(self, value: Any) -> list[dict]:
        """Outside people and machines: unique names; a configuration only for a machine;
        in version 3 who created the judge and its configuration (a username or null)."""
        machine_checks = checkers(schema.MachineJudge, schema.MACHINE)
        v3 = self.version >= 3
        machine_refs = schema.MACHINE_REFS_V3 if v3 else ()

        def each(path: str, row: dict) -> bool:
            ok = True
            if v3:
                self.user(f"{path}.created_by", row["created_by"], nullable=True)
            else:
                row["created_by"] = None  # before version 3 nobody is named
            name = row.get("name")
            if name is not None:
                if not name.strip():
                    self.add(f"{path}.name", "must not be empty")
                    ok = False
                elif name in self.external_judges:
                    self.add(
                        f"{path}.name", f"{_show(name)} is already {self.external_judges[name]}"
                    )
                    ok = False
                else:
                    self.external_judges[name] = path
            machine = row["machine"]
            if machine is not None:
                if row.get("kind") != "machine":
                    self.add(f"{path}.machine", "only a machine judge has a configuration")
                    return False
                if name is not None:
                    self.machines.add(name)
                checked, fine = self.object(
                    f"{path}.machine", machine, machine_checks, machine_refs
                )
                if not fine:
                    return False
                if v3:
                    self.user(f"{path}.machine.created_by", checked["created_by"], nullable=True)
                else:
                    checked["created_by"] = None
                if not 1 <= checked["concurrency"] <= 64:
                    self.add(f"{path}.machine.concurrency", "must be between 1 and 64")
                    ok = False
                if not 0 <= checked["temperature"] <= 2:
                    self.add(f"{path}.machine.temperature", "must be between 0 and 2")
                    ok = False
                if checked["timeout"] <= 0:
                    self.add(f"{path}.machine.timeout", "must be positive")
                    ok = False
                row["machine"] = checked
            return ok

        return self.rows(
            "external_judges",
            value,
            checkers(schema.ExternalJudge, schema.EXTERNAL_JUDGE),
            schema.EXTERNAL_JUDGE_REFS_V3 if v3 else schema.EXTERNAL_JUDGE_REFS,
            each,
        )

    def external_grade_rows(self, value: Any) -> list[dict]:
        """One grade per pair per outside or machine judge, on the campaign's scale; in
        version 3 with the import that gave it (``source``: an id of ``imports``, or null)."""
        graded: dict[tuple[str, str, str], str] = {}
        v3 = self.version >= 3

        def each(path: str, row: dict) -> bool:
            pair = self.pair(path, row)
            judge = row["judge"]
            ok = pair is not None
            if type(judge) is not str or judge not in self.external_judges:
                self.add(f"{path}.judge", f"{_show(judge)} is not in external_judges")
                ok = False
            elif pair is not None:
                key = (judge, *pair)
                if key in graded:
                    self.add(path, f"{_show(judge)} already graded the pair at {graded[key]}")
                    ok = False
                graded[key] = path
                self.external_grades.add(key)
            if not v3:
                row["source"] = None  # before version 3 no grade names its import
            elif row["source"] is not None and (
                type(row["source"]) is not int or row["source"] not in self.imports
            ):
                self.add(f"{path}.source", f"import {_show(row['source'])} is not in imports")
                ok = False
            if "grade" in row:
                self.on_scale(f"{path}.grade", row["grade"])
            if row.get("seconds") is not None and row["seconds"] < 0:
                self.add(f"{path}.seconds", "must not be negative")
                ok = False
            return ok

        return self.rows(
            "external_grades",
            value,
            checkers(schema.ExternalGrade, schema.EXTERNAL_GRADE),
            schema.EXTERNAL_GRADE_REFS_V3 if v3 else schema.EXTERNAL_GRADE_REFS,
            each,
        )

    def local_id(self, path: str, value: Any, known: dict[int, str]) -> int | None:
        """A file-local id (1, 2, ...) not in ``known`` (id -> path); None after reporting."""
        number = self.check(path, _DECISION_ID, value)
        if number is not None and number in known:
            self.add(path, f"{number} is already {known[number]}")
            return None
        return number

    def import_rows(self, value: Any) -> list[dict]:
        """The provenance of imported grades (version 3): unique ids, a SHA-256 as the
        importer writes it (64 lower-case hexadecimal digits)."""

        def each(path: str, row: dict) -> bool:
            number = self.local_id(f"{path}.id", row["id"], self.imports)
            self.user(f"{path}.imported_by", row["imported_by"], nullable=True)
            ok = number is not None
            if number is not None:
                self.imports[number] = path
            digest = row.get("sha256")
            if digest is not None and (len(digest) != 64 or not _HEX.issuperset(digest)):
                self.add(
                    f"{path}.sha256",
                    f"{_show(digest)} is not a SHA-256 (64 lower-case hexadecimal digits)",
                )
                ok = False
            return ok

        return self.rows(
            "imports",
            value,
            checkers(schema.JudgmentImport, schema.IMPORT),
            schema.IMPORT_REFS,
            each,
        )

    def machine(self, path: str, judge: Any) -> str | None:
        """The name of a machine judge with its configuration, or None after reporting."""
        if type(judge) is not str or judge not in self.external_judges:
            self.add(path, f"{_show(judge)} is not in external_judges")
            return None
        if judge not in self.machines:
            self.add(
                path,
                f"{_show(judge)} is not a machine judge with a configuration "
                f"({self.external_judges[judge]})",
            )
            return None
        return judge

    def machine_run_rows(self, value: Any) -> list[dict]:
        """A machine judge's runs (version 3): unique ids, a judge with a configuration, a
        topic of ``topics`` or null."""

        def each(path: str, row: dict) -> bool:
            number = self.local_id(f"{path}.id", row["id"], self.runs)
            judge = self.machine(f"{path}.judge", row["judge"])
            self.user(f"{path}.started_by", row["started_by"], nullable=True)
            ok = number is not None and judge is not None
            if number is not None:
                self.runs[number] = path
                self.run_judges[number] = judge
            topic = row["topic"]
            if topic is not None and (type(topic) is not str or topic not in self.topics):
                self.add(f"{path}.topic", f"topic {_show(topic)} is not in topics")
                ok = False
            return ok

        return self.rows(
            "machine_runs",
            value,
            checkers(schema.MachineRun, schema.MACHINE_RUN),
            schema.MACHINE_RUN_REFS,
            each,
        )

    def machine_answer_rows(self, value: Any) -> list[dict]:
        """What machine judges answered (version 3): one answer per pair per judge, a run of
        the same judge or null, a grade exactly when graded, recorded only when graded and
        where the judge's grade of the pair is in ``external_grades``."""
        answered: dict[tuple[str, str, str], str] = {}

        def each(path: str, row: dict) -> bool:
            pair = self.pair(path, row)
            judge = self.machine(f"{path}.judge", row["judge"])
            ok = pair is not None and judge is not None
            key = None if not ok else (judge, *pair)
            if key is not None:
                if key in answered:
                    self.add(
                        path, f"{_show(judge)} already answered for the pair at {answered[key]}"
                    )
                    ok = False
                answered[key] = path
            run = row["run"]
            if run is not None:
                if type(run) is not int or run not in self.runs:
                    self.add(f"{path}.run", f"run {_show(run)} is not in machine_runs")
                    ok = False
                elif judge is not None and self.run_judges[run] not in (None, judge):
                    self.add(f"{path}.run", f"{self.runs[run]} is a run of another machine judge")
                    ok = False
            outcome = row.get("outcome")
            if (
                outcome is not None
                and "grade" in row
                and (outcome == "graded") != (row["grade"] is not None)
            ):
                self.add(
                    f"{path}.grade", "a graded answer has a grade and a failed one has none (null)"
                )
                ok = False
            recorded = row["recorded"]
            if type(recorded) is not bool:
                self.add(f"{path}.recorded", "must be true or false")
                ok = False
            elif recorded and outcome == "failed":
                self.add(f"{path}.recorded", "a failed answer records no grade")
                ok = False
            elif recorded and key is not None and key not in self.external_grades:
                self.add(
                    f"{path}.recorded",
                    f"{_show(judge)} has no grade of the pair in external_grades",
                )
                ok = False
            return ok

        return self.rows(
            "machine_answers",
            value,
            checkers(schema.MachineAnswer, schema.MACHINE_ANSWER),
            schema.MACHINE_ANSWER_REFS,
            each,
        )

    def audit_rows(self, value: Any) -> list[dict]:
        """Audits (version 3), each with the pairs it sent: pairs of the pool, each sent by
        one audit at most; one sample audit per seed and size."""
        sent: dict[tuple[str, str], str] = {}  # pair -> path of its audit pair
        samples: dict[tuple[int, int], str] = {}  # (seed, size) -> path of the sample audit
        pair_checks = checkers(schema.AuditPair, schema.AUDIT_PAIR)

        def each(path: str, row: dict) -> bool:
            self.user(f"{path}.sent_by", row["sent_by"], nullable=True)
            ok = True
            if row.get("kind") == "sample" and None not in (row.get("seed"), row.get("size")):
                label = (row["seed"], row["size"])
                if label in samples:
                    self.add(
                        path,
                        f"the sample of seed {label[0]} and size {label[1]} is already "
                        f"{samples[label]}",
                    )
                    ok = False
                samples.setdefault(label, path)
            where = f"{path}.pairs"

            def pair_each(pair_path: str, pair_row: dict) -> bool:
                pair = self.pair(pair_path, pair_row)
                if pair is None:
                    return False
                if pair in sent:
                    self.add(pair_path, f"the pair was already sent at {sent[pair]}")
                    return False
                sent[pair] = pair_path
                return True

            before = self.total
            pairs = self.rows(where, row["pairs"], pair_checks, schema.AUDIT_PAIR_REFS, pair_each)
            row["pairs"] = pairs
            return ok and self.total == before

        return self.rows(
            "audits",
            value,
            checkers(schema.MachineAudit, schema.AUDIT),
            schema.AUDIT_REFS,
            each,
        )

    def publication_rows(self, value: Any) -> list[dict]:
        labels: dict[tuple[str, int], str] = {}

        def each(path: str, row: dict) -> bool:
            self.user(f"{path}.published_by", row["published_by"], nullable=True)
            qrels = self.qrels(f"{path}.qrels", row["qrels"])
            ok = qrels is not None
            if qrels is not None:
                label = (qrels["name"], qrels["version"])
                if label in labels:
                    self.add(
                        f"{path}.qrels",
                        f"qrels {label[0]} v{label[1]} is already published at {labels[label]}",
                    )
                    ok = False
                labels[label] = f"{path}.qrels"
                row["qrels"] = qrels
            grades = self.published_grades(f"{path}.grades", row["grades"])
            ok = ok and grades is not None
            row["grades"] = grades
            row["path"] = path
            return ok

        return self.rows(
            "publications",
            value,
            checkers(schema.Publication, schema.PUBLICATION),
            schema.PUBLICATION_REFS,
            each,
        )

    def qrels(self, path: str, value: Any) -> dict | None:
        row, ok = self.object(
            path, value, checkers(schema.QrelsVersion, schema.QRELS), schema.QRELS_REFS
        )
        if "created_by" in row:
            self.user(f"{path}.created_by", row["created_by"], nullable=True)
        if "entries" not in row:
            return None
        if not isinstance(row["entries"], list):
            self.add(f"{path}.entries", "must be a list")
            return None
        entries = []
        seen: set[tuple[str, str]] = set()
        for index, entry in enumerate(row["entries"]):
            where = f"{path}.entries[{index}]"
            if not isinstance(entry, list) or len(entry) != 3:
                self.add(where, "must be [qid, docno, grade]")
                ok = False
                continue
            qid = self.check(f"{where}[0]", _QID, entry[0])
            docno = self.check(f"{where}[1]", _DOCNO, entry[1])
            grade = self.check(f"{where}[2]", _ENTRY_GRADE, entry[2])
            if qid is None or docno is None or grade is None:
                ok = False
                continue
            if (qid, docno) in seen:
                self.add(where, f"({_show(qid)}, {_show(docno)}) is listed twice")
                ok = False
            seen.add((qid, docno))
            entries.append((qid, docno, grade))
        if not ok:
            return None
        row["entries"] = entries
        if not entries:
            self.add(f"{path}.entries", "a qrels version has at least one entry")
            return None
        frame = pl.DataFrame(
            entries,
            schema={"qid": pl.String, "docno": pl.String, "grade": pl.Int64},
            orient="row",
        ).sort(["qid", "docno"])
        try:
            checksum = hashlib.sha256(qrels_to_trec_bytes(frame)).hexdigest()
        except ValueError as error:
            self.add(f"{path}.entries", str(error))
            return None
        if checksum != row["checksum"]:
            self.add(
                f"{path}.checksum",
                f"does not match the entries (their canonical TREC export has sha256 {checksum})",
            )
            ok = False
        if row["judgment_count"] != len(entries):
            self.add(f"{path}.judgment_count", f"the entries hold {len(entries)} grades")
            ok = False
        topics = frame["qid"].n_unique()
        if row["topic_count"] != topics:
            self.add(f"{path}.topic_count", f"the entries hold {topics} topics")
            ok = False
        return row if ok else None

    def published_grades(self, path: str, value: Any) -> list[dict] | None:
        seen: dict[tuple[str, str], int] = {}
        all_ok = True

        def each(where: str, row: dict) -> bool:
            nonlocal all_ok
            ok = True
            key = (row["qid"], row["docno"]) if "qid" in row and "docno" in row else None
            if key is not None:
                if key in seen:
                    self.add(where, f"the pair is already {path}[{seen[key]}]")
                    ok = False
                seen[key] = int(where[len(path) + 1 : -1])
            number = row["decision"]
            if number is not None:
                if type(number) is not int or number not in self.decisions:
                    self.add(f"{where}.decision", f"decision {_show(number)} is not in decisions")
                    ok = False
                elif None not in (key, self.decisions[number][1]) and (
                    self.decisions[number][1] != key
                ):
                    index = self.decisions[number][0]
                    self.add(f"{where}.decision", f"decisions[{index}] is about another pair")
                    ok = False
            all_ok = all_ok and ok
            return ok

        before = self.total
        rows = self.rows(
            path, value, checkers(schema.PublishedGrade, schema.GRADE), schema.GRADE_REFS, each
        )
        return rows if all_ok and self.total == before else None
