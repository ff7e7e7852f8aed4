"""Checking lead decisions and publications: the qrels versions published (entries, checksum,
counts) and the grades each publication gave."""

from __future__ import annotations

import hashlib
from typing import Any

import polars as pl

from annotation.backup import schema
from annotation.backup.schema import checkers, integer_checker
from evaluation.services import qrels_to_trec_bytes

from .base import _DECISION_ID, _DOCNO, _QID, CheckBase, _show

_ENTRY_GRADE = integer_checker(*schema.INTEGER_RANGES["SmallIntegerField"])


class DecisionChecks(CheckBase):
    """Lead decisions (their chains) and publications with their qrels and grades."""

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
            checkers(
                schema.Publication,
                schema.PUBLICATION_V4 if self.version >= 4 else schema.PUBLICATION,
            ),
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
