from django.urls import path

from evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("qrels/", views.qrels_list, name="qrels-list"),
    path("qrels/<int:pk>/", views.qrels_detail, name="qrels-detail"),
    path("qrels/<int:pk>/download/", views.qrels_download, name="qrels-download"),
    path("runs/", views.run_list, name="run-list"),
    path("runs/<int:pk>/", views.run_detail, name="run-detail"),
    path("runs/<int:pk>/download/", views.run_download, name="run-download"),
]
