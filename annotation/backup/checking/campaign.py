"""Checking the campaign's core: its settings and scale, judges, topics, documents, pairs,
assignments, judgments and their history."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from annotation.backup import schema
from annotation.backup.schema import checkers, field_checker
from annotation.scales import validate_scale
from annotation.services.stopping import read_stop_settings

from .base import _DOCNO, _QID, CheckBase, _show

_TIME = field_checker(schema.Campaign._meta.get_field("created_at"))


class CampaignChecks(CheckBase):
    """The campaign and the rows its judging is made of."""

    def campaign(self, value: Any) -> dict:
        fields = schema.CAMPAIGN if self.version < 2 else {**schema.CAMPAIGN, **schema.CAMPAIGN_V2}
        refs = schema.CAMPAIGN_REFS
        if self.version >= 4:
            fields, refs = {**fields, **schema.CAMPAIGN_V4}, schema.CAMPAIGN_REFS_V4
        if self.version >= 5:
            fields = {**fields, **schema.CAMPAIGN_V5}
        row, ok = self.object("campaign", value, checkers(schema.Campaign, fields), refs)
        self.stop_settings(row)
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

    def stop_settings(self, row: dict) -> None:
        """Version 5's stop rule: what a lead may choose (services/stopping.py, the same
        words), and a record of what it did that the pages can read (an object whose
        ``at`` and ``resumed_at``, when there, are times)."""
        if {"stop_rule", "stop_confidence", "stop_top"} <= row.keys():
            try:
                read_stop_settings(
                    rule=row["stop_rule"], confidence=row["stop_confidence"], top=row["stop_top"]
                )
            except ValidationError as error:
                for key, messages in error.message_dict.items():
                    self.add(f"campaign.stop_{key}", " ".join(messages))
        event = row.get("stop_event")
        if event is None:
            return
        if not isinstance(event, dict):
            self.add("campaign.stop_event", "must be an object")
            return
        for key in ("at", "resumed_at"):
            if key in event:
                self.check(f"campaign.stop_event.{key}", _TIME, event[key])

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
