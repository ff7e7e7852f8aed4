"""Checking machine judges' runs and answers (version 3)."""

from __future__ import annotations

from typing import Any

from annotation.backup import schema
from annotation.backup.schema import checkers

from .base import CheckBase, _show


class MachineChecks(CheckBase):
    """Machine runs and the answers machines gave."""

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
