"""annotation's part of the REST API, version 1: its viewsets on its own router.
config/api_urls.py lists them beside the others on the API's root and mounts them under the ``api`` namespace, so every URL and URL name is the
one the API has always had (``api:campaign-list``, ``api:campaign-topic-detail``)."""

from rest_framework.routers import SimpleRouter

from annotation import api

# Path converters (<int:…>) rather than regular expressions, so the schema types every id.
router = SimpleRouter(use_regex_path=False)
router.register("campaigns", api.CampaignViewSet, basename="campaign")
router.register("campaigns/<int:campaign_pk>/topics", api.TopicViewSet, basename="campaign-topic")
router.register(
    "campaigns/<int:campaign_pk>/documents", api.DocumentViewSet, basename="campaign-document"
)
router.register("campaigns/<int:campaign_pk>/pairs", api.PairViewSet, basename="campaign-pair")
router.register("campaigns/<int:campaign_pk>/judges", api.JudgeViewSet, basename="campaign-judge")
router.register(
    "campaigns/<int:campaign_pk>/disagreements",
    api.DisagreementViewSet,
    basename="campaign-disagreement",
)
router.register(
    "campaigns/<int:campaign_pk>/decisions", api.DecisionViewSet, basename="campaign-decision"
)
router.register(
    "campaigns/<int:campaign_pk>/publications",
    api.PublicationViewSet,
    basename="campaign-publication",
)
router.register(
    "campaigns/<int:campaign_pk>/raw-judgments",
    api.RawJudgmentViewSet,
    basename="campaign-raw-judgment",
)
router.register(
    "campaigns/<int:campaign_pk>/machine-judges",
    api.MachineJudgeViewSet,
    basename="campaign-machine-judge",
)
router.register(
    "campaigns/<int:campaign_pk>/machine-runs",
    api.MachineRunViewSet,
    basename="campaign-machine-run",
)
router.register(
    "campaigns/<int:campaign_pk>/machine-audits",
    api.MachineAuditViewSet,
    basename="campaign-machine-audit",
)
router.register(
    "campaigns/<int:campaign_pk>/external-judges",
    api.ExternalJudgeViewSet,
    basename="campaign-external-judge",
)
router.register(
    "campaigns/<int:campaign_pk>/judgment-imports",
    api.JudgmentImportViewSet,
    basename="campaign-judgment-import",
)
router.register(
    "campaigns/<int:campaign_pk>/certified", api.CertifiedViewSet, basename="campaign-certified"
)
router.register(
    "campaigns/<int:campaign_pk>/machine-gates",
    api.GullibilityGateViewSet,
    basename="campaign-machine-gate",
)
router.register("assignments", api.AssignmentViewSet, basename="assignment")
router.register("judgments", api.JudgmentViewSet, basename="judgment")
