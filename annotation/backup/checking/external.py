"""Checking outside and machine judges (with machines' configurations), their grades, and
the judgment imports the grades came from."""

from __future__ import annotations

from typing import Any

from annotation.backup import schema
from annotation.backup.schema import checkers

from .base import CheckBase, _show

_HEX = frozenset("0123456789abcdef")


class ExternalChecks(CheckBase):
    """Outside and machine judges, their grades and the imports of version 3."""

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
                # Whether a key was stored (never the key): optional, as older backups lack it.
                key_stored = (
                    machine.pop("api_key_stored", False) if isinstance(machine, dict) else False
                )
                if not isinstance(key_stored, bool):
                    self.add(f"{path}.machine.api_key_stored", "must be true or false")
                    return False
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
                checked["api_key_stored"] = key_stored
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
