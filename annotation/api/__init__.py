"""The annotation API: campaigns with their topics, documents, pool, judges and progress;
assignments and judgments (DRF, thin over annotation/services.py and annotation/tasks.py).

Access, enforced per object through annotation/access.py (the matrix is in
tests/api/test_permissions.py):
- a lead manages the campaigns they lead (admins lead every campaign): its topics, documents,
  pool, judges, progress, assignments and judgments;
- a judge reads the campaigns they judge (without the judges list or the seed), their own
  assignments and judgments, and grades, skips, undoes and notes their own assignments;
- a campaign, assignment or judgment the user may not see is a 404 (a guessed id confirms
  nothing); one they see but may not change is a 403.
Imports and pooling run as background jobs: the answer is 202 with the job to poll, or 200
with the finished job when it ran before the answer (jobs.api.started). A lead's
decision on a pair that another lead decided meanwhile, and publishing while pairs are
undecided, are 409s that say why.
"""

from annotation.api.adjudication import (
    DecisionViewSet,
    DisagreementViewSet,
    PublicationViewSet,
    RawJudgmentViewSet,
)
from annotation.api.audits import MachineAuditViewSet
from annotation.api.campaigns import CampaignViewSet
from annotation.api.common import MESSAGES
from annotation.api.external import ExternalJudgeViewSet, JudgmentImportViewSet
from annotation.api.judges import JudgeViewSet
from annotation.api.judging import AssignmentViewSet, JudgmentViewSet
from annotation.api.machines import MachineJudgeViewSet, MachineRunViewSet
from annotation.api.pool import DocumentViewSet, PairViewSet, TopicViewSet
from annotation.api.trust import CertifiedViewSet, GullibilityGateViewSet

__all__ = [
    "MESSAGES",
    "AssignmentViewSet",
    "CampaignViewSet",
    "CertifiedViewSet",
    "DecisionViewSet",
    "DisagreementViewSet",
    "DocumentViewSet",
    "ExternalJudgeViewSet",
    "GullibilityGateViewSet",
    "JudgeViewSet",
    "JudgmentImportViewSet",
    "JudgmentViewSet",
    "MachineAuditViewSet",
    "MachineJudgeViewSet",
    "MachineRunViewSet",
    "PairViewSet",
    "PublicationViewSet",
    "RawJudgmentViewSet",
    "TopicViewSet",
]
