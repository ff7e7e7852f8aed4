"""Users never see a stack trace: with DEBUG off, errors are our own plain pages (a 405 too);
the server log keeps a crash's traceback and prints an expected refusal on one line."""

import logging

import pytest
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed
from django.urls import include, path

pytestmark = pytest.mark.django_db


def crash(request):
    raise RuntimeError("secret detail from deep inside")


def forbid(request):
    raise PermissionDenied("Only engineers upload runs.")


# The app's own URLs too: the error pages link to them.
urlpatterns = [path("crash/", crash), path("forbid/", forbid), path("", include("config.urls"))]


@pytest.fixture
def production(settings):
    settings.DEBUG = False
    settings.ROOT_URLCONF = __name__


def test_a_crash_shows_our_page_and_no_traceback(client, production):
    client.raise_request_exception = False
    response = client.get("/crash/")
    assert response.status_code == 500
    body = response.content.decode()
    assert "Something went wrong" in body
    for leak in ("Traceback", "RuntimeError", "secret detail", 'File "', ".py"):
        assert leak not in body, f"the 500 page shows {leak!r}"


def test_a_refusal_says_why_without_internals(client, production, django_user_model):
    client.force_login(django_user_model.objects.create_user("someone"))
    response = client.get("/forbid/")
    assert response.status_code == 403
    body = response.content.decode()
    assert "Not allowed" in body and "Only engineers upload runs." in body
    assert "Traceback" not in body


def test_an_unknown_page_is_our_404(client, settings):
    settings.DEBUG = False
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    body = response.content.decode()
    assert "Not found" in body and "Traceback" not in body and "URLconf" not in body


def not_allowed_page(request):
    return HttpResponseNotAllowed(["POST"])


urlpatterns.insert(0, path("post-only/", not_allowed_page))


def test_a_post_only_page_opened_by_its_address_is_our_405_page(client, production):
    response = client.get("/post-only/")

    assert response.status_code == 405 and response["Allow"] == "POST"
    body = response.content.decode()
    assert "<h1>Not available this way</h1>" in body
    assert "does not take a GET request" in body and "answers POST" in body
    assert 'href="/"' in body  # the site's own layout


def test_every_pages_405_is_ours_and_the_apis_stays_json(client, django_user_model):
    # A real page of the app (a POST-only form target) and a real API route.
    client.force_login(django_user_model.objects.create_user("someone"))
    page = client.get("/campaigns/1/judgments/import/")
    assert page.status_code == 405 and "Not available this way" in page.content.decode()
    api = client.delete("/api/v1/jobs/")
    assert api.status_code == 405 and api["Content-Type"] == "application/json"


# --- what the server log keeps ------------------------------------------------------------


def console_lines(record: logging.LogRecord) -> list[str]:
    """The record as the server's console handler (settings.LOGGING) prints it."""
    console = next(h for h in logging.getLogger().handlers if h.get_name() == "console")
    passed = console.filter(record)
    assert passed, "the console handler dropped the record"
    shown = passed if isinstance(passed, logging.LogRecord) else record
    return console.format(shown).splitlines()


def test_an_expected_refusal_is_one_log_line_without_its_traceback(
    client, production, django_user_model, caplog
):
    client.force_login(django_user_model.objects.create_user("someone"))
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert client.get("/forbid/").status_code == 403
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    assert record.exc_info, "Django logs a 403 with its exception: the filter has work to do"

    lines = console_lines(record)

    assert len(lines) == 1 and "Traceback" not in lines[0]
    assert lines[0].startswith("WARNING django.request [") and "Forbidden" in lines[0]
    assert record.exc_info  # the record itself is left alone, for other handlers


@pytest.mark.parametrize(("url", "status"), [("/no-such-page/", 404), ("/post-only/", 405)])
def test_a_missing_page_or_a_wrong_method_is_one_log_line(client, production, caplog, url, status):
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert client.get(url).status_code == status
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    assert len(console_lines(record)) == 1


def test_a_crash_keeps_its_traceback_in_the_log(client, production, caplog):
    client.raise_request_exception = False
    with caplog.at_level(logging.ERROR, logger="django.request"):
        assert client.get("/crash/").status_code == 500
    (record,) = [r for r in caplog.records if r.name == "django.request"]

    lines = console_lines(record)

    assert lines[0].startswith("ERROR django.request [") and "Internal Server Error" in lines[0]
    assert "Traceback (most recent call last):" in lines and "RuntimeError" in lines[-1]
