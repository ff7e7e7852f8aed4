import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DATABASE_URL"}
    }
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )


def run_django(code: str = "", **env: str) -> subprocess.CompletedProcess:
    """run_python with Django set up on the project's settings first, then ``code``."""
    return run_python(
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings';"
        f"django.setup(); {code}",
        **env,
    )


@pytest.mark.parametrize(
    "raw,expected",
    [("1", True), ("true", True), ("On", True), ("0", False), ("no", False), ("", False)],
)
def test_env_bool_reads_the_usual_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv("FLAG", raw)
    assert env_bool("FLAG", not expected) is expected


def test_env_bool_refuses_a_typo_instead_of_guessing(monkeypatch):
    monkeypatch.setenv("DEBUG", "flase")
    with pytest.raises(ImproperlyConfigured, match="DEBUG='flase' is not a boolean"):
        env_bool("DEBUG", False)


def test_env_int_refuses_words(monkeypatch):
    monkeypatch.setenv("MAX_UPLOAD_MB", "lots")
    with pytest.raises(ImproperlyConfigured, match="MAX_UPLOAD_MB='lots' is not an integer"):
        env_int("MAX_UPLOAD_MB", 1)


def test_env_list_splits_on_commas_and_drops_blanks(monkeypatch):
    monkeypatch.setenv("ALLOWED_HOSTS", "a.example, b.example,,")
    assert env_list("ALLOWED_HOSTS", []) == ["a.example", "b.example"]


def test_empty_database_url_means_the_embedded_sqlite_default():
    result = run_django(
        "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'])",
        DATABASE_URL="",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "django.db.backends.sqlite3"


def test_production_start_refuses_the_development_secret():
    result = run_python("import config.wsgi", DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY is the development secret while DEBUG is off" in result.stderr


def test_production_start_accepts_a_real_secret():
    result = run_python("import config.wsgi", DEBUG="0", SECRET_KEY=secrets.token_urlsafe(50))
    assert result.returncode == 0, result.stderr


# A development server process's start (import config.wsgi with DEBUG on), then which of
# these modules it has imported: one interpreter for the two tests below (each start imports
# Django and the whole project, ~2.5 s of CPU).
VIEWS = ["config.urls", "annotation.views.judging", "evaluation.api.runs", "jobs.api"]


@pytest.fixture(scope="module")
def development_start() -> subprocess.CompletedProcess:
    code = f"import sys, config.wsgi; print([m in sys.modules for m in {VIEWS}])"
    return run_python(code, DEBUG="1")


def test_development_start_accepts_the_development_secret(development_start):
    assert development_start.returncode == 0, development_start.stderr


def test_a_server_process_imports_every_view_before_its_first_request(development_start):
    # /readyz answers before URL resolution: a node that imported its views on the first
    # request would say it is ready and then keep its first requests waiting for seconds.
    views = VIEWS
    result = development_start
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str([True] * len(views)), (
        f"config.wsgi must load the URLconf (config.startup.load_urls) so that these are "
        f"imported when gunicorn's worker boots: {views}"
    )


def test_check_deploy_is_clean_with_production_settings():
    unset = {"DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}  # the last is for Playwright only
    clean = {k: v for k, v in os.environ.items() if k not in unset}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={
            **clean,
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "relevance.example",
        },
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
