"""Calling the API with a personal token: ``Bearer`` or ``Token``; revoked, unknown and
malformed keys are refused the way DRF refuses (403: session authentication comes first, so
there is no WWW-Authenticate challenge); last use is written at most once a minute, and
never fails or holds up a read: with another writer holding the lock it is skipped."""

import logging
import threading
from datetime import timedelta

import pytest
import yaml
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.authentication import MESSAGES
from accounts.models import PersonalToken
from accounts.services.tokens import create_token, note_token_use, revoke_token

pytestmark = pytest.mark.django_db

RUNS = "/api/v1/runs/"  # engineers only
SYSTEMS = "/api/v1/systems/"


def client_with(header: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client


@pytest.fixture
def engineer(make_user):
    return make_user("eng", "engineer")


@pytest.fixture
def key(engineer):
    _token, key = create_token(user=engineer, name="ci")
    return key


@pytest.mark.parametrize("keyword", ["Bearer", "Token", "bearer"])
def test_a_valid_key_calls_the_api_as_its_user(key, keyword):
    assert client_with(f"{keyword} {key}").get(RUNS).status_code == 200


def test_the_token_carries_its_users_roles(make_user):
    _token, judge_key = create_token(user=make_user("ann", "judge"), name="ci")

    assert client_with(f"Bearer {judge_key}").get(RUNS).status_code == 403
    assert client_with(f"Bearer {judge_key}").get("/api/v1/assignments/").status_code == 200


def test_a_token_writes_without_a_csrf_token(key):
    client = client_with(f"Bearer {key}")
    client.enforce_csrf_checks = True

    response = client.post(SYSTEMS, {"name": "dense"}, format="json")

    assert response.status_code == 201, response.content


def test_a_revoked_token_is_refused(engineer):
    token, key = create_token(user=engineer, name="ci")
    revoke_token(token=token)

    response = client_with(f"Bearer {key}").get(RUNS)

    assert response.status_code == 403
    assert response.json() == {"detail": MESSAGES["invalid"]}


@pytest.mark.parametrize(
    "header,message",
    [
        ("Bearer rs_not-a-key", MESSAGES["invalid"]),
        ("Bearer", MESSAGES["no_key"]),
        ("Bearer two parts", MESSAGES["spaces"]),
        ("Bearer r\u00e9sum\u00e9", MESSAGES["encoding"]),
    ],
)
def test_unknown_and_malformed_keys_are_refused(key, header, message):
    response = client_with(header).get(RUNS)

    assert response.status_code == 403
    assert response.json() == {"detail": message}


def test_another_scheme_is_not_ours_and_stays_anonymous(key):
    response = client_with(f"Basic {key}").get(RUNS)

    assert response.status_code == 403
    assert response.json() == {"detail": "Authentication credentials were not provided."}


def test_an_inactive_users_token_is_refused(engineer, key):
    engineer.is_active = False
    engineer.save(update_fields=["is_active"])

    response = client_with(f"Bearer {key}").get(RUNS)

    assert response.status_code == 403
    assert response.json() == {"detail": MESSAGES["inactive"]}


def test_last_use_is_recorded_at_most_once_a_minute(engineer):
    token, key = create_token(user=engineer, name="ci")
    client = client_with(f"Bearer {key}")
    assert token.last_used_at is None

    client.get(RUNS)
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None and timezone.now() - first < timedelta(seconds=10)

    with CaptureQueriesContext(connection) as queries:
        client.get(RUNS)
    updates = [q["sql"] for q in queries if q["sql"].startswith("UPDATE")]
    assert updates == [], "a second use within a minute wrote last_used_at again"
    token.refresh_from_db()
    assert token.last_used_at == first

    token.last_used_at = first - timedelta(minutes=2)
    token.save(update_fields=["last_used_at"])
    client.get(RUNS)
    token.refresh_from_db()
    assert token.last_used_at > first


def test_the_schema_declares_the_token_as_http_bearer(tmp_path):
    target = tmp_path / "schema.yaml"

    call_command("spectacular", "--file", str(target))

    schema = yaml.safe_load(target.read_text())
    scheme = schema["components"]["securitySchemes"]["personalToken"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert {"personalToken": []} in schema["paths"]["/api/v1/runs/"]["get"]["security"]
    assert "tokenAuth" not in schema["components"]["securitySchemes"]


@pytest.fixture
def locked_token_row():
    """``hold(token)``: another connection holds a write lock that covers ``token``'s row (on
    SQLite the database's one write lock, on PostgreSQL the row's), until the test ends."""
    release, threads = threading.Event(), []

    def hold(token):
        held = threading.Event()

        def holder():
            try:
                with transaction.atomic():
                    PersonalToken.objects.select_for_update().get(pk=token.pk)
                    held.set()
                    release.wait(60)
            finally:
                connection.close()

        thread = threading.Thread(target=holder)
        thread.start()
        threads.append(thread)
        assert held.wait(30), "the other connection did not get the lock"

    yield hold
    release.set()
    for thread in threads:
        thread.join(60)


@pytest.mark.django_db(transaction=True)
def test_a_read_is_answered_while_another_writer_holds_the_lock(engineer, locked_token_row, caplog):
    token, key = create_token(user=engineer, name="ci")
    locked_token_row(token)

    with caplog.at_level(logging.WARNING, logger="accounts.services.tokens"):
        response = client_with(f"Bearer {key}").get(RUNS)

    assert response.status_code == 200, response.content
    token.refresh_from_db()
    assert token.last_used_at is None, "the use was written: the lock was not held"
    [warning] = [r.getMessage() for r in caplog.records if r.name == "accounts.services.tokens"]
    assert warning.startswith(f"Use of API token {token.pk} ({token.prefix}…) not recorded: ")


@pytest.mark.django_db(transaction=True)
def test_a_skipped_use_leaves_the_connections_lock_wait_as_it_was(engineer, locked_token_row):
    token, _key = create_token(user=engineer, name="ci")
    before = busy_timeout()
    locked_token_row(token)

    assert note_token_use(token) is False

    assert busy_timeout() == before


@pytest.mark.django_db
def test_a_use_is_recorded_inside_a_transaction_and_leaves_it_usable(engineer):
    token, _key = create_token(user=engineer, name="ci")

    with transaction.atomic():
        assert note_token_use(token) is True
        assert PersonalToken.objects.filter(pk=token.pk, last_used_at__isnull=False).exists()


def busy_timeout() -> int | None:
    if connection.vendor != "sqlite":
        return None
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        return cursor.fetchone()[0]


def _fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def test_a_key_is_found_in_one_statement_as_the_orm_finds_it(engineer, django_assert_num_queries):
    """The key lookups are compiled once (accounts.services.tokens.ActiveKeys, issue 35): the
    token, its user and (for a service token) its team, field for field what the ORM's
    select_related gives, in one statement; a revoked or unknown key finds nothing."""
    from accounts.models import ServiceScope, ServiceToken
    from accounts.services import service_tokens
    from accounts.services.teams import default_team
    from accounts.services.tokens import find_active_token, hash_key

    token, key = create_token(user=engineer, name="ci")
    service, service_key = service_tokens.create_service_token(
        team=default_team(),
        name="gate",
        scope=ServiceScope.READ,
        created_by=engineer.__class__.objects.create_superuser("root", password=None),
    )
    kinds = [
        (find_active_token, key, PersonalToken, ("user",)),
        (service_tokens.find_active_service_token, service_key, ServiceToken, ("user", "team")),
    ]
    for find, raw, model, related in kinds:
        with django_assert_num_queries(1):
            found = find(raw)
            related_fields = {name: _fields(getattr(found, name)) for name in related}
        expected = model.objects.select_related(*related).get(key_hash=hash_key(raw))
        assert _fields(found) == _fields(expected)
        assert related_fields == {name: _fields(getattr(expected, name)) for name in related}
        assert find(raw + "x") is None
    revoke_token(token=token)
    ServiceToken.objects.filter(pk=service.pk).update(revoked_at=timezone.now())
    assert find_active_token(key) is None
    assert service_tokens.find_active_service_token(service_key) is None
