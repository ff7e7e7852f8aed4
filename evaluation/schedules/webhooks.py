"""An alert's webhook: a JSON POST signed with the schedule's shared secret, sent through the
server's outbound policy (common/outbound.py) and tried again with backoff (common/retries.py).
Pure: no Django.

The signature is HMAC-SHA256, keyed by the shared secret, over ``{timestamp}.{body}`` (the
Unix time in seconds, a dot, then the exact bytes of the body), sent as

    X-Qrelsmith-Timestamp: 1764547200
    X-Qrelsmith-Signature: sha256=<64 hex digits>

A receiver recomputes it over the body it read, compares in constant time, and refuses a
timestamp older than a few minutes (a replayed delivery): :func:`verify` does all three.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from common.outbound import (
    OutboundError,
    Policy,
    check_reachable_literal,
    check_url,
    connect,
    exchange,
    retry_after_seconds,
)
from common.retries import RemoteError, backoff_delay

SIGNATURE_HEADER = "X-Qrelsmith-Signature"
TIMESTAMP_HEADER = "X-Qrelsmith-Timestamp"
EVENT_HEADER = "X-Qrelsmith-Event"
TOLERANCE_SECONDS = 300
SECRET_MIN = 16
SECRET_MAX = 200

MESSAGES = {
    "rate_limited": "the receiver is rate limiting (HTTP 429)",
    "server_error": "the receiver failed (HTTP {status})",
    "refused": "the receiver refused the delivery (HTTP {status})",
}


class WebhookError(RemoteError):
    pass


def signature(secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def verify(
    secret: str, *, body: bytes, timestamp: str, signed: str, now: float | None = None
) -> bool:
    """Whether ``signed`` (the signature header) is this secret's signature of ``body`` at
    ``timestamp`` (the timestamp header), made at most TOLERANCE_SECONDS from ``now``."""
    try:
        moment = int(timestamp)
    except (TypeError, ValueError):
        return False
    if abs((time.time() if now is None else now) - moment) > TOLERANCE_SECONDS:
        return False
    return hmac.compare_digest(signature(secret, moment, body), signed or "")


def encode(payload: dict) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()


def check_webhook_url(url: str, policy: Policy) -> None:
    """OutboundError for an address that is unfit or written as one the policy refuses; a
    name is judged again, resolved, at each delivery."""
    check_reachable_literal(check_url(url), policy)


@dataclass(frozen=True)
class Delivered:
    status: int
    attempts: int
    seconds: float


def deliver(
    url: str,
    payload: dict,
    *,
    secret: str,
    event: str,
    policy: Policy,
    timeout: float,
    max_retries: int,
    backoff_base: float = 1.0,
    backoff_cap: float = 30.0,
    max_wait: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    rng: random.Random | None = None,
) -> Delivered:
    """POST ``payload`` to ``url``, signed; a 2xx is delivered. A timeout, a dropped
    connection, a 429 or a 5xx is tried again up to ``max_retries`` times (at most the
    policy's) after a backoff; anything else (a 4xx, a refused address, a redirect) fails at
    once. WebhookError (kind, message, status, attempts) when it was not delivered; its
    message never quotes the receiver's answer."""
    rng = rng or random.Random()
    retries = min(max_retries, policy.max_retries)
    target = check_url(url)
    body = encode(payload)
    started = time.monotonic()
    connection = connect(target, policy, timeout=timeout)
    attempt = 0
    try:
        while True:
            attempt += 1
            moment = int(clock())
            headers = {
                "Content-Type": "application/json",
                "User-Agent": "Qrelsmith-Webhook/1",
                EVENT_HEADER: event,
                TIMESTAMP_HEADER: str(moment),
                SIGNATURE_HEADER: signature(secret, moment, body),
            }
            try:
                answer = exchange(
                    connection,
                    "POST",
                    target.path,
                    body=body,
                    headers=headers,
                    policy=policy,
                    timeout=timeout,
                )
                error = _failure(answer.status)
                if error is None:
                    return Delivered(answer.status, attempt, time.monotonic() - started)
                error.retry_after = retry_after_seconds(answer.headers)
            except OutboundError as failed:
                error = WebhookError(failed.kind, failed.message, status=failed.status)
            error.attempts = attempt
            if not error.retryable or attempt > retries:
                raise error
            sleep(
                backoff_delay(
                    attempt,
                    error.retry_after,
                    base=backoff_base,
                    cap=backoff_cap,
                    max_wait=max_wait,
                    rng=rng,
                )
            )
    finally:
        connection.close()


def _failure(status: int) -> WebhookError | None:
    if 200 <= status < 300:
        return None
    if status == 429:
        return WebhookError("rate_limited", MESSAGES["rate_limited"], status=status)
    if status >= 500:
        return WebhookError(
            "server_error", MESSAGES["server_error"].format(status=status), status=status
        )
    return WebhookError("refused", MESSAGES["refused"].format(status=status), status=status)
