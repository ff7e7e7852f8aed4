"""What the two outbound clients (machine judges' chat completions, search endpoints) share:
the error a failed exchange raises, the wait before trying again, and :class:`Remote`, one
service's keep-alive connections and its retry loop. Pure: no Django."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable

from common.outbound import Answer, Policy, Target, connect, exchange

logger = logging.getLogger(__name__)

RETRYABLE = frozenset({"timeout", "connection", "rate_limited", "server_error"})
ATTEMPTS = " (after {attempts} attempts)"


class RemoteError(Exception):
    """A failed exchange: its kind (RETRYABLE ones are tried again), a message that never
    quotes the answer, the HTTP status if any, the attempts made, the answer's raw text, and
    the wait the server asked for (Retry-After), if any."""

    def __init__(
        self, kind: str, message: str, *, status: int | None = None, attempts: int = 1, raw=""
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.attempts = attempts
        self.raw = raw
        self.retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def __str__(self) -> str:
        if self.attempts > 1:
            return self.message + ATTEMPTS.format(attempts=self.attempts)
        return self.message


def backoff_delay(
    attempt: int,
    retry_after: float | None,
    *,
    base: float,
    cap: float,
    max_wait: float,
    rng: random.Random,
) -> float:
    """Seconds to wait before attempt ``attempt + 1``: full jitter, a random wait between 0
    and ``base * 2**(attempt - 1)`` (at most ``cap``), or the server's Retry-After when it
    asked for longer, never past ``max_wait``."""
    jitter = rng.uniform(0, min(cap, base * 2 ** (attempt - 1)))
    if retry_after is not None:
        return min(max_wait, max(retry_after, jitter))
    return jitter


class Remote:
    """One remote service as both outbound clients ask it: a keep-alive connection per
    thread, each made and used through the outbound ``policy`` (``exchange`` raises its
    OutboundError, which each client names in its own words), and the retry loop: a
    RETRYABLE RemoteError is tried again up to ``max_retries`` times after
    :func:`backoff_delay`, any other fails at once. Safe to use from many threads."""

    def __init__(
        self,
        target: Target,
        policy: Policy,
        *,
        timeout: float,
        max_retries: int,
        backoff_base: float,
        backoff_cap: float,
        max_wait: float,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.target = target
        self.policy = policy
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.max_wait = max_wait
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._local = threading.local()
        self.connections: list = []
        self._connections_lock = threading.Lock()

    def retrying[T](self, once: Callable[[], T], *, what: str) -> tuple[T, int]:
        """``once()``'s result and the attempts it took; the last RemoteError (its
        ``attempts`` set) when it is not retryable or the retries ran out. ``what`` names
        the request in the log (never a key)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return once(), attempt
            except RemoteError as error:
                error.attempts = attempt
                if not error.retryable or attempt > self.max_retries:
                    raise
                delay = self._delay(attempt, error.retry_after)
                logger.info(
                    "%s: %s (HTTP %s), attempt %d; trying again in %.2f s",
                    what,
                    error.kind,
                    error.status or "-",
                    attempt,
                    delay,
                )
                self._sleep(delay)

    def exchange(self, method: str, path: str, *, body: bytes | None, headers) -> Answer:
        """One request on this thread's connection. A kept-alive connection the server
        closed while idle fails like a dropped one, so it is retried as one (counted), which
        keeps the attempts the number of requests sent."""
        return exchange(
            self._connection(),
            method,
            path,
            body=body,
            headers=headers,
            policy=self.policy,
            timeout=self.timeout,
        )

    def close(self) -> None:
        """Close every thread's connection (the service may still be asked: it reconnects)."""
        with self._connections_lock:
            for connection in self.connections:
                connection.close()
            self.connections.clear()

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        with self._rng_lock:
            return backoff_delay(
                attempt,
                retry_after,
                base=self.backoff_base,
                cap=self.backoff_cap,
                max_wait=self.max_wait,
                rng=self._rng,
            )

    def _connection(self):
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = connect(self.target, self.policy, timeout=self.timeout)
            self._local.connection = connection
            with self._connections_lock:
                self.connections.append(connection)
        return connection
