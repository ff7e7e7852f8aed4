"""A client for OpenAI-compatible chat-completions endpoints (OpenAI, vLLM, Ollama, the
llama.cpp server, and the like), written on the standard library's http.client through the
server's outbound policy (common/outbound.py).

    endpoint = ChatEndpoint(base_url="https://api.openai.com/v1", model="gpt-4o-mini")
    client = ChatClient(endpoint)
    completion = client.complete(messages, temperature=0.0, max_tokens=20)

What it promises:

- every request goes through common/outbound.py: the endpoint's address is checked against
  the ``policy`` when each connection is made (a local model needs the operator's
  ``OUTBOUND_ALLOW``), no redirect is followed, the answer is capped, and one exchange ends
  within ``ChatEndpoint.timeout`` seconds however the server drips it; one ``ChatClient``
  may be used from many threads at once (each thread keeps its own keep-alive connection);
- a 429, a 5xx, a timeout or a dropped connection (an answer cut short of its
  ``Content-Length`` included) is tried again up to ``max_retries`` times, after an
  exponential backoff with full jitter (a random wait between 0 and ``backoff_base * 2**n``
  seconds, at most ``backoff_cap``), or after the wait the server asks for in
  ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms``, at most ``max_wait``; any
  other answer (a 4xx such as a refused key, a body that is not a completion) fails at once,
  as trying again would not change it;
- the API key is sent only in the ``Authorization`` header: it is never logged, never part
  of an error message or a kept answer (a server that echoes it back has it replaced by
  ``[key]``), and not in the endpoint's ``repr``; a key a header cannot carry fails before
  anything is sent.

Failures raise :class:`CompletionError` with a ``kind`` (``timeout``, ``connection``,
``rate_limited``, ``server_error``, ``refused``, ``unreachable``, ``bad_response``), a message
fit to show a lead that names the class of problem and never quotes the answer, the HTTP
status when there was one, how many attempts were made, and ``raw``: the answer's body as it
came (capped at RAW_CHARS, the key scrubbed), for the lead to read.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from common.outbound import (
    OutboundError,
    Policy,
    check_reachable_literal,
    check_url,
    retry_after_seconds,
)
from common.retries import Remote, RemoteError

logger = logging.getLogger(__name__)

USER_AGENT = "Qrelsmith-machine-judge/1"
RAW_CHARS = 4000  # characters of an answer's body kept as its raw text

MESSAGES = {
    "model": "the model name is empty",
    "rate_limited": "the endpoint is rate limiting (HTTP 429)",
    "server_error": "the endpoint failed (HTTP {status})",
    "refused": "the endpoint refused the request (HTTP {status})",
    "unauthorised": "the endpoint refused the API key (HTTP {status})",
    "not_json": "the endpoint's answer is not JSON",
    "not_completion": "the endpoint's answer is not a chat completion ({why})",
    "error_body": "the endpoint answered with an error object instead of a completion",
}

# The outbound module's classes of problem, as a machine judge's failures name them.
OUTBOUND_KINDS = {
    "timeout": "timeout",
    "connection": "connection",
    "too_big": "bad_response",
    "redirect": "refused",
    "header": "refused",
}


class CompletionError(RemoteError):
    pass


@dataclass(frozen=True)
class ChatEndpoint:
    """Where and how to ask. ``base_url`` ends where the API's paths start, usually ``/v1``
    (``https://api.openai.com/v1``, ``http://127.0.0.1:8000/v1`` for vLLM,
    ``http://127.0.0.1:11434/v1`` for Ollama, ``http://127.0.0.1:8080/v1`` for llama.cpp: the
    local ones reachable only once the operator allowed them in the ``policy``).
    ``timeout`` bounds one whole exchange (connect, send, read)."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout: float = 60.0
    max_retries: int = 4
    backoff_base: float = 1.0
    backoff_cap: float = 30.0
    max_wait: float = 120.0
    policy: Policy = field(default_factory=Policy)

    def __post_init__(self) -> None:
        try:
            check_reachable_literal(check_url(self.url, base=True), self.policy)
            check_url(self.base_url, base=True)
        except OutboundError as error:
            raise ValueError(error.message) from None
        if not self.model.strip():
            raise ValueError(MESSAGES["model"])
        if self.timeout <= 0 or self.max_retries < 0:
            raise ValueError("the timeout must be positive and the retries at least 0")
        if self.max_retries > self.policy.max_retries:
            raise ValueError(f"at most {self.policy.max_retries} retries are allowed")

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    model: str  # as the endpoint names it in its answer (may differ from the one asked for)
    finish_reason: str
    attempts: int
    seconds: float


class ChatClient:
    def __init__(
        self,
        endpoint: ChatEndpoint,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.endpoint = endpoint
        self._target = check_url(endpoint.url, base=True)
        self._remote = Remote(
            self._target,
            endpoint.policy,
            timeout=endpoint.timeout,
            max_retries=endpoint.max_retries,
            backoff_base=endpoint.backoff_base,
            backoff_cap=endpoint.backoff_cap,
            max_wait=endpoint.max_wait,
            sleep=sleep,
            rng=rng,
        )

    # --- one completion, with retries ------------------------------------------------------

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        payload: dict = {"model": self.endpoint.model, "messages": messages, "stream": False}
        if temperature is not None:
            payload["temperature"] = temperature
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if seed is not None:
            payload["seed"] = seed
        body = json.dumps(payload).encode()
        started = time.monotonic()

        def once() -> tuple[str, int | None, int | None, str, str]:
            status, headers, data = self._post(body)
            return self._read(status, headers, data)

        completion, attempts = self._remote.retrying(once, what=self.endpoint.model)
        return Completion(
            text=completion[0],
            prompt_tokens=completion[1],
            completion_tokens=completion[2],
            model=completion[3],
            finish_reason=completion[4],
            attempts=attempts,
            seconds=time.monotonic() - started,
        )

    def close(self) -> None:
        """Close every thread's connection (the client may still be used: it reconnects)."""
        self._remote.close()

    # --- the HTTP exchange -----------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        return headers

    def _post(self, body: bytes) -> tuple[int, object, bytes]:
        try:
            answer = self._remote.exchange(
                "POST", self._target.path, body=body, headers=self._headers()
            )
        except OutboundError as error:
            kind = OUTBOUND_KINDS.get(error.kind, "unreachable")
            raise CompletionError(kind, error.message, status=error.status) from None
        return answer.status, answer.headers, answer.body

    def _read(
        self, status: int, headers, data: bytes
    ) -> tuple[str, int | None, int | None, str, str]:
        text = data.decode("utf-8", errors="replace")
        raw = self._raw(text)
        if status != 200:
            if status == 429:
                error = CompletionError(
                    "rate_limited", MESSAGES["rate_limited"], status=status, raw=raw
                )
                error.retry_after = retry_after_seconds(headers)
                raise error
            if status >= 500:
                error = CompletionError(
                    "server_error",
                    MESSAGES["server_error"].format(status=status),
                    status=status,
                    raw=raw,
                )
                error.retry_after = retry_after_seconds(headers)
                raise error
            key = "unauthorised" if status in (401, 403) else "refused"
            raise CompletionError(
                "refused", MESSAGES[key].format(status=status), status=status, raw=raw
            )
        try:
            answer = json.loads(text)
        except ValueError:
            raise CompletionError("bad_response", MESSAGES["not_json"], raw=raw) from None
        return self._completion(answer, raw)

    def _completion(self, answer, raw: str) -> tuple[str, int | None, int | None, str, str]:
        def bad(why: str) -> CompletionError:
            return CompletionError(
                "bad_response", MESSAGES["not_completion"].format(why=why), raw=raw
            )

        if not isinstance(answer, dict):
            raise bad("not an object")
        if "error" in answer and "choices" not in answer:
            raise CompletionError("bad_response", MESSAGES["error_body"], raw=raw)
        choices = answer.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise bad("no choices")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise bad("the first choice has no message")
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(
                part.get("text", "")
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        if content is None:
            content = ""  # a refusal or a tool call: no grade, parse_grade says so
        if not isinstance(content, str):
            raise bad("the message's content is not text")
        usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        finish = choices[0].get("finish_reason")
        model = answer.get("model")
        return (
            self._scrub(content),
            _count(usage.get("prompt_tokens")),
            _count(usage.get("completion_tokens")),
            model if isinstance(model, str) else "",
            finish if isinstance(finish, str) else "",
        )

    # --- keeping the key out of what is kept -----------------------------------------------

    def _scrub(self, text: str) -> str:
        """``text`` fit to keep: the key replaced by ``[key]``, and NUL (which PostgreSQL's
        text columns refuse, a byte a hostile endpoint may send) by U+FFFD."""
        key = self.endpoint.api_key
        text = text.replace("\x00", "\ufffd")
        return text.replace(key, "[key]") if key else text

    def _raw(self, text: str) -> str:
        """The body as kept beside a failure: the key scrubbed, at most RAW_CHARS."""
        text = self._scrub(text)
        return text if len(text) <= RAW_CHARS else text[:RAW_CHARS] + "…"


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cost_of(
    prompt_tokens: int | None,
    completion_tokens: int | None,
    *,
    input_price: float | None,
    output_price: float | None,
) -> float | None:
    """What a completion cost, from prices per million tokens; None when a price or a count
    is unknown (a local model has no price: leave them empty)."""
    if input_price is None or output_price is None:
        return None
    if prompt_tokens is None or completion_tokens is None:
        return None
    return (prompt_tokens * input_price + completion_tokens * output_price) / 1_000_000


def map_bounded[T, R](
    work: Callable[[T], R],
    items: Iterable[T],
    *,
    concurrency: int,
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[T, R | BaseException]]:
    """Run ``work`` over ``items`` on ``concurrency`` threads, yielding ``(item, result)`` (or
    ``(item, exception)``) as each finishes. At most ``concurrency`` items are in flight, so
    the caller records results while the rest wait; once ``stop()`` is true no new item
    starts, and those in flight are still yielded (their work was paid for). New items start
    before finished ones are yielded, so one more round may start after the caller decides
    to stop."""
    if concurrency < 1:
        raise ValueError("the concurrency must be at least 1")
    iterator = iter(items)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="machine-judge") as pool:
        flight: dict[Future, T] = {}
        exhausted = False

        def fill() -> None:
            nonlocal exhausted
            while not exhausted and len(flight) < concurrency and not stop():
                try:
                    item = next(iterator)
                except StopIteration:
                    exhausted = True
                    return
                flight[pool.submit(work, item)] = item

        fill()
        while flight:
            done, _ = wait(flight, return_when=FIRST_COMPLETED)
            finished = [(flight.pop(future), future) for future in done]
            # Refill before handing the results over: the threads keep working while the
            # caller records them (a database write can take longer than an answer).
            fill()
            for item, future in finished:
                error = future.exception()
                yield item, (error if error is not None else future.result())
