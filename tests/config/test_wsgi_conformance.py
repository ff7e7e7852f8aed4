"""The app is a correct WSGI application on every page and endpoint: wsgiref.validate's
validator wraps it and checks each call (status line, headers that are plain ``str``, no
hop-by-hop headers, no Content-Type on a 204, the iterable closed...). runserver is wsgiref,
which refuses a header value that is not exactly ``str`` with a 500 after the view ran (issue
19: ``POST /api/v1/campaigns/`` created the campaign and answered 500, because its Location was
DRF's ``Hyperlink``); gunicorn accepts it, so only this test sees it.

Every row of both permission matrices is sent as a role the matrix lets through, plus the
front door's hostile requests, each in a transaction rolled back afterwards."""

from wsgiref.validate import validator

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.test import Client

from accounts.services.tokens import create_token
from tests.api import test_permissions as api_matrix
from tests.pages import test_permissions as page_matrix
from tests.wsgi import CSRF, call, encode

pytestmark = pytest.mark.django_db

application = validator(WSGIHandler())


@pytest.fixture(autouse=True)
def test_transaction_kept():
    """The requests run in the test's transaction: the handler must not close it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def allowed_role(statuses) -> str:
    """The first role the matrix answers without an error, else the first logged-in one."""
    for role, status in zip(api_matrix.ALL_ROLES, statuses, strict=True):
        if role != "anonymous" and status < 400:
            return role
    return "nobody"


def test_every_api_endpoint_passes_wsgirefs_checks(world, subtests):
    """One subtest per row of the API's matrix, each rolled back afterwards. Deletions come
    last: a rollback brings a run's row back, not its stored files."""
    tokens = {}
    rows = sorted(api_matrix.MATRIX, key=lambda row: row[0] == "DELETE")
    for method, path, body, statuses in rows:
        role = allowed_role(statuses)
        if role not in tokens:
            tokens[role] = create_token(user=world.users[role], name="wsgi")[1]
        url = "/api/v1/" + path.format(**world.ids)
        with subtests.test(msg=f"{method} {url} as {role}"):
            with transaction.atomic():
                # Inside the rolled-back transaction: a body may make rows (a second run).
                data, fmt = api_matrix.BODIES[body](world) if body else (None, None)
                if method == "GET" and data:  # the dashboards' options are query parameters
                    data, fmt = None, None
                payload, content_type = encode(data, fmt)
                answer = call(
                    application,
                    method,
                    url,
                    headers={"Authorization": f"Bearer {tokens[role]}"},
                    body=payload,
                    content_type=content_type,
                )
                transaction.set_rollback(True)
            expected = dict(zip(api_matrix.ALL_ROLES, statuses, strict=True))[role]
            assert answer.status < 500, answer.body[:500]
            if method != "GET":
                assert answer.status == expected, (answer.status, answer.body[:500])


def test_every_page_passes_wsgirefs_checks(world, ids, run_jobs, subtests):
    """One subtest per row of the pages' matrix, each rolled back afterwards."""
    cookies = {}
    for method, path, body, statuses in page_matrix.MATRIX:
        role = allowed_role(statuses)
        if role not in cookies:
            client = Client()
            client.force_login(world.users[role])
            cookies[role] = f"sessionid={client.cookies['sessionid'].value}; csrftoken={CSRF}"
        data = page_matrix.BODIES[body](world) if body else None
        payload, content_type = encode(data, "multipart")
        url = "/" + path.format(**ids)
        with subtests.test(msg=f"{method} {url} as {role}"):
            with transaction.atomic(), run_jobs():
                answer = call(
                    application,
                    method,
                    url,
                    headers={"Cookie": cookies[role], "X-CSRFToken": CSRF},
                    body=payload,
                    content_type=content_type,
                )
                transaction.set_rollback(True)
            expected = dict(zip(api_matrix.ALL_ROLES, statuses, strict=True))[role]
            assert answer.status == expected, (answer.status, answer.body[:500])


HOSTILE = [
    ("GET", "/accounts/login/", {"Host": "evil.example"}, b"", None, 400),
    ("GET", "/api/v1/campaigns/", {"Host": "evil.example"}, b"", None, 400),
    ("POST", "/accounts/login/", {}, b"x=1", "multipart/form-data", 400),
    ("POST", "/api/v1/campaigns/", {}, b"x=1", "multipart/form-data", 400),
    ("POST", "/api/v1/campaigns/", {}, b"[" * 5000, "application/json", 400),
    (
        "POST",
        "/accounts/login/",
        {},
        b"username=a&password=b",
        "application/x-www-form-urlencoded",
        403,
    ),
    ("GET", "/api/v1/no-such-thing/", {}, b"", None, 404),
    ("GET", "/no-such-page/", {}, b"", None, 404),
]


@pytest.mark.parametrize(("method", "path", "headers", "body", "content_type", "status"), HOSTILE)
def test_the_front_doors_refusals_pass_wsgirefs_checks(
    settings, world, method, path, headers, body, content_type, status
):
    settings.DEBUG = False
    if path.startswith("/api/"):
        token = create_token(user=world.users["lead"], name="wsgi")[1]
        headers = {**headers, "Authorization": f"Bearer {token}"}
    answer = call(application, method, path, headers=headers, body=body, content_type=content_type)
    assert answer.status == status, answer.body[:500]
