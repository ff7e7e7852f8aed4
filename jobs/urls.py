from django.urls import path

from jobs import views

app_name = "jobs"

urlpatterns = [
    path("<int:pk>/", views.job_detail, name="job-detail"),
    path("<int:pk>/retry/", views.job_retry, name="job-retry"),
]
