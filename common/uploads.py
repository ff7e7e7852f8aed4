"""The upload size limit, settings.MAX_UPLOAD_MB, enforced before a request body is read, for
every route (pages and API alike).

Two layers:

- :class:`UploadLimitMiddleware` refuses a request whose declared ``Content-Length`` is over
  the limit with 413, before anything reads the body (Django's CSRF check parses a form body
  to find the token; DRF parses it in the view). A page gets a short HTML page, ``/api/``
  gets JSON (``{"detail": …}``, as DRF's errors).
- :class:`UploadLimitHandler`, first in ``FILE_UPLOAD_HANDLERS``, counts the file bytes as
  the multipart parser hands them over and stops the upload once they pass the limit: the
  guard for a body longer than its ``Content-Length`` says (under ASGI the parser reads the
  whole body whatever the header claims). The middleware parses a multipart POST itself,
  before the view, so a stopped upload is a 413 too, never a view that sees no file.

Nothing is stored or staged when either refuses: no view runs. The limit counts the request
body, so it is a little stricter than the file sizes alone (multipart headers and form
fields count too).
"""

from __future__ import annotations

import contextlib

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpResponse, JsonResponse, QueryDict, UnreadablePostError
from django.template.loader import render_to_string
from django.utils.datastructures import MultiValueDict

__all__ = [
    "UPLOAD_TOO_LARGE",
    "UploadLimitHandler",
    "UploadLimitMiddleware",
    "max_upload_bytes",
    "too_large_response",
]

# The words of every refusal (the API's too, accounts/permissions.py), so that it reads the same
# wherever it happens; a page adds what to do next.
UPLOAD_TOO_LARGE = "The upload is larger than the limit of {limit} MB (MAX_UPLOAD_MB)."
NEXT_STEP = "Nothing was stored. Send a smaller file, or gzip it: every import reads .gz files."
MIB = 1024 * 1024
# Where the request's refusal is noted for the middleware (set by the handler).
_REFUSED = "_upload_limit_exceeded"


def max_upload_bytes() -> int:
    """The upload limit in bytes, the one place it is computed: a request's body with files
    (here and accounts/permissions.py), and the most an import reads after decompression
    (annotation's and evaluation's tasks and services), which read inside a request parses
    in seconds."""
    return settings.MAX_UPLOAD_MB * MIB


def declared_length(request) -> int:
    """The body's declared length; 0 when absent or not a number (Django then reads no body
    under WSGI, and the multipart parser refuses a negative one)."""
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def too_large_response(request) -> HttpResponse:
    message = UPLOAD_TOO_LARGE.format(limit=settings.MAX_UPLOAD_MB)
    if request.path_info.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=413)
    else:
        context = {"message": message, "next_step": NEXT_STEP}
        page = render_to_string("413.html", context)
        response = HttpResponse(page, status=413)
    # No "Connection: close" here: it is a hop-by-hop header, which WSGI forbids an
    # application to set; the server discards the unread body or closes the connection.
    return response


class UploadLimitMiddleware:
    """413 for a body over MAX_UPLOAD_MB, before it is read (see the module's docstring).
    Put it before CsrfViewMiddleware, whose check would parse the body."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if declared_length(request) > max_upload_bytes():
            return too_large_response(request)
        if request.method == "POST" and request.content_type == "multipart/form-data":
            # Parse now, through the upload handlers, so that a body longer than declared
            # stops at the limit here rather than reaching the view without its file. A
            # malformed body raises as it would in the CSRF check (Django answers 400); a
            # client gone mid-body is left to the CSRF check, as Django does.
            with contextlib.suppress(UnreadablePostError):
                request.POST  # noqa: B018 - the access parses the body
            if getattr(request, _REFUSED, False):
                return too_large_response(request)
        return self.get_response(request)


class UploadLimitHandler(FileUploadHandler):
    """Counts file bytes across the request's files; past MAX_UPLOAD_MB it stops the upload
    (the connection is dropped rather than the rest read) and marks the request for
    :class:`UploadLimitMiddleware`."""

    def __init__(self, request=None):
        super().__init__(request)
        self.limit = max_upload_bytes()
        self.received = 0

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length is not None and content_length > self.limit:
            # Declared too large (the middleware refuses this first): parse nothing.
            self._mark()
            return QueryDict(encoding=encoding), MultiValueDict()
        return None

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            self._refuse()
        return raw_data  # the next handler keeps it

    def file_complete(self, file_size):
        return None  # the next handler makes the file

    def _mark(self):
        if self.request is not None:
            setattr(self.request, _REFUSED, True)

    def _refuse(self):
        self._mark()
        raise StopUpload(connection_reset=True)
