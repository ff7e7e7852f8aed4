"""Asking a search endpoint for one topic's ranked list, through the server's outbound
policy (common/outbound.py).

    client = SearchClient(endpoint, policy=policy, timeout=10, max_retries=2)
    result = client.search(Topic("q1", "heat pumps"), k=100)   # SearchError if it failed
    client.close()

What it promises (as annotation/llm/client.py does for chat completions):

- every request goes through common/outbound.py: the address is checked when each
  connection is made (loopback and private addresses need the operator's ``OUTBOUND_ALLOW``),
  no redirect is followed, the answer is capped at the policy's size, one exchange ends
  within ``timeout`` seconds however slowly the server answers, and at most the policy's
  concurrency are in flight in the process;
- a 429, a 5xx, a timeout or a dropped connection is tried again up to ``max_retries``
  times (never more than the policy's ``max_retries``), after an exponential backoff with
  full jitter or the wait ``Retry-After`` asks for (at most ``max_wait``); any other
  failure (a 4xx, an answer that is not JSON or has no hits where the mapping looks) fails
  at once;
- the key travels only in its header: it is never part of an error message, and an
  answer's raw text kept for the person testing the endpoint has it replaced by ``[key]``.

Failures raise :class:`SearchError` with a ``kind``, a message naming the class of problem
(never quoting the answer), the HTTP status when there was one, the attempts made, and
``raw``: the answer's body (capped at RAW_CHARS, key scrubbed) for the test-connection
panel. No Django here.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from common.outbound import (
    OutboundError,
    Policy,
    check_reachable_literal,
    check_url,
    retry_after_seconds,
)
from common.retries import Remote, RemoteError
from evaluation.search.kinds import (
    Endpoint,
    Topic,
    auth_headers,
    build_request,
    check_k,
    engine_trouble,
)
from evaluation.search.mapping import Mapped, MappingError, map_hits
from evaluation.search.templates import TemplateError

logger = logging.getLogger(__name__)

RAW_CHARS = 4000

MESSAGES = {
    "rate_limited": "the endpoint is rate limiting (HTTP 429)",
    "server_error": "the endpoint failed (HTTP {status})",
    "refused": "the endpoint refused the request (HTTP {status})",
    "unauthorised": "the endpoint refused the key (HTTP {status})",
    "not_json": "the endpoint's answer is not JSON",
    "timeout_range": "the timeout must be positive and the retries from 0 to {high}",
}


class SearchError(RemoteError):
    pass


@dataclass(frozen=True)
class SearchResult:
    mapped: Mapped
    seconds: float
    attempts: int
    raw: str  # the last answer's body, capped and scrubbed (for the test panel)


def check_endpoint_url(url: str, policy: Policy) -> None:
    """OutboundError for an address that is unfit (a query, credentials, a scheme other than
    http(s)) or written as an address the policy refuses (``http://10.0.0.1/``)."""
    check_reachable_literal(check_url(url, base=True), policy)


class SearchClient:
    def __init__(
        self,
        endpoint: Endpoint,
        *,
        policy: Policy,
        timeout: float = 10.0,
        max_retries: int = 2,
        backoff_base: float = 1.0,
        backoff_cap: float = 30.0,
        max_wait: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if timeout <= 0 or not 0 <= max_retries <= policy.max_retries:
            raise ValueError(MESSAGES["timeout_range"].format(high=policy.max_retries))
        self.endpoint = endpoint
        self._target = check_url(endpoint.url, base=True)
        check_reachable_literal(self._target, policy)
        self._remote = Remote(
            self._target,
            policy,
            timeout=timeout,
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            max_wait=max_wait,
            sleep=sleep,
            rng=rng,
        )

    def search(self, topic: Topic, *, k: int) -> SearchResult:
        check_k(k)
        try:
            request = build_request(self.endpoint, topic, k, path=self._target.path)
        except (TemplateError, ValueError) as error:
            raise SearchError("template", str(error)) from None
        started = time.monotonic()

        def once() -> tuple[Mapped, str]:
            status, headers, data = self._exchange(request)
            return self._read(status, headers, data, k)

        (mapped, raw), attempts = self._remote.retrying(once, what=f"search {topic.qid}")
        return SearchResult(mapped, time.monotonic() - started, attempts, raw)

    def close(self) -> None:
        self._remote.close()

    def _exchange(self, request) -> tuple[int, object, bytes]:
        try:
            answer = self._remote.exchange(
                request.method, request.path, body=request.body, headers=request.headers
            )
        except OutboundError as error:
            raise SearchError(error.kind, error.message, status=error.status) from None
        return answer.status, answer.headers, answer.body

    def _read(self, status: int, headers, data: bytes, k: int) -> tuple[Mapped, str]:
        text = data.decode("utf-8", errors="replace")
        raw = self._raw(text)
        if status != 200:
            if status == 429 or status >= 500:
                kind = "rate_limited" if status == 429 else "server_error"
                error = SearchError(kind, MESSAGES[kind].format(status=status), status=status)
                error.raw = raw
                error.retry_after = retry_after_seconds(headers)
                raise error
            key = "unauthorised" if status in (401, 403) else "refused"
            raise SearchError(
                "refused", MESSAGES[key].format(status=status), status=status, raw=raw
            )
        try:
            answer = json.loads(text)
        except ValueError:
            raise SearchError("not_json", MESSAGES["not_json"], raw=raw) from None
        trouble = engine_trouble(self.endpoint.kind, answer)
        if trouble:
            raise SearchError("engine", trouble, raw=raw)
        try:
            mapped = map_hits(answer, self.endpoint.mapping, k=k)
        except MappingError as error:
            raise SearchError("mapping", str(error), raw=raw) from None
        return mapped, raw

    def _raw(self, text: str) -> str:
        text = text.replace("\x00", "\ufffd")
        if self.endpoint.secret:
            # The key as given and as its header carries it (Basic sends it in base64).
            for value in (self.endpoint.secret, *auth_headers(self.endpoint).values()):
                text = text.replace(value.split(" ", 1)[-1], "[key]")
        return text if len(text) <= RAW_CHARS else text[:RAW_CHARS] + "…"
