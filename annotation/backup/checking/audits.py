"""Checking audits and the pairs each sent to human judges (version 3)."""

from __future__ import annotations

from typing import Any

from annotation.backup import schema
from annotation.backup.schema import checkers

from .base import CheckBase


class AuditChecks(CheckBase):
    """Audits and their pairs."""

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
