"""Prometheus metrics at `/metrics` (prometheus_client; django-prometheus does not support
Django 6.1 yet):
- `http_request_duration_seconds{route, method, status}`: latency by URL route (the pattern,
  e.g. `campaigns/<int:pk>/agreement/`, never the raw path, so ids do not explode the labels);
- `judging_grades_total{action}`: grades, regrades, skips, undos and notes as they commit
  (grades per minute is `rate(judging_grades_total{action=~"graded|regraded"}[1m]) * 60`),
  counted by annotation, which owns the grades (annotation/signals.py);
- `jobs{status}`: background jobs queued, running, failed and succeeded, read from the
  database at each scrape, so every web node reports the same figures.

Under gunicorn each worker is a process with its own counters: set
`PROMETHEUS_MULTIPROC_DIR` to an empty folder (prometheus_client's multiprocess mode) and
`/metrics` sums every worker's. `/metrics` answers only a request carrying
`Authorization: Bearer $METRICS_TOKEN`; without that setting it does not exist (404). Like the
probes it answers before the host check and the https redirect (Prometheus scrapes nodes by
address over http).
"""

from __future__ import annotations

import hmac
import os
import time

from django.conf import settings
from django.db.models import Count
from django.http import HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

__all__ = ["MetricsMiddleware"]

METRICS_PATH = "/metrics"

REQUEST_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time from the request reaching the app to its answer, by URL route.",
    ["route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)


# --- metrics -----------------------------------------------------------------------------


class _JobsCollector:
    """Jobs by status, counted in the database when Prometheus scrapes."""

    def describe(self):
        # What registering needs, without a database (the registry asks at import time).
        yield GaugeMetricFamily("jobs", "Background jobs by status.", labels=["status"])

    def collect(self):
        from jobs.models import Job, JobStatus

        family = GaugeMetricFamily("jobs", "Background jobs by status.", labels=["status"])
        counts = dict(
            Job.objects.order_by()
            .values_list("status")
            .annotate(n=Count("pk"))
            .values_list("status", "n")
        )
        for status in JobStatus.values:
            family.add_metric([status], counts.get(status, 0))
        yield family


JOBS = _JobsCollector()
REGISTRY.register(JOBS)


def _registry() -> CollectorRegistry:
    """This process's metrics, or every gunicorn worker's in multiprocess mode."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    registry.register(JOBS)
    return registry


def _authorised(request) -> bool:
    token = getattr(settings, "METRICS_TOKEN", "")
    given = request.META.get("HTTP_AUTHORIZATION", "")
    return bool(token) and hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


def _route(request) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return "(unmatched)"  # 404s, probes, static files: one label, not one per path
    return match.route or match.view_name or "(unnamed)"


class MetricsMiddleware:
    """Times every request by route, and answers `/metrics` (see the module's docstring)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path_info.rstrip("/") == METRICS_PATH and settings.METRICS_TOKEN:
            if not _authorised(request):
                response = HttpResponse("Metrics need the scrape token.\n", status=401)
                response["WWW-Authenticate"] = 'Bearer realm="metrics"'
                return response
            response = HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
            response["Cache-Control"] = "no-store"
            return response
        started = time.perf_counter()
        response = self.get_response(request)
        REQUEST_DURATION.labels(_route(request), request.method, str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response
