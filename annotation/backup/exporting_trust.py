"""Writing what a campaign holds for machine judges you can trust (format version 4, issue
33): its certified design with every pool pair's inclusion probability, and its machine
judges' gullibility gates with their overrides. :mod:`annotation.backup.exporting` writes
them after the audits."""

from __future__ import annotations

from collections.abc import Iterator

from annotation.backup import schema
from annotation.backup.rows import json_value, local_ids, rows, username
from annotation.models import (
    Campaign,
    CertifiedDesign,
    DesignPair,
    GullibilityGate,
    MachineAudit,
    Pair,
)


def certified_design(campaign: Campaign) -> dict | None:
    """The design, or None when no sample was drawn."""
    design = (
        CertifiedDesign.objects.filter(campaign=campaign)
        .select_related("machine__judge", "created_by")
        .first()
    )
    if design is None:
        return None
    row = {key: json_value(getattr(design, name)) for key, name in schema.DESIGN.items()}
    row["machine"] = design.machine.judge.name
    audits = local_ids(MachineAudit.objects.filter(campaign=campaign))
    row["audit"] = audits.get(design.audit_id)
    row["created_by"] = username(design.created_by)
    row["pairs"] = list(
        rows(
            DesignPair.objects.filter(design=design),
            (*schema.DESIGN_PAIR_REFS, *schema.DESIGN_PAIR),
            ("pair__topic__qid", "pair__document__docno", *schema.DESIGN_PAIR.values()),
        )
    )
    return row


def gates(campaign: Campaign) -> Iterator[dict]:
    """The campaign's machine judges' gates, oldest first; calls name pairs by qid, docno."""
    queryset = GullibilityGate.objects.filter(machine__judge__campaign=campaign)
    if not queryset.exists():
        return
    pairs = {
        pk: [qid, docno]
        for pk, qid, docno in Pair.objects.filter(campaign=campaign).values_list(
            "pk", "topic__qid", "document__docno"
        )
    }
    for row in rows(
        queryset,
        ("machine", "calls", "started_by", "overridden_by", *schema.GATE),
        (
            "machine__judge__name",
            "calls",
            "started_by__username",
            "overridden_by__username",
            *schema.GATE.values(),
        ),
    ):
        row["calls"] = [[*pairs.get(call[0], [None, None]), *call[1:]] for call in row["calls"]]
        yield row


def trust_people(campaign: Campaign) -> list[tuple]:
    """(queryset, user id column) of the people these rows name, for the backup's users."""
    gates_here = GullibilityGate.objects.filter(machine__judge__campaign=campaign)
    return [
        (CertifiedDesign.objects.filter(campaign=campaign), "created_by_id"),
        (gates_here, "started_by_id"),
        (gates_here, "overridden_by_id"),
    ]
