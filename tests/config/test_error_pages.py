"""Users never see a stack trace: with DEBUG off, errors are our own plain pages."""

import pytest
from django.core.exceptions import PermissionDenied
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
