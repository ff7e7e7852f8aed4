"""Forms of the lead's pages: a campaign, file imports, pooling, judges and reassignment.

Forms translate and check input; the rules live in annotation/services/ and
annotation/tasks.py. Messages are constants so tests can assert the exact words.

One module per subject (common, campaigns, imports, pool, judges, machines); this package
names every form, so ``from annotation import forms`` then ``forms.CampaignForm`` works.
"""

from .campaigns import CampaignForm, scale_key_of
from .common import (
    MAX_OVERLAP,
    MESSAGES,
    SCALE_CHOICES,
    JudgeChoiceField,
    JudgesField,
    judge_users,
)
from .imports import (
    DocumentsImportForm,
    JudgmentsImportForm,
    PairsImportForm,
    TopicsImportForm,
    UploadForm,
)
from .judges import AddJudgeForm, JudgeForm, ReassignForm
from .machines import (
    CertifiedRedrawForm,
    CertifiedSampleForm,
    GateForm,
    GateOverrideForm,
    MachineAuditForm,
    MachineEndpointForm,
    MachineJudgeForm,
    MachineRunForm,
    MachineSettingsForm,
)
from .pool import GoldPairForm, PoolRunsForm, RunChoiceField

__all__ = [
    "MAX_OVERLAP",
    "MESSAGES",
    "SCALE_CHOICES",
    "AddJudgeForm",
    "CampaignForm",
    "CertifiedRedrawForm",
    "CertifiedSampleForm",
    "DocumentsImportForm",
    "GateForm",
    "GateOverrideForm",
    "GoldPairForm",
    "JudgeChoiceField",
    "JudgeForm",
    "JudgesField",
    "JudgmentsImportForm",
    "MachineAuditForm",
    "MachineEndpointForm",
    "MachineJudgeForm",
    "MachineRunForm",
    "MachineSettingsForm",
    "PairsImportForm",
    "PoolRunsForm",
    "ReassignForm",
    "RunChoiceField",
    "TopicsImportForm",
    "UploadForm",
    "judge_users",
    "scale_key_of",
]
