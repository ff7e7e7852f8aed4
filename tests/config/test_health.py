"""/healthz and /readyz: what a load balancer sees (config/health.py)."""

import json
import socket

import pytest

from tests.config.test_settings import run_django

pytestmark = pytest.mark.django_db

CLOSED_PORT_REDIS = "redis://127.0.0.1:1/0"  # nothing listens on port 1


def redis_is_up() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        return False
    return True


def redis_cache(url: str) -> dict:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "tests-health",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }


@pytest.fixture
def production(settings):
    """As gunicorn runs it: DEBUG off, https redirect on, only the public host allowed."""
    settings.DEBUG = False
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["judging.example"]


def test_healthz_answers_a_probe_by_address_over_http(client, production):
    # A balancer probes the node by its own address over plain http: no 400 for the host,
    # no redirect to https.
    response = client.get("/healthz", HTTP_HOST="10.0.0.7:8000")
    assert response.status_code == 200
    assert response.content == b"ok\n"
    assert response["Cache-Control"] == "no-store"


def test_readyz_reports_each_check_when_all_pass(client, production):
    response = client.get("/readyz/", HTTP_HOST="10.0.0.7:8000")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ready"
    assert set(body["checks"]) == {"database", "storage", "cache"}
    assert all(check["ok"] for check in body["checks"].values())


def test_probes_take_only_get_and_head(client):
    assert client.head("/healthz").status_code == 200
    response = client.post("/readyz")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"


def test_readyz_is_503_and_names_the_cache_when_redis_is_unreachable(client, settings):
    settings.CACHES = redis_cache(CLOSED_PORT_REDIS)
    response = client.get("/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["cache"]["ok"] is False
    assert checks["cache"]["error"] == "ConnectionError"
    assert checks["database"]["ok"] and checks["storage"]["ok"]


@pytest.mark.skipif(not redis_is_up(), reason="no Redis on 127.0.0.1:6379")
def test_readyz_passes_with_a_shared_redis_cache(client, settings):
    settings.CACHES = redis_cache("redis://127.0.0.1:6379/15")
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json()["checks"]["cache"]["ok"] is True


def test_readyz_names_the_database_when_it_is_unreachable():
    # A real process with a database nobody listens for: the check fails, the others pass.
    result = run_django(
        "import json; from config.health import readiness; ready, checks = readiness();"
        "print(json.dumps({'ready': ready, 'checks': checks}))",
        DATABASE_URL="postgres://postgres@127.0.0.1:1/nothing",
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["ready"] is False
    assert outcome["checks"]["database"] == {
        "ok": False,
        "error": "OperationalError",
        "ms": outcome["checks"]["database"]["ms"],
    }
    assert outcome["checks"]["cache"]["ok"] is True


def test_redis_url_selects_the_shared_cache():
    result = run_django(
        "from django.conf import settings; c = settings.CACHES['default'];"
        "print(c['BACKEND'], c['LOCATION'])",
        REDIS_URL="redis://cache.internal:6379/2",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.core.cache.backends.redis.RedisCache",
        "redis://cache.internal:6379/2",
    ]


def test_without_redis_url_each_process_keeps_its_own_cache():
    result = run_django(
        "from django.conf import settings; print(settings.CACHES['default']['BACKEND'])",
        REDIS_URL="",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "django.core.cache.backends.locmem.LocMemCache"
