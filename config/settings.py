"""The one settings module. Every setting comes from an environment variable with a working
default, so a fresh clone runs on SQLite with nothing configured. The README's configuration
table lists every variable read here."""

import os
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from accounts.oidc import config as oidc_config
from common import outbound
from config.env import env_bool, env_int, env_list, env_networks, env_str
from evaluation.schedules import recipients

BASE_DIR = Path(__file__).resolve().parent.parent

DEVELOPMENT_SECRET_KEY = "development-only-secret-key-do-not-use-in-production"
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", DEVELOPMENT_SECRET_KEY)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "accounts.apps.AdminConfig",  # Django's admin, its login rate limited like ours
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # Before django_tasks_db: its `manage.py db_worker` is ours, which outlives a locked
    # database (jobs/management/commands/db_worker.py).
    "jobs",
    "django_tasks_db",
    "accounts",
    "annotation",
    "evaluation",
]

MIDDLEWARE = [
    # Times every request and answers /metrics (config/metrics.py); ids every request and its
    # log lines (config/request_ids.py).
    "config.metrics.MetricsMiddleware",
    "config.request_ids.RequestIdMiddleware",
    # /healthz and /readyz answer before the host check and the https redirect (config/health.py)
    "config.health.HealthMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "common.uploads.UploadLimitMiddleware",  # MAX_UPLOAD_MB, before anything reads a body
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Our 405 page where a page refused the method (Django's is blank): config/errors.py.
    "config.errors.MethodNotAllowedMiddleware",
    "config.storage.StorageUnavailableMiddleware",  # 503 when the file store fails a write
    # 413 for more than a request may write (SYNC_WRITE_ROWS), 503 when the database stayed
    # locked by another write (config/busy.py).
    "config.busy.BusyMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Idempotency-Key on POSTs: needs the user, wraps the view in the key's transaction.
    "accounts.services.idempotency.IdempotencyMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.roles",
            ],
        },
    },
]

DATA_DIR = Path(env_str("DATA_DIR", str(BASE_DIR / "var")))
# DATABASE_URL may be set but empty (compose files, CI matrices): treat that as unset.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", "") or f"sqlite:///{DATA_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        # A kept connection is checked before each request reuses it, so a database restart
        # costs a reconnect instead of one 500 per kept connection (tests/faults).
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default must work on a fresh clone: SQLite creates the file, not its folder.
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # WAL lets readers (pages) run while a writer (an import) commits; the busy timeout makes
    # concurrent writers wait instead of failing with "database is locked". IMMEDIATE takes
    # the write lock when a transaction starts, so a writer waits for it there (within the
    # timeout) instead of failing at once when a read transaction turns into a write (4
    # threads of read-then-write transactions: DEFERRED failed 104 of 600, IMMEDIATE none).
    # synchronous=NORMAL is safe with WAL and made those commits 20 times faster than FULL.
    # A request writes at most SYNC_WRITE_ROWS rows (jobs/services/limits.py), seconds, and the jobs
    # that add pairs and documents commit that many at a time, so the timeout is rarely
    # reached; when it is, the worker waits it out
    # (jobs/management/commands/db_worker.py), a job's work fails as retryable
    # (jobs/services.py) and a request is a 503 to try again (config/busy.py).
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": env_int("SQLITE_TIMEOUT", 20),
    }
    # Tests use a file too: in-memory shared-cache SQLite fails concurrent writers at once
    # ("table is locked") instead of waiting, so the concurrency tests could not run on it.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"relevance-test-{os.getpid()}.sqlite3")
    }

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # The grade path's statements are prepared: PostgreSQL plans each once per connection
    # (common/compiled.py; planning them cost it more than running them). Django's
    # own cursors bind on the client and never prepare. Turn it off behind a pooler in
    # transaction mode that cannot keep prepared statements (PgBouncer before 1.21).
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = (
        0 if env_bool("DATABASE_PREPARED_STATEMENTS", True) else None
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# One cache shared by every web node and worker when REDIS_URL is set (the agreement report's
# numbers, keyed by the state of the judgments, so never stale); otherwise each process keeps
# its own, which is all the embedded set-up needs. Short socket timeouts: a Redis that is down
# makes /readyz say so within a second instead of hanging the probe.
REDIS_URL = env_str("REDIS_URL", "")
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", ""),
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Our 403 page for a failed CSRF check, rendered before the user is loaded (config/errors.py).
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "accounts:login"
# Login rate limiting (accounts/services/login_limits.py), over failures within the window: an
# address is refused for a username after LOGIN_FAILURE_LIMIT of its failures for it, and
# for every username after LOGIN_ADDRESS_FAILURE_LIMIT; a username with LOGIN_FAILURE_LIMIT
# failures from anywhere, or a site with LOGIN_GLOBAL_FAILURE_LIMIT, refuses the addresses
# that failed, while an address that has not still gets the password checked.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 20)
LOGIN_GLOBAL_FAILURE_LIMIT = env_int("LOGIN_GLOBAL_FAILURE_LIMIT", 100)
LOGIN_FAILURE_WINDOW_MINUTES = env_int("LOGIN_FAILURE_WINDOW_MINUTES", 15)
# Single sign-on with OpenID Connect (accounts/oidc/, README "Single sign-on (OpenID
# Connect)"): on when OIDC_ISSUER is set. The client's secret comes from the environment
# only; the issuer URL too, never from a request.
try:
    OIDC_PROVIDER = oidc_config.read_provider(
        issuer=env_str("OIDC_ISSUER", ""),
        client_id=env_str("OIDC_CLIENT_ID", ""),
        client_secret=env_str("OIDC_CLIENT_SECRET", ""),
        scopes=env_str("OIDC_SCOPES", oidc_config.DEFAULT_SCOPES),
        groups_claim=env_str("OIDC_GROUPS_CLAIM", oidc_config.DEFAULT_GROUPS_CLAIM),
        group_roles=env_list("OIDC_GROUP_ROLES", []),
        name=env_str("OIDC_PROVIDER_NAME", oidc_config.DEFAULT_NAME),
    )
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None
# Password logins (the login page's form). Off: the login page offers single sign-on only
# and the password is refused for everyone but superusers, who keep the admin site's login
# (/admin/login/) as the way in when the provider is down (README, "Local accounts").
LOCAL_LOGIN = env_bool("LOCAL_LOGIN", True)
if not LOCAL_LOGIN and OIDC_PROVIDER is None:
    raise ImproperlyConfigured(
        "LOCAL_LOGIN=0 turns password logins off, so single sign-on must be on: set OIDC_ISSUER "
        "(README, Single sign-on)"
    )
AUTHENTICATION_BACKENDS = ["accounts.authentication.PasswordBackend"]
# The proxies (addresses or networks) whose X-Forwarded-For names the client: the login
# limits count the client's address, not the proxy's (accounts/addresses.py). Nobody else's
# X-Forwarded-For is believed.
TRUSTED_PROXIES = env_networks("TRUSTED_PROXIES", [])

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(DATA_DIR / "staticfiles")))
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(DATA_DIR / "media")))
# Run files, their Parquet artifacts and staged imports go through Django's storage API: a
# local folder (MEDIA_ROOT) by default, or an S3-compatible bucket (AWS S3, MinIO) when
# S3_BUCKET is set, so that web nodes and workers on different machines share them. Keys
# come from S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY, or boto3's usual sources (AWS_* variables,
# an instance role) when those are unset. Nothing is public: downloads go through the app.
S3_BUCKET = env_str("S3_BUCKET", "")
STORAGES = {
    "default": (
        {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": S3_BUCKET,
                "endpoint_url": env_str("S3_ENDPOINT_URL", "") or None,
                "region_name": env_str("S3_REGION", "") or None,
                "access_key": env_str("S3_ACCESS_KEY_ID", "") or None,
                "secret_key": env_str("S3_SECRET_ACCESS_KEY", "") or None,
                "location": env_str("S3_PREFIX", ""),
                # MinIO and most S3-compatible servers want path-style addresses.
                "addressing_style": env_str("S3_ADDRESSING_STYLE", "path"),
                "signature_version": "s3v4",
                "default_acl": None,
                "querystring_auth": True,
                # A name already taken gets a fresh suffix, as on the local disk: a stored
                # run's file is never replaced in place.
                "file_overwrite": False,
            },
        }
        if S3_BUCKET
        else {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    ),
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if env_bool("STATIC_MANIFEST", False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Uploads larger than this are refused before the body is read (runs may be large: gzip them).
MAX_UPLOAD_MB = env_int("MAX_UPLOAD_MB", 512)
# Rows one request may write (pairs, gold pairs, grades, assignments...); larger work is a file
# import or a job (jobs/services/limits.py).
SYNC_WRITE_ROWS = env_int("SYNC_WRITE_ROWS", 5_000)
# Which qrels versions judges (and users without a role) read: "closed" (those published from
# campaigns they judge and hold no open assignment in) or "none" (evaluation/access.py).
QRELS_FOR_JUDGES = env_str("QRELS_FOR_JUDGES", "closed")
if QRELS_FOR_JUDGES not in ("closed", "none"):
    raise ImproperlyConfigured(
        f"QRELS_FOR_JUDGES must be 'closed' or 'none', not {QRELS_FOR_JUDGES!r}"
    )
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_HANDLERS = [
    "common.uploads.UploadLimitHandler",  # stops a body longer than declared at MAX_UPLOAD_MB
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# Background work (DESIGN.md, "Work that takes time"): a database-backed queue drained by
# `manage.py db_worker` in production and under `make run` (which starts a worker beside
# runserver, on SQLite too); inline (ImmediateBackend, the request waits) when nothing is set,
# as for tests and a bare `manage.py runserver`, which has no worker to drain a queue.
TASKS = {
    "default": {
        "BACKEND": env_str("TASKS_BACKEND", "django.tasks.backends.immediate.ImmediateBackend"),
    }
}
# A running job beats (touches its row) this often; one silent for JOB_STALE_AFTER_SECONDS
# has lost its worker and may be tried again (jobs/models.py, manage.py recover_jobs).
JOB_HEARTBEAT_SECONDS = env_int("JOB_HEARTBEAT_SECONDS", 30)
# An adaptive pool ordering is recomputed in the background after this many new grades.
POOL_REORDER_EVERY = env_int("POOL_REORDER_EVERY", 20)
JOB_STALE_AFTER_SECONDS = env_int("JOB_STALE_AFTER_SECONDS", 300)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "accounts.authentication.PersonalTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON bodies bounded in size and depth (config/json_bodies.py); forms and uploads as DRF's.
    "DEFAULT_PARSER_CLASSES": [
        "config.json_bodies.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "accounts.schema.AutoSchema",  # + the Idempotency-Key header
    "DEFAULT_PAGINATION_CLASS": "config.pagination.Pagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Qrelsmith API",
    "DESCRIPTION": "Relevance judgments, qrels, runs and trec_eval-exact evaluation.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The campaign's rule and a publication's rule are one choice set: one schema name.
    "ENUM_NAME_OVERRIDES": {
        "AdjudicationRuleEnum": "annotation.models.AdjudicationRule",
        "ExternalJudgeKindEnum": "annotation.models.EXTERNAL_JUDGE_KINDS",
        "AuditKindEnum": "annotation.models.AuditKind",
        "DeliveryStatusEnum": "evaluation.models.DeliveryStatus",
        "SearchKindEnum": "evaluation.models.SearchKind",
    },
    # Swagger UI's files ship in drf-spectacular-sidecar: /api/v1/docs/ needs no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
}

# Production hardening; `manage.py check --deploy` is clean when DEBUG is off.
# Requests the server makes on a user's behalf (machine judges, search endpoints) go through
# common/outbound.py: public addresses only, unless listed here (a local model: e.g.
# OUTBOUND_ALLOW=127.0.0.1:11434,10.0.0.7:8000,vllm.internal); README "Outbound requests".
try:
    OUTBOUND_ALLOW = outbound.parse_allow(env_list("OUTBOUND_ALLOW", []))
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None
OUTBOUND_MAX_RESPONSE_BYTES = env_int("OUTBOUND_MAX_RESPONSE_BYTES", 4 * 1024 * 1024)
OUTBOUND_MAX_CONCURRENCY = env_int("OUTBOUND_MAX_CONCURRENCY", 16)
OUTBOUND_MAX_RETRIES = env_int("OUTBOUND_MAX_RETRIES", 5)
if min(OUTBOUND_MAX_RESPONSE_BYTES, OUTBOUND_MAX_CONCURRENCY) < 1 or OUTBOUND_MAX_RETRIES < 0:
    raise ImproperlyConfigured("OUTBOUND_MAX_*: the limits must be positive")
# The model endpoint (OpenAI-compatible: .../v1) that a new machine judge's form starts from,
# and that `manage.py demo` points its machine judge at; empty: none (README "The demo").
LLM_BASE_URL = env_str("QRELSMITH_LLM_BASE_URL", "").strip()
LLM_MODEL = env_str("QRELSMITH_LLM_MODEL", "").strip()
# Scheduled evaluations (README "Schedules and alerts"): the task worker's clock ticks this
# often (jobs/services/clock.py); a schedule fires at most once per
# SCHEDULE_MIN_INTERVAL_MINUTES (the one home of that limit); an alert's webhook waits at most
# WEBHOOK_TIMEOUT_SECONDS per attempt and is tried again up to WEBHOOK_MAX_RETRIES times.
CLOCK_TICK_SECONDS = env_int("CLOCK_TICK_SECONDS", 30)
SCHEDULE_MIN_INTERVAL_MINUTES = env_int("SCHEDULE_MIN_INTERVAL_MINUTES", 60)
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10)
WEBHOOK_MAX_RETRIES = env_int("WEBHOOK_MAX_RETRIES", 3)
if min(CLOCK_TICK_SECONDS, SCHEDULE_MIN_INTERVAL_MINUTES, WEBHOOK_TIMEOUT_SECONDS) < 1:
    raise ImproperlyConfigured(
        "CLOCK_TICK_SECONDS, SCHEDULE_MIN_INTERVAL_MINUTES and WEBHOOK_TIMEOUT_SECONDS must be "
        "at least 1"
    )
# Alert e-mails go through Django's mailers (MAILERS, Django 6.1's mail settings): SMTP at
# EMAIL_HOST:EMAIL_PORT (Django's old defaults, localhost:25). A send that fails is kept on
# the alert and shown; EMAIL_BACKEND names another backend (given the SMTP options only when
# it is SMTP).
_smtp = "django.core.mail.backends.smtp.EmailBackend"
_email_backend = env_str("EMAIL_BACKEND", _smtp)
MAILERS = {
    "default": {
        "BACKEND": _email_backend,
        "OPTIONS": {
            "host": env_str("EMAIL_HOST", "localhost"),
            "port": env_int("EMAIL_PORT", 25),
            "username": env_str("EMAIL_HOST_USER", ""),
            "password": env_str("EMAIL_HOST_PASSWORD", ""),
            "use_tls": env_bool("EMAIL_USE_TLS", False),
            "use_ssl": env_bool("EMAIL_USE_SSL", False),
            "timeout": env_int("EMAIL_TIMEOUT", 10),
        }
        if _email_backend == _smtp
        else {},
    }
}
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "qrelsmith@localhost")
# The mail domains a schedule's alert e-mails may go to (a domain admits its subdomains);
# empty: any. Checked when a schedule is saved (evaluation/schedules/recipients.py).
try:
    ALERT_EMAIL_DOMAINS = recipients.parse_domains(env_list("ALERT_EMAIL_DOMAINS", []))
except ValueError as error:
    raise ImproperlyConfigured(str(error)) from None
# Stored secrets (a machine judge's key) are encrypted with these Fernet keys (common/secrets.py);
# empty: a key derived from SECRET_KEY.
SECRETS_KEYS = env_list("SECRETS_KEYS", [])

# Behind our TLS proxy, its X-Forwarded-Proto says https (the client's address comes from
# TRUSTED_PROXIES' X-Forwarded-For, above).
BEHIND_TLS_PROXY = env_bool("BEHIND_TLS_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Django's database sessions, their per-request lookup compiled once
# (accounts/services/sessions.py).
SESSION_ENGINE = "accounts.services.sessions"
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
# Only our own files: no inline script or style anywhere (templates hand data to scripts
# with json_script; htmx's indicator styles live in app.css), no plugins, no framing.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# Prometheus scrapes /metrics with this bearer token; unset, /metrics does not exist.
METRICS_TOKEN = env_str("METRICS_TOKEN", "")

# Every log line carries the request's id (X-Request-ID, "-" outside a request); with
# LOG_FORMAT=json each line is one JSON object, for log collectors.
LOG_FORMAT = env_str("LOG_FORMAT", "text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r}: use text or json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "config.request_ids.RequestIdFilter"},
        # An expected refusal (4xx) is one line, without a traceback (config/logs.py).
        "client_errors": {"()": "config.logs.ClientErrorFilter"},
    },
    "formatters": {
        "text": {"format": "%(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(request_id)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id", "client_errors"],
            "formatter": LOG_FORMAT,
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
