"""Search endpoints: configuring one (kind, address, template, mapping, key), testing it
with one query, and making a run from a query set by asking it every topic (a job:
evaluation.tasks.search_run_task). The request and answer rules are evaluation/search/
(pure); the exchange goes through common/outbound.py.

Keys: a key is sealed in the database (common/secrets.py) or read from an environment
variable named ``QRELSMITH_SEARCH_KEY_<NAME>``, which the operator sets for this purpose
(the rule of machine judges: a user names the variable, so any other name would let them
send the server's own secrets, SECRET_KEY or DATABASE_URL, to an address they chose). A key
is never shown back, exported or logged; a changed address on another scheme, host or port
drops a stored key unless the same change gives one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.services.teams import default_team_pk
from common import outbound
from common.secrets import SecretError, seal, unseal
from evaluation import search
from evaluation.models import SearchEndpoint
from evaluation.services.endpoint_versions import record_version

# The only environment variables an endpoint may read its key from (see the docstring).
KEY_ENV_PREFIX = "QRELSMITH_SEARCH_KEY_"
ENV_NAME = re.compile(rf"^{KEY_ENV_PREFIX}[A-Z0-9_]+$")
API_KEY = re.compile(r"^[\x21-\x7e]+$")
API_KEY_MAX = 2000
TEST_SECONDS = 15.0  # a test connection waits at most this long, whatever the endpoint's timeout
TEST_K = 10
TEST_HITS_SHOWN = 10
LIMITS = {"timeout": (0.5, 120.0)}
# Changing these changes what a request is or how an answer is read: a new version.
VERSIONED = ("kind", "url", "method", "template", "mapping", "auth", "auth_header")
EDITABLE = (*VERSIONED, "name", "api_key", "api_key_env", "timeout", "max_retries", "concurrency")

MESSAGES = {
    "env_name": "An endpoint reads its key only from an environment variable named "
    "{prefix}<NAME> (capitals, digits and _), which the operator sets for this purpose; "
    "{name!r} is not one.",
    "env_unset": "The environment variable {name} that should hold the key is not set on "
    "the server.",
    "env_value": "The environment variable {name} holds characters a key cannot have "
    "(spaces, line breaks or other control characters).",
    "key_chars": "A key is at most {limit} printable characters without spaces or line breaks.",
    "both_keys": "Give a key or the name of the environment variable holding it, not both.",
    "kind": "Choose a kind: {kinds}.",
    "method": "The method is GET or POST.",
    "template": "The template cannot be used: {why}.",
    "mapping": "The mapping cannot be used: {why}.",
    "url": "The address cannot be used: {why}.",
    "header": "The key's header: {why}.",
    "range": "{field} must be between {low} and {high}.",
    "concurrency": "Concurrency must be between 1 and {high} (the server's "
    "OUTBOUND_MAX_CONCURRENCY).",
    "retries": "Retries must be between 0 and {high} (the server's OUTBOUND_MAX_RETRIES).",
    "name": "Give the endpoint a name (at most 100 characters).",
    "name_taken": "An endpoint named {name!r} exists already.",
    "k": "k must be a whole number from 1 to {high}.",
    "query_set": "Choose one query set: a campaign you lead or a qrels version.",
    "no_campaign": "No campaign you lead has that id.",
    "no_qrels": "No qrels version you may read has that id.",
    "not_in_team": "{user} is not a lead or engineer of the team {team}, where the endpoint "
    "{endpoint} is: its runs would land in that team.",
    "no_topics": "The query set has no topics.",
    "no_texts": (
        "None of the {count} topics of qrels {label} has a query text you may read: a "
        "qrels version's texts come from the campaigns you lead. Run a campaign's topics, or "
        "ask its lead or an admin to run this one."
    ),
    "no_text": "no query text: the topic is in no campaign you lead",
    "all_failed": "Every query failed ({failed:,} of {total:,}); no run was stored.",
    "nothing_found": "The endpoint found nothing for any of the {total:,} queries; a run "
    "with no lines was not stored.",
    "summary": "Asked {total:,} queries: {answered:,} answered ({lines:,} lines), "
    "{failed:,} failed.",
    "failed_note": " Failed queries: {qids}.",
}


# --- configuring ---------------------------------------------------------------------------


def policy() -> outbound.Policy:
    return outbound.policy_from_settings(settings)


def defaults_for(kind: str) -> dict:
    """The starting method, template and mapping of a kind (evaluation.search.DEFAULTS)."""
    start = search.DEFAULTS[kind]
    return {
        "method": start["method"],
        "template": start["template"],
        "mapping": start["mapping"].as_dict(),
    }


def invalid(key: str, **values) -> ValidationError:
    return ValidationError(MESSAGES[key].format(**values), code=key)


def _check(values: dict) -> None:
    """ValidationError for the first unfit value among those given."""
    if "name" in values:
        name = values["name"]
        if not name or len(name) > 100:
            raise invalid("name")
    kind = values.get("kind")
    if kind is not None and kind not in search.KINDS:
        raise invalid("kind", kinds=", ".join(search.KINDS))
    if "method" in values and values["method"] not in search.METHODS:
        raise invalid("method")
    if "url" in values:
        try:
            search.check_endpoint_url(values["url"], policy())
        except outbound.OutboundError as error:
            raise invalid("url", why=error.message) from None
    if "template" in values:
        try:
            search.check_template(values["template"])
        except search.TemplateError as error:
            raise invalid("template", why=str(error)) from None
    if "mapping" in values:
        try:
            search.compile_mapping(search.Mapping.from_dict(values["mapping"] or {}))
        except search.MappingError as error:
            raise invalid("mapping", why=str(error)) from None
    if values.get("auth") == "header":
        try:
            search.check_header_name(values.get("auth_header", ""))
        except ValueError as error:
            raise invalid("header", why=str(error)) from None
    name = values.get("api_key_env")
    if name and not ENV_NAME.match(name):
        raise invalid("env_name", name=name, prefix=KEY_ENV_PREFIX)
    key = values.get("api_key")
    if key and (len(key) > API_KEY_MAX or not API_KEY.match(key)):
        raise invalid("key_chars", limit=API_KEY_MAX)
    for field, (low, high) in LIMITS.items():
        value = values.get(field)
        if value is not None and not low <= value <= high:
            raise invalid("range", field=field.capitalize(), low=low, high=high)
    concurrency = values.get("concurrency")
    if concurrency is not None and not 1 <= concurrency <= settings.OUTBOUND_MAX_CONCURRENCY:
        raise invalid("concurrency", high=settings.OUTBOUND_MAX_CONCURRENCY)
    retries = values.get("max_retries")
    if retries is not None and not 0 <= retries <= settings.OUTBOUND_MAX_RETRIES:
        raise invalid("retries", high=settings.OUTBOUND_MAX_RETRIES)


def _clean(values: dict) -> dict:
    cleaned = dict(values)
    for field in ("name", "url", "api_key", "api_key_env", "auth_header", "method"):
        if field in cleaned and cleaned[field] is not None:
            cleaned[field] = str(cleaned[field]).strip()
    if "method" in cleaned:
        cleaned["method"] = cleaned["method"].upper()
    if "mapping" in cleaned:
        cleaned["mapping"] = search.Mapping.from_dict(cleaned["mapping"] or {}).as_dict()
    return cleaned


def create_search_endpoint(
    *,
    name: str,
    kind: str,
    url: str,
    template: str = "",
    mapping: dict | None = None,
    method: str = "",
    auth: str = "none",
    auth_header: str = "",
    api_key: str = "",
    api_key_env: str = "",
    timeout: float = 10.0,
    max_retries: int = 2,
    concurrency: int = 4,
    created_by=None,
    team=None,
) -> SearchEndpoint:
    """A new endpoint in ``team`` (the default team when None); an empty template, mapping
    or method takes the kind's starting one. Names are unique within a team."""
    team_id = team.pk if team is not None else default_team_pk()
    if kind not in search.KINDS:
        raise invalid("kind", kinds=", ".join(search.KINDS))
    start = defaults_for(kind)
    values = _clean(
        {
            "name": name,
            "kind": kind,
            "url": url,
            "method": method or start["method"],
            "template": template or start["template"],
            "mapping": mapping or start["mapping"],
            "auth": auth or "none",
            "auth_header": auth_header,
            "api_key": api_key,
            "api_key_env": api_key_env,
            "timeout": timeout,
            "max_retries": max_retries,
            "concurrency": concurrency,
        }
    )
    if values["api_key"] and values["api_key_env"]:
        raise invalid("both_keys")
    _check(values)
    if SearchEndpoint.objects.filter(name=values["name"], team_id=team_id).exists():
        raise invalid("name_taken", name=values["name"])
    key = values.pop("api_key")
    with transaction.atomic():
        endpoint = SearchEndpoint.objects.create(
            created_by=created_by, api_key_sealed=seal(key), team_id=team_id, **values
        )
        record_version(endpoint, by=created_by)
    return endpoint


def update_search_endpoint(
    *, endpoint: SearchEndpoint, by=None, note: str = "", **changes
) -> SearchEndpoint:
    """Change an endpoint (EDITABLE). An empty ``api_key`` keeps the stored key (a form
    cannot show it back); ``clear_api_key=True`` removes it; a new address on another
    scheme, host or port drops it unless the same change gives one. A change to what a
    request is or how an answer is read makes the next version, kept with ``by`` and
    ``note`` (SearchEndpointVersion)."""
    unknown = set(changes) - {*EDITABLE, "clear_api_key"}
    if unknown:
        raise ValueError(f"not editable: {', '.join(sorted(unknown))}")
    clear = changes.pop("clear_api_key", False)
    changes = _clean(changes)
    key = changes.pop("api_key", "") or ""
    if key and changes.get("api_key_env"):
        raise invalid("both_keys")
    if changes.get("auth") == "header" or ("auth_header" in changes and endpoint.auth == "header"):
        changes.setdefault("auth", endpoint.auth)
        changes.setdefault("auth_header", endpoint.auth_header)
    _check({**changes, "api_key": key})
    name = changes.get("name")
    taken = SearchEndpoint.objects.filter(name=name, team_id=endpoint.team_id)
    if name and taken.exclude(pk=endpoint.pk).exists():
        raise invalid("name_taken", name=name)
    if "url" in changes and _origin(changes["url"]) != _origin(endpoint.url) and not key:
        clear = True
    if key:
        changes["api_key_sealed"] = seal(key)
        changes["api_key_env"] = ""
    elif clear:
        changes["api_key_sealed"] = ""
    if changes.get("api_key_env"):
        changes["api_key_sealed"] = ""
    changed = [f for f, v in changes.items() if getattr(endpoint, f) != v]
    if any(f in VERSIONED for f in changed):
        endpoint.version += 1
        changed.append("version")
    for field in changed:
        if field != "version":
            setattr(endpoint, field, changes[field])
    if changed:
        with transaction.atomic():
            endpoint.save(update_fields=[*changed, "updated_at"])
            if "version" in changed:
                record_version(endpoint, by=by, note=note)
    return endpoint


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def key_source(endpoint: SearchEndpoint) -> str:
    """Where the key comes from, for pages and the API (never the key, nor whether a
    variable is set)."""
    if endpoint.api_key_env:
        return f"environment variable {endpoint.api_key_env}"
    return "stored (hidden)" if endpoint.api_key_sealed else "none"


def snapshot(endpoint: SearchEndpoint) -> dict:
    """The endpoint as a run's provenance keeps it: everything but the key."""
    return {
        "name": endpoint.name,
        "version": endpoint.version,
        "kind": endpoint.kind,
        "url": endpoint.url,
        "method": search_endpoint(endpoint, secret="").http_method,
        "template": endpoint.template,
        "mapping": endpoint.mapping,
        "auth": endpoint.auth,
        "auth_header": endpoint.auth_header,
        "key_source": key_source(endpoint),
        "timeout": endpoint.timeout,
        "max_retries": endpoint.max_retries,
        "concurrency": endpoint.concurrency,
    }


def search_endpoint(endpoint: SearchEndpoint, *, secret: str) -> search.Endpoint:
    return search.Endpoint(
        kind=endpoint.kind,
        url=endpoint.url,
        template=endpoint.template,
        mapping=search.Mapping.from_dict(endpoint.mapping),
        method=endpoint.method,
        auth=endpoint.auth,
        auth_header=endpoint.auth_header,
        secret=secret,
    )


def _secret(endpoint: SearchEndpoint) -> str:
    if endpoint.api_key_env:
        if not ENV_NAME.match(endpoint.api_key_env):
            raise invalid("env_name", name=endpoint.api_key_env, prefix=KEY_ENV_PREFIX)
        key = os.environ.get(endpoint.api_key_env, "")
        if not key:
            raise invalid("env_unset", name=endpoint.api_key_env)
        if not API_KEY.match(key):
            raise invalid("env_value", name=endpoint.api_key_env)
        return key
    try:
        return unseal(endpoint.api_key_sealed)
    except SecretError as error:
        raise ValidationError(str(error)) from None


def client_for(
    endpoint: SearchEndpoint, *, timeout: float | None = None, max_retries: int | None = None
) -> search.SearchClient:
    """A client for ``endpoint`` with its key, under the server's outbound policy;
    ValidationError when the key cannot be had or the address is refused."""
    outbound_policy = policy()
    spec = search_endpoint(endpoint, secret=_secret(endpoint))
    retries = endpoint.max_retries if max_retries is None else max_retries
    try:
        return search.SearchClient(
            spec,
            policy=outbound_policy,
            timeout=timeout or endpoint.timeout,
            max_retries=min(retries, outbound_policy.max_retries),
            backoff_base=getattr(settings, "SEARCH_BACKOFF_SECONDS", 1.0),
        )
    except outbound.OutboundError as error:
        raise invalid("url", why=error.message) from None
    except ValueError as error:
        raise ValidationError(str(error)) from None


# --- one query -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ConnectionCheck:
    ok: bool
    query: str
    seconds: float
    hits: list  # search.Hit, the first TEST_HITS_SHOWN
    count: int
    scores_from: str = ""
    kind: str = ""
    error: str = ""
    status: int | None = None
    raw: str = ""  # the answer as it came (capped, key scrubbed): for the person testing


def test_connection(*, endpoint: SearchEndpoint, query: str, k: int = TEST_K) -> ConnectionCheck:
    """One query, as a run sends it: no retry, at most TEST_SECONDS, nothing stored."""
    query = query.strip() or "test"
    try:
        client = client_for(endpoint, timeout=min(endpoint.timeout, TEST_SECONDS), max_retries=0)
    except ValidationError as error:
        return ConnectionCheck(
            False, query, 0.0, [], 0, kind="configuration", error=" ".join(error.messages)
        )
    try:
        result = client.search(search.Topic("test", query), k=k)
    except search.SearchError as error:
        return ConnectionCheck(
            False,
            query,
            0.0,
            [],
            0,
            kind=error.kind,
            error=str(error),
            status=error.status,
            raw=error.raw,
        )
    finally:
        client.close()
    hits = result.mapped.hits
    return ConnectionCheck(
        True,
        query,
        result.seconds,
        hits[:TEST_HITS_SHOWN],
        len(hits),
        scores_from=result.mapped.scores_from,
        raw=result.raw,
    )
