"""Sessions load through accounts/services/sessions.py and the password backend's get_user,
each one statement written once (issue 34): the same answers as Django's own lookups."""

import datetime as dt

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.models import Session
from django.utils import timezone

from accounts.services.sessions import SessionStore

pytestmark = pytest.mark.django_db

PAGE = "/accounts/tokens/"


def test_the_settings_use_the_compiled_session_lookup():
    assert settings.SESSION_ENGINE == "accounts.services.sessions"


def test_a_logged_in_session_loads_its_user_in_two_statements(
    client, django_user_model, django_assert_num_queries
):
    user = django_user_model.objects.create_user("ann")
    client.force_login(user)
    store = SessionStore(client.cookies[settings.SESSION_COOKIE_NAME].value)
    assert int(store[SESSION_KEY]) == user.pk
    # 1 the session by its key, 2 its user.
    with django_assert_num_queries(2):
        from django.contrib.auth import get_user
        from django.test import RequestFactory

        request = RequestFactory().get(PAGE)
        request.session = SessionStore(client.cookies[settings.SESSION_COOKIE_NAME].value)
        assert get_user(request) == user


def test_an_expired_session_is_no_login(client, django_user_model):
    user = django_user_model.objects.create_user("ann")
    client.force_login(user)
    assert client.get(PAGE).status_code == 200
    Session.objects.update(expire_date=timezone.now() - dt.timedelta(seconds=1))
    assert client.get(PAGE).status_code == 302


def test_an_unknown_or_malformed_key_is_no_login(client):
    for key in ("x" * 32, "short", ""):
        client.cookies[settings.SESSION_COOKIE_NAME] = key
        assert client.get(PAGE).status_code == 302
        assert SessionStore(key).load() == {}


def test_an_inactive_users_session_is_no_login(client, django_user_model):
    user = django_user_model.objects.create_user("ann")
    client.force_login(user)
    django_user_model.objects.filter(pk=user.pk).update(is_active=False)
    assert client.get(PAGE).status_code == 302
