"""A client for OpenAI-compatible chat-completions endpoints (OpenAI, vLLM, Ollama, the
llama.cpp server, and the like), written on the standard library's http.client.

    endpoint = ChatEndpoint(base_url="http://127.0.0.1:11434/v1", model="llama3.1:8b")
    client = ChatClient(endpoint)
    completion = client.complete(messages, temperature=0.0, max_tokens=20)

What it promises:

- every request has a timeout (``ChatEndpoint.timeout``, seconds of silence from the server
  while connecting, sending or reading), and one ``ChatClient`` may be used from many
  threads at once (each thread keeps its own keep-alive connection);
- a 429, a 5xx, a timeout or a dropped connection is tried again up to ``max_retries`` times,
  after an exponential backoff with full jitter (a random wait between 0 and
  ``backoff_base * 2**n`` seconds, at most ``backoff_cap``), or after the wait the server
  asks for in ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms``, at most
  ``max_wait``; any other answer (a 4xx such as a refused key, a body that is not a
  completion) fails at once, as trying again would not change it;
- the API key is sent only in the ``Authorization`` header: it is never logged, never part
  of an error message (a server that echoes it back has it replaced by ``[key]``), and not
  in the endpoint's ``repr``.

Failures raise :class:`CompletionError` with a ``kind`` (``timeout``, ``connection``,
``rate_limited``, ``server_error``, ``refused``, ``bad_response``), a message fit to show a
lead, the HTTP status when there was one, and how many attempts were made.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

USER_AGENT = "Qrelsmith-machine-judge/1"
EXCERPT = 300  # characters of a bad answer's body kept in an error message
MAX_BODY = 4 * 1024 * 1024  # bytes read from an answer at most: a completion is far smaller

MESSAGES = {
    "scheme": "the base URL must start with http:// or https:// (got {url!r})",
    "host": "the base URL names no host (got {url!r})",
    "model": "the model name is empty",
    "timeout": "no answer within {timeout:g} s",
    "connection": "the connection failed or was dropped: {error}",
    "rate_limited": "the endpoint is rate limiting (HTTP 429){detail}",
    "server_error": "the endpoint failed (HTTP {status}){detail}",
    "refused": "the endpoint refused the request (HTTP {status}){detail}",
    "unauthorised": "the endpoint refused the API key (HTTP {status}){detail}",
    "not_json": "the endpoint's answer is not JSON: {excerpt!r}",
    "not_completion": "the endpoint's answer is not a chat completion ({why}): {excerpt!r}",
    "error_body": "the endpoint answered with an error: {detail}",
    "too_big": "the endpoint's answer is larger than {limit:,} bytes",
    "attempts": " (after {attempts} attempts)",
}

RETRYABLE = frozenset({"timeout", "connection", "rate_limited", "server_error"})


class CompletionError(Exception):
    def __init__(
        self, kind: str, message: str, *, status: int | None = None, attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.attempts = attempts
        self.retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def __str__(self) -> str:
        if self.attempts > 1:
            return self.message + MESSAGES["attempts"].format(attempts=self.attempts)
        return self.message


@dataclass(frozen=True)
class ChatEndpoint:
    """Where and how to ask. ``base_url`` ends where the API's paths start, usually ``/v1``
    (``https://api.openai.com/v1``, ``http://127.0.0.1:8000/v1`` for vLLM,
    ``http://127.0.0.1:11434/v1`` for Ollama, ``http://127.0.0.1:8080/v1`` for llama.cpp)."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout: float = 60.0
    max_retries: int = 4
    backoff_base: float = 1.0
    backoff_cap: float = 30.0
    max_wait: float = 120.0

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(MESSAGES["scheme"].format(url=self.base_url))
        if not parts.hostname:
            raise ValueError(MESSAGES["host"].format(url=self.base_url))
        if not self.model.strip():
            raise ValueError(MESSAGES["model"])
        if self.timeout <= 0 or self.max_retries < 0:
            raise ValueError("the timeout must be positive and the retries at least 0")

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
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._local = threading.local()
        parts = urlsplit(endpoint.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self._connections: list[http.client.HTTPConnection] = []
        self._connections_lock = threading.Lock()

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
        attempt = 0
        while True:
            attempt += 1
            try:
                status, headers, data = self._post(body)
                completion = self._read(status, headers, data)
            except CompletionError as error:
                error.attempts = attempt
                if not error.retryable or attempt > self.endpoint.max_retries:
                    raise
                delay = self._delay(attempt, error.retry_after)
                logger.info(
                    "%s: %s (HTTP %s), attempt %d; trying again in %.2f s",
                    self.endpoint.model,
                    error.kind,
                    error.status or "-",
                    attempt,
                    delay,
                )
                self._sleep(delay)
                continue
            return Completion(
                text=completion[0],
                prompt_tokens=completion[1],
                completion_tokens=completion[2],
                model=completion[3],
                finish_reason=completion[4],
                attempts=attempt,
                seconds=time.monotonic() - started,
            )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        with self._rng_lock:
            jitter = self._rng.uniform(
                0, min(self.endpoint.backoff_cap, self.endpoint.backoff_base * 2 ** (attempt - 1))
            )
        if retry_after is not None:
            return min(self.endpoint.max_wait, max(retry_after, jitter))
        return jitter

    # --- the HTTP exchange -----------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        """This thread's connection (kept alive between requests)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            return connection
        if self._https:
            connection = http.client.HTTPSConnection(
                self._host,
                self._port,
                timeout=self.endpoint.timeout,
                context=ssl.create_default_context(),
            )
        else:
            connection = http.client.HTTPConnection(
                self._host, self._port, timeout=self.endpoint.timeout
            )
        self._local.connection = connection
        with self._connections_lock:
            self._connections.append(connection)
        return connection

    def _drop_connection(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def close(self) -> None:
        """Close every thread's connection (the client may still be used: it reconnects)."""
        with self._connections_lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        if self.endpoint.api_key:
            headers["Authorization"] = f"Bearer {self.endpoint.api_key}"
        return headers

    def _post(self, body: bytes) -> tuple[int, http.client.HTTPMessage, bytes]:
        # A kept-alive connection the server closed while idle fails like a dropped one:
        # it is retried as one (counted), which keeps ``attempts`` the number of requests sent.
        connection = self._connection()
        try:
            connection.request("POST", self._path, body=body, headers=self._headers())
            response = connection.getresponse()
            data = response.read(MAX_BODY + 1)
        except TimeoutError:
            self._drop_connection()
            raise CompletionError(
                "timeout", MESSAGES["timeout"].format(timeout=self.endpoint.timeout)
            ) from None
        except (http.client.HTTPException, OSError) as error:
            self._drop_connection()
            raise CompletionError(
                "connection", MESSAGES["connection"].format(error=self._scrub(_describe(error)))
            ) from None
        if len(data) > MAX_BODY:
            self._drop_connection()
            raise CompletionError("bad_response", MESSAGES["too_big"].format(limit=MAX_BODY))
        if response.will_close:
            self._drop_connection()
        return response.status, response.headers, data

    def _read(
        self, status: int, headers: http.client.HTTPMessage, data: bytes
    ) -> tuple[str, int | None, int | None, str, str]:
        text = data.decode("utf-8", errors="replace")
        if status != 200:
            detail = self._detail(text)
            detail = f": {detail}" if detail else ""
            if status == 429:
                error = CompletionError(
                    "rate_limited", MESSAGES["rate_limited"].format(detail=detail), status=status
                )
                error.retry_after = retry_after_seconds(headers)
                raise error
            if status >= 500:
                error = CompletionError(
                    "server_error",
                    MESSAGES["server_error"].format(status=status, detail=detail),
                    status=status,
                )
                error.retry_after = retry_after_seconds(headers)
                raise error
            key = "unauthorised" if status in (401, 403) else "refused"
            raise CompletionError(
                "refused", MESSAGES[key].format(status=status, detail=detail), status=status
            )
        try:
            answer = json.loads(text)
        except ValueError:
            raise CompletionError(
                "bad_response", MESSAGES["not_json"].format(excerpt=self._excerpt(text))
            ) from None
        return self._completion(answer, text)

    def _completion(self, answer, text: str) -> tuple[str, int | None, int | None, str, str]:
        def bad(why: str) -> CompletionError:
            return CompletionError(
                "bad_response",
                MESSAGES["not_completion"].format(why=why, excerpt=self._excerpt(text)),
            )

        if not isinstance(answer, dict):
            raise bad("not an object")
        if "error" in answer and "choices" not in answer:
            raise CompletionError(
                "bad_response",
                MESSAGES["error_body"].format(detail=self._detail(text) or self._excerpt(text)),
            )
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
            content,
            _count(usage.get("prompt_tokens")),
            _count(usage.get("completion_tokens")),
            model if isinstance(model, str) else "",
            finish if isinstance(finish, str) else "",
        )

    # --- keeping the key out of what is shown ----------------------------------------------

    def _scrub(self, text: str) -> str:
        key = self.endpoint.api_key
        return text.replace(key, "[key]") if key else text

    def _excerpt(self, text: str) -> str:
        text = self._scrub(text.strip())
        return text if len(text) <= EXCERPT else text[:EXCERPT] + "…"

    def _detail(self, text: str) -> str:
        """The error message of an OpenAI-style error body, else an excerpt of the body."""
        try:
            answer = json.loads(text)
        except ValueError:
            return self._excerpt(text)
        if isinstance(answer, dict):
            error = answer.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                return self._excerpt(error["message"])
            if isinstance(error, str):
                return self._excerpt(error)
        return self._excerpt(text)


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _describe(error: Exception) -> str:
    if isinstance(error, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(error, ConnectionRefusedError):
        return "nothing is listening at that address"
    if isinstance(error, ConnectionResetError):
        return "the connection was reset"
    if isinstance(error, socket.gaierror):
        return "the host name does not resolve"
    if isinstance(error, ssl.SSLError):
        return f"TLS failed ({error.reason or error})"
    return str(error) or type(error).__name__


def retry_after_seconds(headers, *, now: datetime | None = None) -> float | None:
    """The wait a 429 or 503 asks for: ``retry-after-ms`` (OpenAI), else ``Retry-After`` in
    seconds or as an HTTP date; None when absent or unreadable (then the backoff decides)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            value = float(milliseconds) / 1000
        except ValueError:
            value = None
        if value is not None and value >= 0:
            return value
    value = headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
        return max(0.0, seconds)
    return seconds if seconds >= 0 else None


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
