"""Calling the WSGI application as a server does (environ in, start_response, iterate, close),
for tests that must see what a WSGI server sees: wsgiref.validate's checks, and requests
Django's test client cannot make (it bypasses the WSGI interface)."""

import io
import json
from dataclasses import dataclass
from wsgiref.util import setup_testing_defaults

from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

# A CSRF secret sent both as the cookie and in the X-CSRFToken header, as a browser would.
CSRF = "frontdoorfrontdoorfrontdoor12345"


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def encode(data, fmt: str | None) -> tuple[bytes, str | None]:
    """A request body as the test client would send it: ``json``, or a multipart form."""
    if data is None:
        return b"", None
    if fmt == "json":
        return json.dumps(data).encode(), "application/json"
    return encode_multipart(BOUNDARY, data), MULTIPART_CONTENT


def call(app, method: str, url: str, *, headers=None, body=b"", content_type=None) -> Answer:
    path, _, query = url.partition("?")
    environ = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "testserver",
        "HTTP_HOST": "testserver",
        "wsgi.input": io.BytesIO(body),
        "CONTENT_LENGTH": str(len(body)),
    }
    if content_type:
        environ["CONTENT_TYPE"] = content_type
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    setup_testing_defaults(environ)
    answer = {}

    def start_response(status, response_headers, exc_info=None):
        answer["status"] = int(status.split()[0])
        answer["headers"] = response_headers
        return lambda data: None

    result = app(environ, start_response)
    try:
        body = b"".join(result)
    finally:
        if hasattr(result, "close"):
            result.close()
    return Answer(answer["status"], answer["headers"], body)
