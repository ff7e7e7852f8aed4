"""The answers to errors raised before or outside a view: a Host not in ALLOWED_HOSTS, a body
that cannot be parsed, too many fields, too large a body, a failed CSRF check, a redirect to a
disallowed address, a missing page, a crash.

Django calls these (``handler400`` … ``handler500`` in config/urls.py, ``CSRF_FAILURE_VIEW``)
wherever the error happened, often before SessionMiddleware and AuthenticationMiddleware have
run: the request may have no ``session`` and no ``user``, so nothing here (nor the templates
and context processors they render) may assume either. Under ``/api/`` the answer is the API's
JSON error body (``{"detail": …}``, as DRF's own errors); elsewhere it is our own page.

A 400 says what was wrong with the request, in our words, never the exception's internals;
a body over DATA_UPLOAD_MAX_MEMORY_SIZE (Django's limit on a non-file body) is a 413, as the
upload limit's refusals are (common/uploads.py).
"""

import sys

from django.conf import settings
from django.core.exceptions import (
    DisallowedHost,
    DisallowedRedirect,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template.loader import render_to_string

from accounts.permissions import BODY_TOO_LARGE
from config.busy import busy_response, is_busy

__all__ = [
    "MethodNotAllowedMiddleware",
    "bad_request",
    "csrf_failure",
    "page_not_found",
    "permission_denied",
    "server_error",
]

BAD_REQUEST = "The request could not be understood. Check the address or the form and try again."
BAD_HOST = (
    "This server does not answer to the host name the request was sent to "
    "(the Host header). Check the address."
)
BAD_BODY = (
    "The request body could not be read as its Content-Type says ({content_type}): "
    "a multipart/form-data body needs a boundary, and its parts must follow it."
)
TOO_MANY_FIELDS = "The form sends more than {limit:,} fields; send fewer at a time."
TOO_MANY_FILES = "The form sends more than {limit:,} files; send fewer at a time."
BAD_REDIRECT = "The answer would have sent you to an address that is not allowed."
CSRF_FAILED = (
    "The form's security token is missing or out of date (CSRF check: {reason}). "
    "Reload the page and send it again."
)
FORBIDDEN = "You may not do this."
NOT_FOUND = "Not found."
METHOD_NOT_ALLOWED = "This address does not take a {method} request."
# A page that only takes a form's POST, opened by its address (a bookmark, a reload).
FORM_ONLY = "It is the target of a form or a button on another page: go back and use it there."
SERVER_ERROR = "The server could not finish this request. Try again; if it happens again, tell an admin the time."


def is_api(request) -> bool:
    return request.path_info.startswith("/api/")


def _answer(request, status: int, template: str, message: str, **context) -> HttpResponse:
    if is_api(request):
        return JsonResponse({"detail": message}, status=status)
    page = render_to_string(template, {"message": message, **context}, request=request)
    return HttpResponse(page, status=status)


def _bad_request_message(request, exception) -> tuple[int, str]:
    if isinstance(exception, RequestDataTooBig):
        return 413, BODY_TOO_LARGE.format(limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    if isinstance(exception, DisallowedHost):
        return 400, BAD_HOST
    if isinstance(exception, MultiPartParserError):
        content_type = request.META.get("CONTENT_TYPE", "")[:100] or "no Content-Type"
        return 400, BAD_BODY.format(content_type=content_type)
    if isinstance(exception, TooManyFieldsSent):
        return 400, TOO_MANY_FIELDS.format(limit=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS)
    if isinstance(exception, TooManyFilesSent):
        return 400, TOO_MANY_FILES.format(limit=settings.DATA_UPLOAD_MAX_NUMBER_FILES)
    if isinstance(exception, DisallowedRedirect):
        return 400, BAD_REDIRECT
    return 400, BAD_REQUEST


def bad_request(request, exception=None):
    """400 (413 for a body over Django's limit), with what was wrong."""
    status, message = _bad_request_message(request, exception)
    if status == 413:
        return _answer(request, 413, "413.html", message, next_step="Nothing was stored.")
    return _answer(request, 400, "400.html", message)


def permission_denied(request, exception=None):
    """403; our PermissionDenied messages say which role a page needs (no secrets)."""
    message = str(exception or "") or FORBIDDEN
    if is_api(request):
        return JsonResponse({"detail": message}, status=403)
    page = render_to_string("403.html", {"exception": str(exception or "")}, request=request)
    return HttpResponse(page, status=403)


def page_not_found(request, exception=None):
    return _answer(request, 404, "404.html", NOT_FOUND)


def server_error(request):
    """500, rendered without a request context: whatever broke may be in it. A database
    locked by another write, met outside a view (a middleware's transaction), is a 503 to
    try again (config/busy.py answers the views' own)."""
    if is_busy(sys.exception()):
        return busy_response(request)
    if is_api(request):
        return JsonResponse({"detail": SERVER_ERROR}, status=500)
    return HttpResponse(render_to_string("500.html"), status=500)


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: our 403 page, saying what to do, instead of Django's own."""
    message = CSRF_FAILED.format(reason=reason or "failed")
    if is_api(request):
        return JsonResponse({"detail": message}, status=403)
    page = render_to_string(
        "403.html", {"message": message, "title": "Form expired"}, request=request
    )
    return HttpResponse(page, status=403)


class MethodNotAllowedMiddleware:
    """Our 405 page for a page that refused the request's method. Django has no handler405:
    ``require_http_methods`` and class-based views answer an empty HttpResponseNotAllowed,
    which a browser shows as a blank page. Only those are given our page as their body; the
    API's 405s are DRF's JSON already. Listed after
    AuthenticationMiddleware, so the page knows who is logged in."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not isinstance(response, HttpResponseNotAllowed) or is_api(request):
            return response
        allowed = [m.strip() for m in response.get("Allow", "").split(",") if m.strip()]
        message = METHOD_NOT_ALLOWED.format(method=request.method[:20])
        if "POST" in allowed and "GET" not in allowed:
            message = f"{message} {FORM_ONLY}"
        # The same response, its body filled in: status, Allow header, and Django's note
        # that it was logged already (a new response would be logged a second time).
        response.content = render_to_string(
            "405.html", {"message": message, "allowed": allowed}, request
        )
        response["Content-Type"] = "text/html; charset=utf-8"
        return response
