"""The kinds of search endpoint and the HTTP request each makes for one topic.

- ``elasticsearch`` (Elasticsearch and OpenSearch): POST the filled query DSL to the
  index's ``_search`` address (``https://host:9200/my-index/_search``);
- ``solr``: GET the ``select`` handler (``http://host:8983/solr/my-core/select``) with the
  filled parameters (``wt=json`` added when the template does not name a writer);
- ``vespa``: POST the filled request body, YQL and all, to ``/search/``
  (``http://host:8080/search/``); the query goes in as ``"query": "{{query}}"`` read by
  ``userQuery()``, so it is never spliced into YQL;
- ``http_json``: any engine that answers JSON: GET with the filled parameters or POST the
  filled body, and a mapping saying where the hits are.

Each kind has a starting template and mapping (:data:`DEFAULTS`), taken from the engine's
documentation; all can be edited. No Django here.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from urllib.parse import urlencode

from evaluation.search.mapping import Mapping
from evaluation.search.templates import fill_template

ELASTICSEARCH = "elasticsearch"
SOLR = "solr"
VESPA = "vespa"
HTTP_JSON = "http_json"
KINDS = (ELASTICSEARCH, SOLR, VESPA, HTTP_JSON)
METHODS = ("GET", "POST")

# The deepest a run may ask an engine for, everywhere (pages, API, command line): deeper
# lists are not judged or scored differently, and k bounds the work an engine does per query.
MAX_K = 1000

NO_AUTH = "none"
BEARER = "bearer"
API_KEY = "apikey"
BASIC = "basic"
HEADER = "header"
AUTHS = (NO_AUTH, BEARER, API_KEY, BASIC, HEADER)
HEADER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")
# Headers the request itself sets, or that would change how it is framed or routed.
RESERVED_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
        "accept",
        "user-agent",
        "expect",
        "upgrade",
        "te",
        "trailer",
        "keep-alive",
        "proxy-authorization",
    }
)
USER_AGENT = "Qrelsmith-search/1"

MESSAGES = {
    "kind": "the kind must be one of {kinds}",
    "method": "the method must be GET or POST",
    "k": "k must be a whole number from 1 to {high}",
    "header_name": "the header's name must be letters, digits and dashes (at most 64), and "
    "not one the request sets itself ({reserved})",
    "param": "the parameters must be an object of names to strings, numbers, booleans or "
    "lists of them (the value of {name!r} is not)",
}

DEFAULTS = {
    ELASTICSEARCH: {
        "method": "POST",
        "template": json.dumps(
            {
                "query": {"multi_match": {"query": "{{query}}", "fields": ["title", "text"]}},
                "size": "{{k}}",
                "_source": ["title", "text"],
            },
            indent=2,
        ).replace('"{{k}}"', "{{k}}"),
        "mapping": Mapping(
            hits="hits.hits", id="_id", title="_source.title", text="_source.text", score="_score"
        ),
    },
    SOLR: {
        "method": "GET",
        "template": json.dumps(
            {
                "q": "{{query}}",
                "defType": "edismax",
                "qf": "title text",
                "rows": "{{k}}",
                "fl": "id,title,text,score",
            },
            indent=2,
        ).replace('"{{k}}"', "{{k}}"),
        "mapping": Mapping(
            hits="response.docs", id="id", title="title", text="text", score="score"
        ),
    },
    VESPA: {
        "method": "POST",
        "template": json.dumps(
            {
                "yql": "select * from sources * where userQuery()",
                "query": "{{query}}",
                "hits": "{{k}}",
                "ranking": "default",
            },
            indent=2,
        ).replace('"{{k}}"', "{{k}}"),
        "mapping": Mapping(
            hits="root.children",
            id="fields.id",
            title="fields.title",
            text="fields.text",
            score="relevance",
        ),
    },
    HTTP_JSON: {
        "method": "GET",
        "template": json.dumps({"q": "{{query}}", "n": "{{k}}"}, indent=2).replace(
            '"{{k}}"', "{{k}}"
        ),
        "mapping": Mapping(hits="results", id="id", title="title", text="text", score="score"),
    },
}


@dataclass(frozen=True)
class Endpoint:
    """What a request needs: the kind, the address (scheme, host, port and path; no query),
    the method (``http_json`` only; the other kinds have theirs), the template and mapping,
    and how the key is sent. ``secret`` never appears in a repr."""

    kind: str
    url: str
    template: str
    mapping: Mapping
    method: str = "POST"
    auth: str = NO_AUTH
    auth_header: str = ""
    secret: str = field(default="", repr=False)

    @property
    def http_method(self) -> str:
        if self.kind == HTTP_JSON:
            return self.method
        return DEFAULTS[self.kind]["method"]


@dataclass(frozen=True)
class Topic:
    qid: str
    query: str
    description: str = ""
    narrative: str = ""


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # the address's path, with the query string of a GET
    body: bytes | None
    headers: dict[str, str] = field(repr=False)


def check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise ValueError(MESSAGES["k"].format(high=MAX_K))
    return k


def check_header_name(name: str) -> str:
    if not HEADER_NAME.match(name) or name.lower() in RESERVED_HEADERS:
        raise ValueError(
            MESSAGES["header_name"].format(reserved=", ".join(sorted(RESERVED_HEADERS)))
        )
    return name


def auth_headers(endpoint: Endpoint) -> dict[str, str]:
    """The header carrying the key, as the endpoint's scheme sends it (none without a key)."""
    secret = endpoint.secret
    if not secret or endpoint.auth == NO_AUTH:
        return {}
    if endpoint.auth == BEARER:
        return {"Authorization": f"Bearer {secret}"}
    if endpoint.auth == API_KEY:
        return {"Authorization": f"ApiKey {secret}"}
    if endpoint.auth == BASIC:
        return {"Authorization": "Basic " + base64.b64encode(secret.encode()).decode()}
    return {check_header_name(endpoint.auth_header): secret}


def _params(filled: dict) -> list[tuple[str, str]]:
    pairs = []
    for name, value in filled.items():
        for one in value if isinstance(value, list) else [value]:
            if isinstance(one, bool):
                pairs.append((name, "true" if one else "false"))
            elif isinstance(one, str | int | float):
                pairs.append((name, str(one)))
            else:
                raise ValueError(MESSAGES["param"].format(name=name[:40]))
    return pairs


def build_request(endpoint: Endpoint, topic: Topic, k: int, *, path: str) -> Request:
    """The request for ``topic`` to depth ``k``; ``path`` is the checked address's path.
    ValueError (TemplateError among them) when the template cannot make one."""
    if endpoint.kind not in KINDS:
        raise ValueError(MESSAGES["kind"].format(kinds=", ".join(KINDS)))
    check_k(k)
    values = {
        "query": topic.query,
        "description": topic.description,
        "narrative": topic.narrative,
        "qid": topic.qid,
        "k": k,
    }
    filled = fill_template(endpoint.template, values)
    headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **auth_headers(endpoint)}
    method = endpoint.http_method
    if method not in METHODS:
        raise ValueError(MESSAGES["method"])
    if method == "GET":
        params = _params(filled)
        if endpoint.kind == SOLR and not any(name == "wt" for name, _ in params):
            params.append(("wt", "json"))
        query = urlencode(params)
        return Request("GET", f"{path}?{query}" if query else path, None, headers)
    headers["Content-Type"] = "application/json"
    return Request("POST", path, json.dumps(filled).encode(), headers)


def engine_trouble(kind: str, answer) -> str | None:
    """What a 200 answer says went wrong inside the engine, so that partial results are never
    taken for whole ones; None when nothing did. (The reason is the engine's own flag, named,
    never its text.)"""
    if not isinstance(answer, dict):
        return None
    if kind == ELASTICSEARCH:
        if answer.get("timed_out") is True:
            return "the engine timed out and answered with partial results (timed_out)"
        shards = answer.get("_shards")
        if isinstance(shards, dict) and isinstance(shards.get("failed"), int) and shards["failed"]:
            return f"{shards['failed']} shard(s) failed, so the results are partial (_shards)"
    if kind == SOLR:
        header = answer.get("responseHeader")
        if isinstance(header, dict) and header.get("partialResults") is True:
            return "the engine answered with partial results (partialResults)"
        if "error" in answer:
            return "the engine answered with an error object"
    if kind == VESPA:
        root = answer.get("root")
        if isinstance(root, dict) and root.get("errors"):
            return "the engine reported errors (root.errors)"
        coverage = root.get("coverage") if isinstance(root, dict) else None
        if isinstance(coverage, dict) and coverage.get("degraded"):
            return "the engine answered with degraded coverage (root.coverage.degraded)"
    return None
