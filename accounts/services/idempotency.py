"""Idempotent POSTs: a client that retries a request it is not sure went through sends the same
``Idempotency-Key`` header (as Stripe's and GitHub's APIs take it), and the retry gets the
first answer again instead of creating a second campaign, run or qrels version.

- Every POST of a logged-in user (session or personal token), pages and API alike, may carry
  the header: 1 to 255 visible ASCII characters (a UUID is a good key). Without it nothing
  changes. Anonymous requests pass through (the view refuses them).
- The first request with a key runs the view inside one transaction that also stores the key
  with the answer (status, body, Content-Type, Location, Content-Disposition): both are kept
  or neither. A server error (5xx) rolls the whole request back, so a retry runs it again; an
  answer of 4xx keeps what the view did but not the key (a corrected retry may reuse it).
- A later request of the same user with the same key within ``KEEP`` (24 hours) and the same
  method, path, query and body gets the stored answer, with ``Idempotent-Replayed: true``;
  the view does not run. With anything else it is a 422 saying so.
- Two requests with one key at once: the unique constraint on (user, key) makes the second
  wait for the first's transaction (PostgreSQL's row lock on the index; SQLite's write lock),
  then replay its answer. Never both run.
- ``manage.py expire_idempotency_keys`` deletes keys older than ``KEEP`` (run it from cron
  beside ``recover_jobs``); an expired key met before that is replaced.

Judging's ``request_id`` (judge.js) predates this and stays: it makes a retried grade count
once even across a changed body (the seconds differ between retries).
"""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils import timezone
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied

from accounts.authentication import PersonalTokenAuthentication
from accounts.models import IdempotencyKey

__all__ = ["HEADER", "KEEP", "MESSAGES", "IdempotencyMiddleware", "expire_keys"]

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
KEEP = timedelta(hours=24)
# The answer's headers a replay carries; cookies and per-response security headers are not.
KEPT_HEADERS = ("Content-Type", "Location", "Content-Disposition", "Allow", "Retry-After")
_VALID_KEY = re.compile(r"[\x21-\x7e]{1,255}")

MESSAGES = {
    "bad_key": (
        "The Idempotency-Key header must be 1 to 255 visible ASCII characters "
        "(a UUID is a good key)."
    ),
    "reused": (
        "This Idempotency-Key was already used in the last 24 hours for another request "
        "(first for {method} {path}, with a different body). Send a new key for a new request; "
        "a retry must repeat the first request exactly."
    ),
}


class IdempotencyMiddleware:
    """Put it after AuthenticationMiddleware (it needs the session's user); see the module's
    docstring."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        key = request.headers.get(HEADER)
        if request.method != "POST" or key is None:
            return self.get_response(request)
        if not _VALID_KEY.fullmatch(key):
            return _refusal(request, 400, MESSAGES["bad_key"])
        user = _user_of(request)
        if user is None:
            return self.get_response(request)
        fingerprint = _fingerprint(request)
        with transaction.atomic():
            record = _claim(user, key, request, fingerprint)
            if record.status is not None:  # the first request's answer
                if record.fingerprint != fingerprint:
                    message = MESSAGES["reused"].format(method=record.method, path=record.path)
                    return _refusal(request, 422, message)
                return _replay(record)
            response = self.get_response(request)
            if response.status_code >= 500:
                transaction.set_rollback(True)  # nothing half-done; a retry runs it again
            elif response.status_code >= 400 or response.streaming:
                record.delete()
            else:
                record.status = response.status_code
                record.headers = {name: response[name] for name in KEPT_HEADERS if name in response}
                record.body = response.content
                record.save(update_fields=["status", "headers", "body"])
            return response


def expire_keys(*, now=None) -> int:
    """Delete the keys older than KEEP; returns how many."""
    cutoff = (now or timezone.now()) - KEEP
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def _claim(user, key: str, request, fingerprint: str) -> IdempotencyKey:
    """The key's row: a new one (status None: this request runs), or the stored answer of an
    earlier request. Must run inside the request's transaction."""
    now = timezone.now()
    IdempotencyKey.objects.filter(user=user, key=key, created_at__lt=now - KEEP).delete()
    try:
        with transaction.atomic():  # a savepoint: a duplicate leaves the transaction usable
            return IdempotencyKey.objects.create(
                user=user,
                key=key,
                method=request.method,
                path=request.get_full_path()[:2000],
                fingerprint=fingerprint,
                created_at=now,
            )
    except IntegrityError:
        # Another request holds the key; its transaction has committed by now (the insert
        # waited for it), so its answer is there.
        return IdempotencyKey.objects.get(user=user, key=key)


def _user_of(request):
    """The user the view will see: the session's, else the personal or service token's (as
    DRF's authenticators are ordered); None for anonymous or refused credentials, and for a
    service token asked for what its scope does not allow (the view answers 403)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user
    try:
        found = PersonalTokenAuthentication().authenticate(request)
    except (AuthenticationFailed, PermissionDenied):
        return None
    return found[0] if found else None


def _fingerprint(request) -> str:
    """SHA-256 over the method, the path with its query and the body. A multipart body is
    hashed by its fields and files (name, file name, content), not its bytes: a client's
    retry encodes the same form with a new boundary."""
    digest = hashlib.sha256()

    def add(*parts) -> None:
        for part in parts:
            data = part if isinstance(part, bytes) else str(part).encode()
            digest.update(b"%d:" % len(data))
            digest.update(data)

    add(request.method, request.get_full_path(), request.content_type or "")
    if request.content_type == "multipart/form-data":
        for name in sorted(request.POST):
            add("field", name, *request.POST.getlist(name))
        for name in sorted(request.FILES):
            for upload in request.FILES.getlist(name):
                content = hashlib.sha256()
                for chunk in upload.chunks():
                    content.update(chunk)
                upload.seek(0)
                add("file", name, upload.name or "", content.hexdigest())
    else:
        add("body", request.body)
    return digest.hexdigest()


def _replay(record: IdempotencyKey) -> HttpResponse:
    response = HttpResponse(bytes(record.body), status=record.status)
    for name, value in record.headers.items():
        response[name] = value
    response[REPLAYED] = "true"
    return response


def _refusal(request, status: int, message: str) -> HttpResponse:
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": message}, status=status)
    context = {"message": message, "title": "Request refused"}
    return HttpResponse(render_to_string("400.html", context, request=request), status=status)
