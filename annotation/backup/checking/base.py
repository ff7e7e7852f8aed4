"""What every check of a backup shares: the error a refused backup raises, the checked
document (:class:`Backup`), and the checker's state, reporting, object shapes and
references (:class:`CheckBase`), on which the subjects' checks build."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from annotation.backup import schema
from annotation.backup.schema import Bad, Checker, integer_checker, text_checker
from annotation.models import Topic
from common.ids import MAX_ID
from evaluation.models import QrelsEntry

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
    certified_design: dict[str, Any] | None = None
    gates: list[dict[str, Any]] = field(default_factory=list)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


_QID = text_checker(Topic._meta.get_field("qid").max_length)
_DOCNO = text_checker(QrelsEntry._meta.get_field("docno").max_length)
_DECISION_ID = integer_checker(1, MAX_ID)  # also the file-local ids of imports and runs


class CheckBase:
    """What the subjects' checks share: what the sections checked so far made known (users,
    keys, the scale) for the references of later ones, and the means to report problems and
    to check objects and references."""

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

    def local_id(self, path: str, value: Any, known: dict[int, str]) -> int | None:
        """A file-local id (1, 2, ...) not in ``known`` (id -> path); None after reporting."""
        number = self.check(path, _DECISION_ID, value)
        if number is not None and number in known:
            self.add(path, f"{number} is already {known[number]}")
            return None
        return number
