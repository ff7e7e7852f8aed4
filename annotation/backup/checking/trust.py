"""Checking what a campaign holds for machine judges you can trust (version 4, issue 33):
the machine judge whose grade is suggested, the certified design and the gullibility gates."""

from __future__ import annotations

from typing import Any

from annotation.agreement.anchoring import MAX_BLIND_SHARE, MIN_BLIND_SHARE
from annotation.backup import schema
from annotation.backup.schema import checkers, integer_checker

from .base import _DECISION_ID, CheckBase

_GRADE = integer_checker(0, 32767)


class TrustChecks(CheckBase):
    """The campaign's trust settings, its certified design and its machines' gates."""

    def trust_settings(self, campaign: dict) -> None:
        """Version 4's campaign settings: their ranges (the database's constraints) and the
        machine judge whose grade is suggested (one with a configuration, or null)."""
        threshold = campaign.get("gate_threshold")
        if threshold is not None and not 0 <= threshold < 1:
            self.add("campaign.gate_threshold", "must be a share from 0 up to (not including) 1")
        share = campaign.get("blind_share")
        if share is not None and not MIN_BLIND_SHARE <= share <= MAX_BLIND_SHARE:
            self.add(
                "campaign.blind_share", f"must be between {MIN_BLIND_SHARE} and {MAX_BLIND_SHARE}"
            )
        if campaign.get("suggestions_from") is not None:
            self.machine("campaign.suggestions_from", campaign["suggestions_from"])

    def design_row(self, value: Any, audits: list[dict]) -> dict | None:
        """The certified design (null: none drawn): a machine judge with a configuration,
        the certified audit that sent its sample (a position in ``audits``, or null), and
        each pool pair once with its probability in (0, 1]."""
        if value is None:
            return None
        path = "certified_design"
        row, ok = self.object(
            path,
            value,
            checkers(schema.CertifiedDesign, schema.DESIGN),
            schema.DESIGN_REFS,
        )
        if not row:
            return None
        ok = self.machine(f"{path}.machine", row.get("machine")) is not None and ok
        self.user(f"{path}.created_by", row.get("created_by"), nullable=True)
        audit = row.get("audit")
        if audit is not None:
            number = self.check(f"{path}.audit", _DECISION_ID, audit)
            if number is not None and number > len(audits):
                self.add(f"{path}.audit", f"there is no audit {number} in audits")
            elif number is not None and audits[number - 1].get("kind") != "certified":
                self.add(f"{path}.audit", f"audits[{number - 1}] is not a certified sample")
        seen: dict[tuple[str, str], str] = {}

        def each(pair_path: str, pair_row: dict) -> bool:
            pair = self.pair(pair_path, pair_row)
            if pair is None:
                return False
            if pair in seen:
                self.add(pair_path, f"the pair is already {seen[pair]}")
                return False
            seen[pair] = pair_path
            probability = pair_row.get("probability")
            if probability is not None and not 0 < probability <= 1:
                self.add(f"{pair_path}.probability", "must be above 0 and at most 1")
                return False
            return True

        before = self.total
        row["pairs"] = self.rows(
            f"{path}.pairs",
            row.get("pairs", []),
            checkers(schema.DesignPair, schema.DESIGN_PAIR),
            schema.DESIGN_PAIR_REFS,
            each,
        )
        return row if ok and self.total == before else None

    def gate_rows(self, value: Any) -> list[dict]:
        """Gates of machine judges with a configuration; each call names a pair of the pool
        (or none: null, null) and holds four grades or nulls."""

        def each(path: str, row: dict) -> bool:
            ok = self.machine(f"{path}.machine", row["machine"]) is not None
            self.user(f"{path}.started_by", row["started_by"], nullable=True)
            self.user(f"{path}.overridden_by", row["overridden_by"], nullable=True)
            before = self.total
            for index, call in enumerate(self.list(f"{path}.calls", row["calls"])):
                where = f"{path}.calls[{index}]"
                if not isinstance(call, list) or len(call) != 6:
                    self.add(
                        where, "must be [qid, docno, original, stuffed, instruction, shuffled]"
                    )
                    continue
                if call[:2] != [None, None]:
                    self.pair(where, {"qid": call[0], "docno": call[1]})
                for grade in call[2:]:
                    if grade is not None and self.check(where, _GRADE, grade) is None:
                        break
            if not isinstance(row["rises"], list):
                self.add(f"{path}.rises", "must be a list")
            return ok and self.total == before

        return self.rows(
            "gates",
            value,
            checkers(schema.GullibilityGate, schema.GATE),
            schema.GATE_REFS,
            each,
        )
