"""Two answers about writes that are neither the user's mistake nor a bug, on pages and in the
API alike, never a 500:

- 413 for work larger than one request may write (jobs.services.limits.TooLargeForRequest): its
  message names the limit (SYNC_WRITE_ROWS) and the path that takes any size (a file import
  or a job); nothing was written.
- 503 with Retry-After when the database stayed locked by another write for longer than the
  busy timeout (SQLite, "database is locked"): the request's transaction was rolled back, so
  sending it again is safe. Raised outside a view (a middleware's own transaction), the same
  answer comes from the 500 handler (config.errors.server_error, through :func:`is_busy`).
"""

import logging

from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

from common.database import is_database_locked
from jobs.services.limits import TooLargeForRequest

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
DATABASE_BUSY = (
    "The database is busy with another large write and this request could not wait for it "
    "any longer; nothing was changed. Try again in a moment."
)
NOTHING_STORED = "Nothing was stored."
TOO_LARGE_TITLE = "Too large for one request"


def is_busy(exception: BaseException | None) -> bool:
    return exception is not None and is_database_locked(exception)


def busy_response(request) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        response = JsonResponse({"detail": DATABASE_BUSY}, status=503)
    else:
        response = HttpResponse(
            render_to_string("503.html", {"message": DATABASE_BUSY}), status=503
        )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def too_large_response(request, message: str) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": message}, status=413)
    context = {"message": message, "next_step": NOTHING_STORED, "title": TOO_LARGE_TITLE}
    page = render_to_string("413.html", context, request=request)
    return HttpResponse(page, status=413)


class BusyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, TooLargeForRequest):
            return too_large_response(request, str(exception))
        if is_busy(exception):
            logger.warning("%s %s: the database is locked", request.method, request.path)
            return busy_response(request)
        return None
