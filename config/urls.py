from django.contrib import admin
from django.urls import include, path

from evaluation.views import runs as evaluation_runs

urlpatterns = [
    path("", evaluation_runs.home, name="home"),
    path("accounts/", include("accounts.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("jobs/", include("jobs.urls")),
    path("campaigns/", include("annotation.urls")),
    path("api/v1/", include("config.api_urls")),
    path("admin/", admin.site.urls),
]

# Errors raised before or outside a view, pages and API alike (config/errors.py).
handler400 = "config.errors.bad_request"
handler403 = "config.errors.permission_denied"
handler404 = "config.errors.page_not_found"
handler500 = "config.errors.server_error"
