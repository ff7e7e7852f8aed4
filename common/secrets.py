"""Secrets the server stores for users (a machine judge's API key), encrypted at rest.

    sealed = seal("sk-...")      # what the database holds: "fernet:gAAAA..."
    key = unseal(sealed)         # SecretError if this server's keys cannot open it

Encryption is Fernet (AES-128-CBC with HMAC-SHA256, from the ``cryptography`` package),
keyed by ``SECRETS_KEYS``: one or more Fernet keys, comma-separated, the first encrypting and
all decrypting (so a key is rotated by putting the new one first). Without ``SECRETS_KEYS``
the key is derived from ``SECRET_KEY`` (HKDF-SHA256), so changing SECRET_KEY makes stored
secrets unreadable: they must then be stored again. A sealed value never leaves the
database: pages, the API, logs and backups say only whether one is stored.
"""

from __future__ import annotations

import base64
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

PREFIX = "fernet:"
MESSAGES = {
    "unreadable": "The stored key cannot be read with this server's SECRETS_KEYS (were they, "
    "or SECRET_KEY, changed?): store the key again.",
    "bad_key": "SECRETS_KEYS: entry {n} is not a Fernet key (32 url-safe base64 bytes; make "
    'one with python -c "from cryptography.fernet import Fernet; '
    'print(Fernet.generate_key().decode())").',
}


class SecretError(Exception):
    pass


@cache
def _fernet(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    if not keys:
        derived = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=None, info=b"qrelsmith stored secrets"
        ).derive(secret_key.encode())
        return MultiFernet([Fernet(base64.urlsafe_b64encode(derived))])
    fernets = []
    for n, key in enumerate(keys, 1):
        try:
            fernets.append(Fernet(key.encode()))
        except ValueError:
            raise ImproperlyConfigured(MESSAGES["bad_key"].format(n=n)) from None
    return MultiFernet(fernets)


def _current() -> MultiFernet:
    return _fernet(tuple(settings.SECRETS_KEYS), settings.SECRET_KEY)


def seal(plain: str) -> str:
    """The stored form of ``plain`` ("" stays "": nothing stored)."""
    if not plain:
        return ""
    return PREFIX + _current().encrypt(plain.encode()).decode()


def unseal(sealed: str) -> str:
    if not sealed:
        return ""
    try:
        return _current().decrypt(sealed.removeprefix(PREFIX).encode()).decode()
    except (InvalidToken, ValueError):
        raise SecretError(MESSAGES["unreadable"]) from None
