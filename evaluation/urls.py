from django.urls import path

from evaluation.views import (
    dashboards,
    diff,
    leaderboard_io,
    qrels,
    rankings,
    runs,
    schedules,
    search,
    search_sandbox,
    upload,
)

app_name = "evaluation"

urlpatterns = [
    # Qrels versions (evaluation/views/qrels.py): everyone signed in.
    path("qrels/", qrels.qrels_list, name="qrels-list"),
    path("qrels/<int:pk>/", qrels.qrels_detail, name="qrels-detail"),
    path("qrels/<int:pk>/download/", qrels.qrels_download, name="qrels-download"),
    path("qrels/<int:pk>/diff/<int:other>/", qrels.qrels_diff, name="qrels-diff"),
    path("qrels/<int:pk>/compare/", qrels.qrels_compare, name="qrels-compare"),
    path("qrels/<int:pk>/sharing/", qrels.qrels_share, name="qrels-share"),
    # Runs (evaluation/views/runs.py, upload.py): leads and engineers; engineers upload.
    path("runs/", runs.run_list, name="run-list"),
    path("runs/upload/", upload.run_upload, name="run-upload"),
    path("runs/upload/status/", upload.upload_status, name="upload-status"),
    path("runs/upload/jobs/<int:pk>/", upload.upload_job, name="upload-job"),
    path("runs/<int:pk>/", runs.run_detail, name="run-detail"),
    path("runs/<int:pk>/topics.csv", runs.run_topics_csv, name="run-topics-csv"),
    path("runs/<int:pk>/download/", runs.run_download, name="run-download"),
    # Dashboards (evaluation/views/dashboards.py, leaderboard_io.py): leads and engineers.
    path("measures/", dashboards.measures_page, name="measures"),
    path("leaderboard/", dashboards.leaderboard, name="leaderboard"),
    path("leaderboard/score/", dashboards.score_runs, name="score-runs"),
    path("leaderboard/pool-fairness/", dashboards.pool_fairness, name="pool-fairness"),
    path(
        "leaderboard/download/",
        leaderboard_io.leaderboard_download,
        name="leaderboard-download",
    ),
    path("leaderboard/check/", leaderboard_io.leaderboard_check, name="leaderboard-check"),
    path("topics/<str:qid>/", dashboards.topic_detail, name="topic-detail"),
    path("documents/", dashboards.document_text, name="document-text"),
    path("compare/", dashboards.compare, name="compare"),
    path("unjudged/send/", dashboards.send_unjudged, name="send-unjudged"),
    # Run diff (evaluation/views/diff.py): leads and engineers; a campaign's lead sends.
    path("diff/", diff.run_diff, name="run-diff"),
    path("diff/send/", diff.run_diff_send, name="run-diff-send"),
    # Would a qrels version change the leaderboard? (evaluation/views/rankings.py)
    path("rankings/", rankings.qrels_rankings, name="rankings"),
    # Search endpoints (evaluation/views/search.py): leads and engineers.
    path("search/", search.search_list, name="search-list"),
    path("search/new/", search.search_new, name="search-new"),
    path("search/<int:pk>/", search.search_endpoint, name="search-endpoint"),
    path("search/<int:pk>/edit/", search.search_edit, name="search-edit"),
    path("search/<int:pk>/test/", search.search_test, name="search-test"),
    path("search/<int:pk>/run/", search.search_run, name="search-run"),
    # The query sandbox (evaluation/views/search_sandbox.py): trials, versions.
    path("search/<int:pk>/sandbox/", search_sandbox.search_sandbox, name="search-sandbox"),
    path("search/<int:pk>/trials/<int:trial>/", search_sandbox.search_trial, name="search-trial"),
    path(
        "search/<int:pk>/trials/<int:trial>/save/",
        search_sandbox.search_trial_save,
        name="search-trial-save",
    ),
    path("search/<int:pk>/versions/", search_sandbox.search_versions, name="search-versions"),
    # Schedules of search endpoints (evaluation/views/schedules.py): their owner, and admins.
    path("schedules/", schedules.schedule_list, name="schedule-list"),
    path("schedules/new/", schedules.schedule_new, name="schedule-new"),
    path("schedules/<int:pk>/", schedules.schedule_detail, name="schedule-detail"),
    path("schedules/<int:pk>/edit/", schedules.schedule_edit, name="schedule-edit"),
    path("schedules/<int:pk>/pause/", schedules.schedule_pause, name="schedule-pause"),
    path("schedules/<int:pk>/delete/", schedules.schedule_delete, name="schedule-delete"),
    path(
        "schedules/alerts/<int:pk>/acknowledge/",
        schedules.alert_acknowledge,
        name="schedule-alert-acknowledge",
    ),
]
