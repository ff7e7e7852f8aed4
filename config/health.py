"""`/healthz` and `/readyz`, for load balancers and orchestrators.

- `/healthz`: the process is up and answering. It touches nothing else, so a slow database
  never makes a balancer kill healthy web processes.
- `/readyz`: this node can serve: the database answers a query, the file storage answers a
  lookup, and the cache stores and returns a value. 200 when all three do, 503 naming the
  ones that do not. A balancer waits on it after a (re)start: a fresh gunicorn accepts
  connections seconds before its worker can answer.

Both are answered by a middleware placed first, before the host check, the https redirect
and the session: a probe comes from the balancer with the node's own address as its Host,
over plain http, and must not be redirected or refused as a foreign host. They are GET/HEAD
only, say nothing secret (a failing check names the component and the exception's class,
not its message) and are never cached.
"""

from __future__ import annotations

import logging
import time
import uuid

from django.core.cache import cache
from django.core.files.storage import default_storage
from django.db import connection
from django.http import HttpResponse, JsonResponse

__all__ = ["HealthMiddleware", "readiness"]

logger = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
_PROBE_NAME = "readyz-probe"


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _check_storage() -> None:
    # A lookup, not a write: a read-only replica of the store still serves downloads, and a
    # probe that wrote a file every few seconds would litter object storage.
    default_storage.exists(_PROBE_NAME)


def _check_cache() -> None:
    token = uuid.uuid4().hex
    key = f"{_PROBE_NAME}:{token}"
    cache.set(key, token, timeout=10)
    if cache.get(key) != token:
        # LocMem and Redis return what they were given; a cache that does not is as bad as
        # one that is down (the agreement report's cache would never hit, or hit wrongly).
        raise RuntimeError("the cache did not return the value it was given")
    cache.delete(key)


CHECKS = {"database": _check_database, "storage": _check_storage, "cache": _check_cache}


def readiness() -> tuple[bool, dict[str, dict[str, object]]]:
    """Run every check; (all passed, per check {"ok", "ms", and "error" when it failed})."""
    results: dict[str, dict[str, object]] = {}
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            check()
        except Exception as error:  # a probe reports every failure, whatever its kind
            logger.warning("readiness check %s failed: %r", name, error)
            outcome: dict[str, object] = {"ok": False, "error": type(error).__name__}
        else:
            outcome = {"ok": True}
        outcome["ms"] = round((time.perf_counter() - started) * 1000, 1)
        results[name] = outcome
    return all(result["ok"] for result in results.values()), results


class HealthMiddleware:
    """Answers the two probe paths before any other middleware sees the request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path_info.rstrip("/") or "/"
        if path not in (HEALTH_PATH, READY_PATH):
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            response = JsonResponse({"detail": "Use GET or HEAD."}, status=405)
            response["Allow"] = "GET, HEAD"
        elif path == HEALTH_PATH:
            response = HttpResponse("ok\n", content_type="text/plain; charset=utf-8")
        else:
            ready, checks = readiness()
            response = JsonResponse(
                {"status": "ready" if ready else "unavailable", "checks": checks},
                status=200 if ready else 503,
            )
        response["Cache-Control"] = "no-store"
        return response
