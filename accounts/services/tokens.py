"""Personal API tokens: make one (the key is returned once and only its SHA-256 hash is
kept), revoke one, and find the active token behind a key the API receives.

A key has 256 random bits, so an unsalted SHA-256 is enough to make a stolen database
useless for calling the API, and it lets the lookup be one indexed equality."""

import contextlib
import functools
import hashlib
import logging
import secrets
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from accounts.models import PersonalToken
from common.compiled import Statement, default_connection
from common.database import is_database_locked

# Recognisable in logs and to secret scanners; the page shows the prefix plus a few
# characters so people can tell their tokens apart.
KEY_PREFIX = "rs_"
SHOWN_LENGTH = len(KEY_PREFIX) + 8
NAME_MAX_LENGTH = PersonalToken._meta.get_field("name").max_length
# Record use at most this often: a write per API request would double the load of reads.
LAST_USED_PRECISION = timedelta(minutes=1)
# How long recording a use may wait for another writer's lock before it is skipped: "last
# used" is a convenience, and a read must not wait (or fail) behind an import's write.
LAST_USED_LOCK_WAIT_MS = 100

logger = logging.getLogger(__name__)

MESSAGES = {
    "name_required": "Give the token a name, e.g. the machine or script that will use it.",
    "name_too_long": f"A token name has at most {NAME_MAX_LENGTH} characters.",
    "duplicate_name": "You already have a token named “{name}”: revoke it or pick another name.",
}


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_token(*, user, name: str) -> tuple[PersonalToken, str]:
    """Make a token for ``user``; returns it and its key, which is never available again."""
    name = name.strip()
    if not name:
        raise ValidationError(MESSAGES["name_required"], code="name_required")
    if len(name) > NAME_MAX_LENGTH:
        raise ValidationError(MESSAGES["name_too_long"], code="name_too_long")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    try:
        with transaction.atomic():
            token = PersonalToken.objects.create(
                user=user, name=name, prefix=key[:SHOWN_LENGTH], key_hash=hash_key(key)
            )
    except IntegrityError:
        # The partial unique constraint: an active token of this user has the name.
        raise ValidationError(
            MESSAGES["duplicate_name"].format(name=name), code="duplicate_name"
        ) from None
    return token, key


def revoke_token(*, token: PersonalToken, now: datetime | None = None) -> bool:
    """Revoke ``token``; False if it already was (the first revocation time stays)."""
    if token.revoked_at is not None:
        return False
    token.revoked_at = now or timezone.now()
    token.save(update_fields=["revoked_at"])
    return True


def active_tokens(user):
    return PersonalToken.objects.filter(user=user, revoked_at__isnull=True)


def revoke_user_tokens(*, user, now: datetime | None = None) -> int:
    """Revoke every active token of ``user`` (their password changed); returns how many."""
    return active_tokens(user).update(revoked_at=now or timezone.now())


class ActiveKeys:
    """The active key of ``model`` (a Key) by its key's hash, with its ``related`` objects
    (non-null foreign keys), as ``select_related(*related).filter(...).first()`` gives it.

    Every API request with a token looks its key up: the statement is compiled once and, on
    PostgreSQL, prepared (common.compiled); the ORM compiled the join again on each request,
    about 0.8 ms of a request's CPU (issue 35)."""

    def __init__(self, model, *related: str):
        self.model, self.related = model, related
        self.statement = Statement(
            f"accounts.active_key.{model._meta.label}", self._build, 1, text=True
        )

    @functools.cached_property
    def _columns(self) -> tuple[list[str], list[tuple[str, type, list[str]]]]:
        """The key's own columns and each related model's, read from the models once."""
        own = [f.attname for f in self.model._meta.concrete_fields]
        others = []
        for name in self.related:
            related = self.model._meta.get_field(name).related_model
            others.append((name, related, [f.attname for f in related._meta.concrete_fields]))
        return own, others

    def _build(self, key_hash):
        own, others = self._columns
        joined = [f"{name}__{column}" for name, _, columns in others for column in columns]
        return (
            self.model.objects.filter(key_hash=key_hash, revoked_at__isnull=True)
            .order_by()  # key_hash is unique
            .values_list(*own, *joined)
        )

    def find(self, key: str):
        rows = self.statement.rows(hash_key(key))
        if not rows:
            return None
        alias = default_connection().alias
        own, others = self._columns
        found = self.model.from_db(alias, own, rows[0][: len(own)])
        at = len(own)
        for name, related, columns in others:
            setattr(found, name, related.from_db(alias, columns, rows[0][at : at + len(columns)]))
            at += len(columns)
        return found


_ACTIVE_TOKENS = ActiveKeys(PersonalToken, "user")


def find_active_token(key: str) -> PersonalToken | None:
    """The active token whose key is ``key``, with its user, or None."""
    return _ACTIVE_TOKENS.find(key)


def note_token_use(token, *, now: datetime | None = None) -> bool:
    """Set ``last_used_at``, unless it was set less than ``LAST_USED_PRECISION`` ago.

    Best effort: when another writer holds the lock (SQLite's one write lock during a long
    import, or the token's row on PostgreSQL) the use is not recorded and a warning is
    logged; the request goes on. Returns whether it was recorded."""
    now = now or timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_PRECISION:
        return False
    try:
        with _brief_lock_wait(), transaction.atomic():
            # A savepoint when the request is already in a transaction, so a failure here
            # leaves that transaction usable. skip_locked: PostgreSQL passes over a row
            # another transaction holds instead of waiting (SQLite has no row locks).
            row = type(token).objects.select_for_update(skip_locked=True).filter(pk=token.pk)
            recorded = bool(row.values_list("pk", flat=True)) and row.update(last_used_at=now) > 0
    except OperationalError as error:
        if not is_database_locked(error):  # SQLite's "database is locked" only
            raise
        logger.warning("Use of API token %s (%s…) not recorded: %s", token.pk, token.prefix, error)
        return False
    if not recorded:
        logger.warning(
            "Use of API token %s (%s…) not recorded: its row is locked", token.pk, token.prefix
        )
        return False
    token.last_used_at = now
    return True


@contextlib.contextmanager
def _brief_lock_wait():
    """On SQLite, wait at most ``LAST_USED_LOCK_WAIT_MS`` for the write lock (instead of the
    connection's busy timeout, seconds) while inside; other databases are left as they are."""
    if connection.vendor != "sqlite":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        (previous,) = cursor.fetchone()
        cursor.execute(f"PRAGMA busy_timeout = {LAST_USED_LOCK_WAIT_MS}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {int(previous)}")
