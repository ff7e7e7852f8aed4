"""Search endpoints: asking a live engine (Elasticsearch/OpenSearch, Solr, Vespa, or any
HTTP JSON API) for each topic's ranked list, through the server's outbound policy.

templates.py fills request templates (JSON-escaped), mapping.py reads hits out of answers
(JMESPath), kinds.py builds each kind's request, client.py makes the exchange with retries,
runs.py turns a query set's outcomes into a TREC run. The Django side (models, services,
pages, API, command) is evaluation/services/search.py and its callers. No Django here.
"""

from evaluation.search.client import (
    SearchClient,
    SearchError,
    SearchResult,
    check_endpoint_url,
)
from evaluation.search.kinds import (
    AUTHS,
    DEFAULTS,
    KINDS,
    MAX_K,
    METHODS,
    Endpoint,
    Topic,
    build_request,
    check_header_name,
    check_k,
)
from evaluation.search.mapping import Hit, Mapping, MappingError, compile_mapping, map_hits
from evaluation.search.runs import Outcome, ask_topic, ask_topics, documents_jsonl, run_text
from evaluation.search.templates import FIELDS, TemplateError, check_template, fill_template

__all__ = [
    "AUTHS",
    "DEFAULTS",
    "FIELDS",
    "KINDS",
    "MAX_K",
    "METHODS",
    "Endpoint",
    "Hit",
    "Mapping",
    "MappingError",
    "Outcome",
    "SearchClient",
    "SearchError",
    "SearchResult",
    "TemplateError",
    "Topic",
    "ask_topic",
    "ask_topics",
    "build_request",
    "check_endpoint_url",
    "check_header_name",
    "check_k",
    "check_template",
    "compile_mapping",
    "documents_jsonl",
    "fill_template",
    "map_hits",
    "run_text",
]
