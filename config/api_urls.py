"""The REST API, version 1 (mounted at /api/v1/ by config/urls.py).

Authentication: the browser session, or a personal token sent as ``Authorization: Bearer
<key>`` (or ``Token <key>``), made at /accounts/tokens/ or with ``manage.py create_token
USERNAME --name NAME`` (accounts/authentication.py). The OpenAPI 3 schema is at
``schema/`` and the interactive docs at ``docs/`` (Swagger UI).
"""

from django.conf import settings
from django.urls import path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import IsAuthenticated
from rest_framework.routers import DefaultRouter

from annotation import api as annotation
from evaluation import api as evaluation
from jobs import api as jobs

app_name = "api"

# Path converters (<int:…>) rather than regular expressions, so the schema types every id.
router = DefaultRouter(use_regex_path=False)
router.include_format_suffixes = False
router.register("qrels", evaluation.QrelsViewSet, basename="qrels")
router.register("systems", evaluation.SystemViewSet, basename="system")
router.register("runs", evaluation.RunViewSet, basename="run")
router.register("evaluations", evaluation.EvaluationViewSet, basename="evaluation")
router.register("search-endpoints", evaluation.SearchEndpointViewSet, basename="search-endpoint")
router.register("campaigns", annotation.CampaignViewSet, basename="campaign")
router.register(
    "campaigns/<int:campaign_pk>/topics", annotation.TopicViewSet, basename="campaign-topic"
)
router.register(
    "campaigns/<int:campaign_pk>/documents",
    annotation.DocumentViewSet,
    basename="campaign-document",
)
router.register(
    "campaigns/<int:campaign_pk>/pairs", annotation.PairViewSet, basename="campaign-pair"
)
router.register(
    "campaigns/<int:campaign_pk>/judges", annotation.JudgeViewSet, basename="campaign-judge"
)
router.register(
    "campaigns/<int:campaign_pk>/disagreements",
    annotation.DisagreementViewSet,
    basename="campaign-disagreement",
)
router.register(
    "campaigns/<int:campaign_pk>/decisions",
    annotation.DecisionViewSet,
    basename="campaign-decision",
)
router.register(
    "campaigns/<int:campaign_pk>/publications",
    annotation.PublicationViewSet,
    basename="campaign-publication",
)
router.register(
    "campaigns/<int:campaign_pk>/raw-judgments",
    annotation.RawJudgmentViewSet,
    basename="campaign-raw-judgment",
)
router.register(
    "campaigns/<int:campaign_pk>/machine-judges",
    annotation.MachineJudgeViewSet,
    basename="campaign-machine-judge",
)
router.register(
    "campaigns/<int:campaign_pk>/machine-runs",
    annotation.MachineRunViewSet,
    basename="campaign-machine-run",
)
router.register(
    "campaigns/<int:campaign_pk>/machine-audits",
    annotation.MachineAuditViewSet,
    basename="campaign-machine-audit",
)
router.register(
    "campaigns/<int:campaign_pk>/external-judges",
    annotation.ExternalJudgeViewSet,
    basename="campaign-external-judge",
)
router.register(
    "campaigns/<int:campaign_pk>/judgment-imports",
    annotation.JudgmentImportViewSet,
    basename="campaign-judgment-import",
)
router.register("assignments", annotation.AssignmentViewSet, basename="assignment")
router.register("judgments", annotation.JudgmentViewSet, basename="judgment")
router.register("jobs", jobs.JobViewSet, basename="job")

# The schema and the docs are for logged-in users, like everything else here. GET only: the
# docs page renders through a template that OPTIONS would not have. Swagger UI's "split"
# view serves its start-up script from docs/?script rather than inline, so the page runs
# under a Content Security Policy without 'unsafe-inline' scripts. (Redoc is left out: its
# template inlines a script and loads Google Fonts.)
DOCS = {"permission_classes": [IsAuthenticated], "http_method_names": ["get", "head"]}
# Swagger UI adds <style> elements from its script, so the docs page alone allows inline
# styles; scripts stay our own files only, as everywhere.
DOCS_CSP = {**settings.SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]}

urlpatterns = [
    # The dashboards (evaluation/api/dashboards.py); a run's topics are runs/{id}/topics/.
    path("leaderboard/", evaluation.LeaderboardView.as_view(), name="leaderboard"),
    # The leaderboard in and out in the ecosystem's layouts (evaluation/api/leaderboard_io.py).
    path(
        "leaderboard/download/",
        evaluation.LeaderboardDownloadView.as_view(),
        name="leaderboard-download",
    ),
    path("leaderboard/check/", evaluation.LeaderboardCheckView.as_view(), name="leaderboard-check"),
    path(
        "leaderboard/pool-fairness/",
        evaluation.PoolFairnessView.as_view(),
        name="pool-fairness",
    ),
    path("leaderboard/topics/<str:qid>/", evaluation.TopicView.as_view(), name="topic"),
    path("comparison/", evaluation.ComparisonView.as_view(), name="comparison"),
    path("unjudged/", evaluation.UnjudgedView.as_view(), name="unjudged"),
    # The run diff (evaluation/api/diff.py).
    path("diff/", evaluation.RunDiffView.as_view(), name="run-diff"),
    path("diff/unjudged/", evaluation.DiffUnjudgedView.as_view(), name="run-diff-unjudged"),
    # Would a qrels version change the leaderboard? (evaluation/api/rankings.py)
    path("rankings/", evaluation.QrelsComparisonView.as_view(), name="rankings"),
    path("schema/", SpectacularAPIView.as_view(**DOCS), name="schema"),
    path(
        "docs/",
        csp_override(DOCS_CSP)(SpectacularSwaggerSplitView.as_view(url_name="api:schema", **DOCS)),
        name="docs",
    ),
    *router.urls,
]
