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
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.permissions import IsAuthenticated
from rest_framework.routers import DefaultRouter

from annotation.api import urls as annotation_api
from config.api_schema import SchemaView
from evaluation.api import urls as evaluation_api
from jobs import api as jobs

app_name = "api"

# Each app keeps its viewsets on its own router (evaluation/api/urls.py,
# annotation/api/urls.py); this one lists them all on the API's root, in the order the API
# has always had, and adds the jobs.
router = DefaultRouter(use_regex_path=False)
router.include_format_suffixes = False
for app_router in (evaluation_api.router, annotation_api.router):
    router.registry.extend(app_router.registry)
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
    *evaluation_api.urlpatterns,
    path("schema/", SchemaView.as_view(**DOCS), name="schema"),
    path(
        "docs/",
        csp_override(DOCS_CSP)(SpectacularSwaggerSplitView.as_view(url_name="api:schema", **DOCS)),
        name="docs",
    ),
    *router.urls,
]
