"""evaluation's part of the REST API, version 1: its viewsets on its own router, and its
dashboard endpoints. config/api_urls.py mounts both under the ``api`` namespace, so every
URL and URL name is the one the API has always had (``api:qrels-list``, ``api:leaderboard``)."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from evaluation import api

# Path converters (<int:…>) rather than regular expressions, so the schema types every id.
router = SimpleRouter(use_regex_path=False)
router.register("qrels", api.QrelsViewSet, basename="qrels")
router.register("systems", api.SystemViewSet, basename="system")
router.register("runs", api.RunViewSet, basename="run")
router.register("evaluations", api.EvaluationViewSet, basename="evaluation")
router.register("search-endpoints", api.SearchEndpointViewSet, basename="search-endpoint")
router.register("schedules", api.ScheduleViewSet, basename="schedule")
router.register("schedule-alerts", api.ScheduleAlertViewSet, basename="schedule-alert")

urlpatterns = [
    # The dashboards (evaluation/api/dashboards.py); a run's topics are runs/{id}/topics/.
    path("leaderboard/", api.LeaderboardView.as_view(), name="leaderboard"),
    # The leaderboard in and out in the ecosystem's layouts (evaluation/api/leaderboard_io.py).
    path(
        "leaderboard/download/",
        api.LeaderboardDownloadView.as_view(),
        name="leaderboard-download",
    ),
    path("leaderboard/check/", api.LeaderboardCheckView.as_view(), name="leaderboard-check"),
    path("leaderboard/pool-fairness/", api.PoolFairnessView.as_view(), name="pool-fairness"),
    path("leaderboard/topics/<str:qid>/", api.TopicView.as_view(), name="topic"),
    path("comparison/", api.ComparisonView.as_view(), name="comparison"),
    path("unjudged/", api.UnjudgedView.as_view(), name="unjudged"),
    # The run diff (evaluation/api/diff.py).
    path("diff/", api.RunDiffView.as_view(), name="run-diff"),
    path("diff/unjudged/", api.DiffUnjudgedView.as_view(), name="run-diff-unjudged"),
    # Would a qrels version change the leaderboard? (evaluation/api/rankings.py)
    path("rankings/", api.QrelsComparisonView.as_view(), name="rankings"),
]
