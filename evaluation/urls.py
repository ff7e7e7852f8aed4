from django.urls import path

from evaluation import views, views_dashboards, views_diff, views_leaderboards, views_upload

app_name = "evaluation"

urlpatterns = [
    path("qrels/", views.qrels_list, name="qrels-list"),
    path("qrels/<int:pk>/", views.qrels_detail, name="qrels-detail"),
    path("qrels/<int:pk>/download/", views.qrels_download, name="qrels-download"),
    path("qrels/<int:pk>/diff/<int:other>/", views.qrels_diff, name="qrels-diff"),
    path("runs/", views.run_list, name="run-list"),
    path("runs/upload/", views_upload.run_upload, name="run-upload"),
    path("runs/upload/status/", views_upload.upload_status, name="upload-status"),
    path("runs/upload/jobs/<int:pk>/", views_upload.upload_job, name="upload-job"),
    path("runs/<int:pk>/", views_dashboards.run_detail, name="run-detail"),
    path("runs/<int:pk>/topics.csv", views_dashboards.run_topics_csv, name="run-topics-csv"),
    path("runs/<int:pk>/download/", views.run_download, name="run-download"),
    # Dashboards (evaluation/views_dashboards.py): leads and engineers.
    path("measures/", views_dashboards.measures_page, name="measures"),
    path("leaderboard/", views_dashboards.leaderboard, name="leaderboard"),
    path("leaderboard/score/", views_dashboards.score_runs, name="score-runs"),
    path(
        "leaderboard/download/",
        views_leaderboards.leaderboard_download,
        name="leaderboard-download",
    ),
    path("leaderboard/check/", views_leaderboards.leaderboard_check, name="leaderboard-check"),
    path("topics/<str:qid>/", views_dashboards.topic_detail, name="topic-detail"),
    path("documents/", views_dashboards.document_text, name="document-text"),
    path("compare/", views_dashboards.compare, name="compare"),
    path("unjudged/send/", views_dashboards.send_unjudged, name="send-unjudged"),
    # Run diff (evaluation/views_diff.py): leads and engineers; a campaign's lead sends.
    path("diff/", views_diff.run_diff, name="run-diff"),
    path("diff/send/", views_diff.run_diff_send, name="run-diff-send"),
]
