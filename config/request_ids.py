"""A request id on every request, its response and every log line written while it is
served: the client's (or the proxy's) `X-Request-ID` when it looks like one, else a new one.
Log lines outside a request (workers, commands) carry `-`. settings.LOGGING adds it to the
text format and, with `LOG_FORMAT=json`, to every JSON line."""

from __future__ import annotations

import contextvars
import logging
import re
import uuid

from django.core.signals import request_finished

__all__ = ["HEADER", "RequestIdFilter", "RequestIdMiddleware", "current_request_id"]

HEADER = "X-Request-ID"
# Kept when short and printable with no spaces; anything else could forge or break log lines.
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def current_request_id() -> str:
    return _request_id.get()


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.META.get("HTTP_X_REQUEST_ID", "")
        request_id = given if _SANE.fullmatch(given) else uuid.uuid4().hex
        request.request_id = request_id
        # Kept until the response is finished (not reset on the way out): Django logs
        # "Not Found: …" and other 4xx/5xx lines after the middleware chain has returned.
        _request_id.set(request_id)
        response = self.get_response(request)
        response[HEADER] = request_id
        return response


def _forget(**kwargs) -> None:
    _request_id.set("-")


request_finished.connect(_forget, dispatch_uid="request-id-forget")


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get()
        return True
