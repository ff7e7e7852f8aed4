"""accounts/services/idempotency.py: the Idempotency-Key header's rules (tests/api/test_idempotency.py
retries every POST route with it)."""

import threading
import time
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import include, path
from django.utils import timezone

from accounts.models import IdempotencyKey
from accounts.services.idempotency import KEEP, MESSAGES, REPLAYED, expire_keys
from accounts.services.tokens import create_token
from annotation.scales import TREC_DL_SCALE
from config.urls import handler400, handler403, handler404, handler500  # noqa: F401 (used by Django)
from evaluation.api.runs import SystemViewSet
from evaluation.models import System
from tests.pages.permission_bodies import _scale_fields

SYSTEMS = "/api/v1/systems/"


def create_then_crash(request):
    """A view that stores something and then fails: nothing of it may stay."""
    System.objects.create(name="half-done")
    raise RuntimeError("crashed after a write")


urlpatterns = [path("crash/", create_then_crash), path("", include("config.urls"))]


@pytest.fixture
def engineer(make_user):
    return make_user("eng", "engineer")


@pytest.fixture
def token(engineer):
    return create_token(user=engineer, name="retries")[1]


def post(client, token, key, body, url=SYSTEMS):
    return client.post(
        url,
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key},
    )


@pytest.mark.django_db
def test_the_same_key_with_another_body_is_a_422_and_creates_nothing(client, token):
    assert post(client, token, "k1", {"name": "bm25"}).status_code == 201
    response = post(client, token, "k1", {"name": "dense"})
    assert response.status_code == 422
    assert response.json()["detail"] == MESSAGES["reused"].format(method="POST", path=SYSTEMS)
    assert list(System.objects.values_list("name", flat=True)) == ["bm25"]


@pytest.mark.django_db
def test_the_same_key_on_another_route_is_a_422(client, token, engineer):
    assert post(client, token, "k1", {"name": "bm25"}).status_code == 201
    response = post(client, token, "k1", {"name": "bm25"}, url="/api/v1/campaigns/")
    assert response.status_code == 422
    assert "first for POST /api/v1/systems/" in response.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "a b", "é", "x" * 256])
def test_a_malformed_key_is_a_400_and_nothing_runs(client, token, key):
    response = post(client, token, key, {"name": "bm25"})
    assert response.status_code == 400
    assert response.json()["detail"] == MESSAGES["bad_key"]
    assert not System.objects.exists()


@pytest.mark.django_db
def test_keys_belong_to_one_user(client, token, make_user):
    other = create_token(user=make_user("eve", "engineer"), name="retries")[1]
    assert post(client, token, "shared", {"name": "bm25"}).status_code == 201
    assert post(client, other, "shared", {"name": "dense"}).status_code == 201
    assert System.objects.count() == 2


@pytest.mark.django_db
def test_a_refusal_is_not_kept_so_a_corrected_retry_may_reuse_the_key(client, token):
    assert post(client, token, "k1", {"name": ""}).status_code == 400
    assert not IdempotencyKey.objects.exists()
    assert post(client, token, "k1", {"name": "bm25"}).status_code == 201


@pytest.mark.django_db
def test_without_a_key_every_post_runs(client, token):
    headers = {"Authorization": f"Bearer {token}"}
    client.post(SYSTEMS, {"name": "bm25"}, content_type="application/json", headers=headers)
    client.post(SYSTEMS, {"name": "dense"}, content_type="application/json", headers=headers)
    assert System.objects.count() == 2 and not IdempotencyKey.objects.exists()


@pytest.mark.django_db
def test_a_key_older_than_24_hours_is_forgotten_and_expired_by_the_command(client, token):
    assert post(client, token, "k1", {"name": "bm25"}).status_code == 201
    IdempotencyKey.objects.update(created_at=timezone.now() - KEEP - timedelta(minutes=1))
    # The same request a day later is a new request (it is refused: the name is taken).
    assert post(client, token, "k1", {"name": "bm25"}).status_code == 400
    assert System.objects.count() == 1
    assert post(client, token, "k2", {"name": "dense"}).status_code == 201
    IdempotencyKey.objects.filter(key="k2").update(created_at=timezone.now() - KEEP * 2)
    out = StringIO()
    call_command("expire_idempotency_keys", stdout=out)
    assert out.getvalue().strip() == "Deleted 1 idempotency key(s) older than 24 hours."
    assert expire_keys() == 0


@pytest.mark.django_db
def test_a_server_error_keeps_neither_the_key_nor_what_the_view_wrote(settings, engineer):
    settings.ROOT_URLCONF = __name__
    settings.DEBUG = False
    client = Client(raise_request_exception=False)
    client.force_login(engineer)
    response = client.post("/crash/", {}, headers={"Idempotency-Key": "k1"})
    assert response.status_code == 500
    assert not System.objects.exists() and not IdempotencyKey.objects.exists()


@pytest.mark.django_db
def test_a_page_replay_is_the_first_redirect(make_user):
    from annotation.models import Campaign

    client = Client()
    client.force_login(make_user("lea", "lead"))
    form = {
        "name": "Robust",
        "scale": "0-3",
        "overlap": 1,
        "relevance_threshold": 1,
        "adjudication_rule": "majority",
        "gold_min_accuracy": 0.7,
        **_scale_fields(TREC_DL_SCALE),
    }
    first = client.post("/campaigns/new/", form, headers={"Idempotency-Key": "new-campaign"})
    second = client.post("/campaigns/new/", form, headers={"Idempotency-Key": "new-campaign"})
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"] and second[REPLAYED] == "true"
    assert Campaign.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_requests_with_one_key_at_once_create_one_system(token, monkeypatch):
    """The second request arrives while the first is still inside its view: it waits for the
    first's transaction (the unique key), then answers with the first's answer."""
    create = SystemViewSet.perform_create
    inside = threading.Event()

    def slow_create(self, serializer):
        inside.set()
        time.sleep(0.5)  # the other request arrives now
        return create(self, serializer)

    monkeypatch.setattr(SystemViewSet, "perform_create", slow_create)
    answers = [None, None]

    def send(index):
        try:
            answers[index] = post(Client(), token, "race", {"name": "bm25"})
        finally:
            connection.close()

    first = threading.Thread(target=send, args=(0,))
    first.start()
    assert inside.wait(10), "the first request never reached the view"
    second = threading.Thread(target=send, args=(1,))
    second.start()
    first.join(30)
    second.join(30)
    assert [answer.status_code for answer in answers] == [201, 201]
    assert answers[0].content == answers[1].content
    assert answers[1][REPLAYED] == "true"
    assert System.objects.count() == 1
