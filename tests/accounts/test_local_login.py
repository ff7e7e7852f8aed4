"""LOCAL_LOGIN=0: single sign-on only on the login page; superusers keep the admin site's
login (rate limited like any) as the way in when the provider is down."""

import pytest
from django.contrib.auth import SESSION_KEY

from accounts.oidc.config import read_provider
from tests.config.test_settings import run_django, run_python

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-demo-password"


@pytest.fixture
def sso_only(settings):
    settings.OIDC_PROVIDER = read_provider(
        issuer="https://sso.example.com/realms/acme",
        client_id="qrelsmith",
        client_secret="s3cret",
        scopes="openid email profile",
        groups_claim="groups",
        group_roles=["relevance-leads:lead"],
        name="Acme SSO",
    )
    settings.LOCAL_LOGIN = False


def test_the_login_page_offers_single_sign_on_only(client, sso_only):
    page = client.get("/accounts/login/?next=/evaluation/runs/").content.decode()
    assert 'href="/accounts/oidc/login/?next=%2Fevaluation%2Fruns%2F"' in page
    assert "Sign in with Acme SSO" in page
    assert 'type="password"' not in page


def test_a_password_sent_anyway_is_refused(client, sso_only, django_user_model):
    django_user_model.objects.create_user("judge1", password=PASSWORD)
    answer = client.post("/accounts/login/", {"username": "judge1", "password": PASSWORD})
    assert answer.status_code == 403
    assert "Password login is turned off here: sign in with Acme SSO." in answer.content.decode()
    assert SESSION_KEY not in client.session


def test_a_superuser_gets_in_through_the_admin_login(client, sso_only, django_user_model):
    django_user_model.objects.create_superuser("root", password=PASSWORD)
    answer = client.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert answer.status_code == 302 and SESSION_KEY in client.session


def test_staff_who_are_not_superusers_do_not(client, sso_only, django_user_model):
    django_user_model.objects.create_user("staff", password=PASSWORD, is_staff=True)
    answer = client.post("/admin/login/", {"username": "staff", "password": PASSWORD})
    assert answer.status_code == 200 and SESSION_KEY not in client.session


def test_with_local_login_on_both_ways_are_offered(client, sso_only, settings, django_user_model):
    settings.LOCAL_LOGIN = True
    django_user_model.objects.create_user("judge1", password=PASSWORD)
    page = client.get("/accounts/login/").content.decode()
    assert "Sign in with Acme SSO" in page and 'type="password"' in page
    answer = client.post("/accounts/login/", {"username": "judge1", "password": PASSWORD})
    assert answer.status_code == 302 and SESSION_KEY in client.session


def test_local_login_off_needs_single_sign_on():
    result = run_python("import config.wsgi", DEBUG="1", LOCAL_LOGIN="0")
    assert result.returncode != 0
    assert "LOCAL_LOGIN=0 turns password logins off, so single sign-on must be on" in result.stderr


def test_a_broken_provider_setting_stops_the_start():
    result = run_python(
        "import config.wsgi",
        DEBUG="1",
        OIDC_ISSUER="http://sso.example.com",
        OIDC_CLIENT_ID="x",
        OIDC_CLIENT_SECRET="y",
    )
    assert result.returncode != 0 and "must be an https:// URL" in result.stderr


def test_an_unknown_role_in_the_mapping_fails_the_checks():
    env = {
        "DEBUG": "1",
        "OIDC_ISSUER": "https://sso.example.com",
        "OIDC_CLIENT_ID": "x",
        "OIDC_CLIENT_SECRET": "y",
        "OIDC_GROUP_ROLES": "leads:leader",
    }
    result = run_django(
        "from django.core.management import call_command; call_command('check')",
        **env,
    )
    assert result.returncode != 0 and "accounts.E002" in result.stderr
    assert "'leader'; the roles are engineer, judge, lead" in result.stderr
