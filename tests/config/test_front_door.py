"""Errors raised before or outside a view (config/errors.py) answer with their own status and
our page, or the API's JSON error body under /api/, with DEBUG off as in production: never a
500. Most of them happen before SessionMiddleware and AuthenticationMiddleware, so the pages
render with no session and no user (the bug behind issue 19: the 400 page's context asked for
``request.user`` and the 400 became a 500).

tests/live/ sends the same requests to gunicorn and runserver."""

import json

import pytest
from django.core.exceptions import DisallowedRedirect
from django.urls import include, path

from config import errors
from config.json_bodies import MAX_DEPTH, TOO_DEEP
from config.urls import handler400, handler403, handler404, handler500  # noqa: F401 (used by Django)

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
API_CREATE = "/api/v1/campaigns/"


def unsafe_redirect(request):
    raise DisallowedRedirect("Unsafe redirect to URL with protocol 'javascript'")


def api_unsafe_redirect(request):
    raise DisallowedRedirect("Unsafe redirect to URL with protocol 'javascript'")


urlpatterns = [
    path("redirect/", unsafe_redirect),
    path("api/v1/redirect/", api_unsafe_redirect),
    path("", include("config.urls")),
]


@pytest.fixture
def production(settings, client):
    settings.DEBUG = False
    settings.ROOT_URLCONF = __name__
    # A handler that fails would re-raise here (the test client re-raises what reaches
    # got_request_exception): a 500 cannot hide behind a status check.
    client.raise_request_exception = True
    return client


@pytest.fixture
def lead_token(django_user_model):
    from django.contrib.auth.models import Group

    from accounts.services.tokens import create_token

    user = django_user_model.objects.create_user("lea")
    user.groups.add(Group.objects.get(name="lead"))
    return create_token(user=user, name="front-door")[1]


def assert_page(response, status: int, words: str):
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert words in body, body[:2000]
    assert "Traceback" not in body


def assert_api(response, status: int, words: str):
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    assert words in response.json()["detail"], response.json()


def test_a_host_not_allowed_is_a_400_page_without_a_user(production):
    assert_page(production.get(LOGIN, HTTP_HOST="evil.example"), 400, errors.BAD_HOST)


def test_a_host_not_allowed_is_a_400_json_error_on_the_api(production):
    assert_api(production.get(API_CREATE, HTTP_HOST="evil.example"), 400, errors.BAD_HOST)


def test_multipart_without_a_boundary_is_a_400_on_the_login_page(production):
    response = production.post(LOGIN, b"x=1", content_type="multipart/form-data")
    assert_page(response, 400, "needs a boundary")


def test_multipart_without_a_boundary_is_a_400_on_the_api(production, lead_token):
    response = production.post(
        API_CREATE,
        b"x=1",
        content_type="multipart/form-data",
        headers={"Authorization": f"Bearer {lead_token}"},
    )
    assert_api(response, 400, "needs a boundary")


def test_too_many_form_fields_is_a_400_on_the_api(production, lead_token, settings):
    fields = "&".join(f"f{i}=1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    response = production.post(
        API_CREATE,
        fields,
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Bearer {lead_token}"},
    )
    assert_api(response, 400, "more than 1,000 fields")


def test_too_many_form_fields_is_a_400_page(production, settings):
    fields = "&".join(f"f{i}=1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    # The login page's own CSRF check reads the form first; the test client skips CSRF.
    response = production.post(LOGIN, fields, content_type="application/x-www-form-urlencoded")
    assert_page(response, 400, "more than 1,000 fields")


def test_a_form_body_over_djangos_limit_is_a_413_page(production, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = production.post(
        LOGIN, "username=" + "a" * 2000, content_type="application/x-www-form-urlencoded"
    )
    assert_page(response, 413, "larger than the limit of 1,000 bytes")


def test_a_json_body_over_the_limit_is_a_413_on_the_api(production, lead_token, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"name": "x" * 2000})
    headers = {"Authorization": f"Bearer {lead_token}"}
    for url in (API_CREATE, "/api/v1/unjudged/"):  # a viewset and a plain APIView
        response = production.post(url, body, content_type="application/json", headers=headers)
        assert_api(response, 413, "larger than the limit of 1,000 bytes")


def test_a_json_body_nested_5000_deep_is_a_400_not_a_recursion_error(production, lead_token):
    headers = {"Authorization": f"Bearer {lead_token}"}
    for url in (API_CREATE, "/api/v1/unjudged/"):
        response = production.post(
            url, "[" * 5000 + "]" * 5000, content_type="application/json", headers=headers
        )
        assert_api(response, 400, TOO_DEEP.format(limit=MAX_DEPTH))


def test_a_json_body_nested_5000_deep_to_a_judging_endpoint_is_refused_as_json(
    production, django_user_model
):
    """The pages take forms, not JSON (judge.js posts form fields); a JSON body there is a
    missing field, never a parse of it."""
    production.force_login(django_user_model.objects.create_user("ann"))
    response = production.post(
        "/campaigns/1/judge/1/grade/", "[" * 5000, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "Send the grade as a whole number."


def test_a_csrf_failure_is_our_403_page(settings, django_user_model):
    from django.test import Client

    settings.DEBUG = False
    client = Client(enforce_csrf_checks=True)
    response = client.post(LOGIN, {"username": "a", "password": "b"})
    assert_page(response, 403, "security token is missing or out of date")


def test_a_disallowed_redirect_is_a_400(production):
    assert_page(production.get("/redirect/"), 400, errors.BAD_REDIRECT)
    assert_api(production.get("/api/v1/redirect/"), 400, errors.BAD_REDIRECT)


def test_an_unknown_api_path_is_a_json_404(production):
    assert_api(production.get("/api/v1/no-such-thing/"), 404, "Not found.")


def test_error_pages_render_for_a_request_with_no_user_and_no_session(rf):
    """What the handlers get when the error came before the session was loaded."""
    request = rf.get("/somewhere/")
    assert not hasattr(request, "user") and not hasattr(request, "session")
    assert errors.bad_request(request, DisallowedRedirect("x")).status_code == 400
    assert errors.permission_denied(request).status_code == 403
    assert errors.page_not_found(request).status_code == 404
    assert errors.server_error(request).status_code == 500
    assert errors.csrf_failure(request, reason="CSRF cookie not set.").status_code == 403
