"""What the two outbound clients (machine judges' chat completions, search endpoints) share
about a failed exchange and the wait before trying again. Pure: no Django."""

from __future__ import annotations

import random

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
