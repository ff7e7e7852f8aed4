"""Campaigns, their topics, documents and pool, who judges what, and every grade given.

The models live in one module per subject; this package names them all, so
``from annotation.models import Campaign`` works wherever they are defined:

- campaigns: Campaign, its choices, CampaignJudge, Topic, Document
- pool: Pair, PooledRun
- judging: Assignment, Judgment, JudgmentChange
- adjudication: LeadDecision, Publication, PublishedGrade
- external: ExternalJudge, JudgmentImport, ExternalGrade
- snapshots: AgreementSnapshot, AgreementRefresh, LiveBoardSnapshot
- machines: MachineJudge, MachineRun, MachineAnswer
- audits: MachineAudit, AuditPair
- tallies: JudgeTally, TopicTally
- trust: SampleStrategy, CertifiedDesign, DesignPair, GullibilityGate
"""

# Imported in the order the models were defined when they were one module, so the app
# registry lists them (and Django's test-database serialisation walks them) as before.
# isort: off
from .campaigns import (
    AdjudicationRule,
    Campaign,
    CampaignJudge,
    Document,
    PoolOrdering,
    StopRule,
    Topic,
    lacking_text,
)
from .pool import Pair, PairSource, PooledRun
from .judging import Assignment, AssignmentStatus, Judgment, JudgmentAction, JudgmentChange
from .adjudication import GradeBasis, LeadDecision, Publication, PublishedGrade
from .external import (
    EXTERNAL_JUDGE_KINDS,
    ExternalGrade,
    ExternalJudge,
    ImportFormat,
    JudgeKind,
    JudgmentImport,
)
from .snapshots import AgreementRefresh, AgreementSnapshot, LiveBoardSnapshot
from .machines import MachineAnswer, MachineJudge, MachineOutcome, MachineRun, MachineScope
from .audits import SENT_BY_HAND, AuditKind, AuditPair, MachineAudit
from .tallies import JudgeTally, TopicTally
from .trust import CertifiedDesign, DesignPair, GullibilityGate, SampleStrategy

# isort: on

# Migration 0001 names the default seed by this path.
from .campaigns import _new_seed as _new_seed

__all__ = [
    "EXTERNAL_JUDGE_KINDS",
    "SENT_BY_HAND",
    "AdjudicationRule",
    "AgreementRefresh",
    "AgreementSnapshot",
    "Assignment",
    "AssignmentStatus",
    "AuditKind",
    "AuditPair",
    "Campaign",
    "CampaignJudge",
    "CertifiedDesign",
    "DesignPair",
    "Document",
    "ExternalGrade",
    "ExternalJudge",
    "GradeBasis",
    "GullibilityGate",
    "ImportFormat",
    "JudgeKind",
    "JudgeTally",
    "Judgment",
    "JudgmentAction",
    "JudgmentChange",
    "JudgmentImport",
    "LeadDecision",
    "LiveBoardSnapshot",
    "MachineAnswer",
    "MachineAudit",
    "MachineJudge",
    "MachineOutcome",
    "MachineRun",
    "MachineScope",
    "Pair",
    "PairSource",
    "PoolOrdering",
    "PooledRun",
    "Publication",
    "PublishedGrade",
    "SampleStrategy",
    "StopRule",
    "Topic",
    "TopicTally",
    "lacking_text",
]
