"""Restoring what a campaign holds for machine judges you can trust (format version 4,
issue 33): the machine judge whose grade is suggested, the certified design with every
pool pair's inclusion probability, and the gullibility gates with their overrides."""

from __future__ import annotations

from annotation.backup import schema
from annotation.models import Campaign, CertifiedDesign, DesignPair, GullibilityGate

from .inserting import RestoreBase, _fields, _insert


class TrustRestore(RestoreBase):
    """The suggestion setting's machine, the design and the gates (after the machine judges
    and the audits they name)."""

    machine_ids: dict[str, int]
    audit_ids: list[int]

    def create_trust(self, pair_ids: dict[tuple[str, str], int]) -> dict[str, int]:
        backup = self.backup
        counts: dict[str, int] = {}
        suggested = backup.campaign.get("suggestions_from")
        if suggested is not None:
            Campaign.objects.filter(pk=self.campaign_id).update(
                suggestions_from_id=self.machine_ids[suggested]
            )
        design = backup.certified_design
        if design is not None:
            [design_id] = _insert(
                CertifiedDesign,
                [
                    {
                        "campaign_id": self.campaign_id,
                        "machine_id": self.machine_ids[design["machine"]],
                        "audit_id": None
                        if design["audit"] is None
                        else self.audit_ids[design["audit"] - 1],
                        "created_by_id": self.user(design["created_by"]),
                        # The pooled runs' ids were the other instance's (not carried).
                        "runs": [],
                        **_fields(design, schema.DESIGN),
                    }
                ],
            )
            _insert(
                DesignPair,
                [
                    {
                        "design_id": design_id,
                        "pair_id": pair_ids[p["qid"], p["docno"]],
                        **_fields(p, schema.DESIGN_PAIR),
                    }
                    for p in design["pairs"]
                ],
                ids=False,
            )
            counts["certified designs"] = 1
        if backup.gates:
            _insert(
                GullibilityGate,
                [
                    {
                        "machine_id": self.machine_ids[g["machine"]],
                        "job_id": None,  # the instance's, as a machine run's
                        "started_by_id": self.user(g["started_by"]),
                        "overridden_by_id": self.user(g["overridden_by"]),
                        "calls": [
                            [pair_ids.get((qid, docno)), *grades]
                            for qid, docno, *grades in g["calls"]
                        ],
                        **_fields(g, schema.GATE),
                    }
                    for g in backup.gates
                ],
                ids=False,
            )
            counts["gullibility gates"] = len(backup.gates)
        return counts
