"""The evaluation API: qrels, systems, runs and evaluations (DRF, thin over services).

Who may do what (accounts/permissions.py; the full matrix is in tests/api/test_permissions.py):
every logged-in user reads qrels; leads and engineers import qrels and read systems, runs
and evaluations (leads pool runs); engineers manage systems and runs and create evaluations.
Admins (superusers) hold every role. Judges see none of systems, runs or evaluations: judging
is blind to which system retrieved a document.
"""

from evaluation.api.common import MESSAGES
from evaluation.api.dashboards import ComparisonView, LeaderboardView, TopicView, UnjudgedView
from evaluation.api.diff import DiffUnjudgedView, RunDiffView
from evaluation.api.evaluations import EvaluationViewSet
from evaluation.api.fairness import PoolFairnessView
from evaluation.api.leaderboard_io import LeaderboardCheckView, LeaderboardDownloadView
from evaluation.api.qrels import QrelsViewSet
from evaluation.api.rankings import QrelsComparisonView
from evaluation.api.runs import RunViewSet, SystemViewSet
from evaluation.api.schedules import ScheduleAlertViewSet, ScheduleViewSet
from evaluation.api.search_sandbox import SearchEndpointViewSet

__all__ = [
    "MESSAGES",
    "ComparisonView",
    "DiffUnjudgedView",
    "EvaluationViewSet",
    "LeaderboardCheckView",
    "LeaderboardDownloadView",
    "LeaderboardView",
    "PoolFairnessView",
    "QrelsComparisonView",
    "QrelsViewSet",
    "RunDiffView",
    "RunViewSet",
    "ScheduleAlertViewSet",
    "ScheduleViewSet",
    "SearchEndpointViewSet",
    "SystemViewSet",
    "TopicView",
    "UnjudgedView",
]
