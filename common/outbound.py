"""Every HTTP request the server makes on a user's behalf (machine judges now, search
endpoints next) goes through this module, so one policy decides what the server may reach.
No Django here: callers pass a :class:`Policy` (``policy_from_settings`` builds the
configured one).

    target = check_url("https://api.openai.com/v1", base=True)   # OutboundError if unfit
    connection = connect(target, policy, timeout=60)
    answer = exchange(connection, "POST", target.path + "/chat/completions",
                      body=b"...", headers={...}, policy=policy, timeout=60)

What it promises:

- **Addresses**: the host is resolved when the connection is made and the socket connects
  to the very address that was checked (no second lookup, so no DNS-rebinding gap).
  Loopback, private, shared (100.64/10), link-local (169.254/16: cloud metadata), multicast,
  reserved and unspecified addresses are refused, in every spelling (``2130706433``,
  ``0x7f.1``, ``[::ffff:127.0.0.1]``, 6to4 and Teredo wrappings), unless the operator allowed
  them (``OUTBOUND_ALLOW``: networks, addresses or host names, each optionally with a port).
- **URLs**: http and https only; no ``user:password@``; a base URL has no query or fragment
  (which would let a caller reach any path); no control characters or spaces.
- **Answers**: no redirect is followed (a 3xx is an error); at most ``max_response_bytes``
  are read (a larger ``Content-Length`` is refused before reading); a body cut short of its
  ``Content-Length`` is a dropped connection (so it is retried, never taken as complete).
- **Time and load**: one exchange (connect, send, read) ends within its timeout, even
  against a server that answers one byte at a time; at most ``max_concurrency`` exchanges
  are in flight in a process at once; callers cap their retries at ``max_retries``.
- **Errors** name the class of problem (:data:`MESSAGES`) and never quote the remote body or
  a header value; a closed port, a reset and a server that does not speak HTTP read alike, so
  the error cannot be used to scan ports. The body of an answer is returned to the caller
  (capped), who may keep it as that answer's raw text.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() also takes "²", int() does not

MESSAGES = {
    "scheme": "the URL must start with http:// or https://",
    "no_host": "the URL names no host",
    "credentials": "the URL must not hold a user name or password (user:password@); "
    "give a key instead",
    "query": "a base URL must not hold a query (?) or a fragment (#)",
    "characters": "the URL holds spaces or control characters",
    "port": "the URL's port is not a number from 1 to 65535",
    "address": "the host is an address this server does not reach (loopback, private, "
    "link-local, multicast or reserved); an operator can allow it with OUTBOUND_ALLOW",
    "dns": "the host name does not resolve",
    "connection": "the connection failed or was dropped",
    "tls": "the server's TLS certificate could not be verified",
    "timeout": "no answer within {timeout:g} s",
    "too_big": "the answer is larger than {limit:,} bytes",
    "redirect": "the endpoint answered with a redirect (HTTP {status}), which is not "
    "followed: give the final address",
    "header": "the {name} header holds characters a header cannot carry (a line break or a "
    "control character)",
    "allow_entry": "OUTBOUND_ALLOW: {entry!r} is not an address, a network (10.0.0.0/8), "
    "a host name, or one of those followed by :port",
}

DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_CONCURRENCY = 16
DEFAULT_MAX_RETRIES = 5
HOST_NAME = re.compile(r"^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_][a-z0-9_-]{0,62})*$")
UNSAFE = re.compile(r"[\x00-\x20\x7f]")
HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")
NUMERIC_HOST = re.compile(r"^[0-9a-fA-FxX.]+$")
READ_SIZE = 64 * 1024

type Address = ipaddress.IPv4Address | ipaddress.IPv6Address
type Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class OutboundError(Exception):
    """An exchange that could not be made or completed. ``kind`` is the class of problem:
    url, address, dns, connection, tls, timeout, too_big, redirect, header."""

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Allowed:
    """One entry of the operator's allow-list: a network (an address is a /32 or /128) or a
    host name as written in URLs, on one port or on any."""

    network: Network | None = None
    host: str | None = None
    port: int | None = None

    def covers(self, host: str, address: Address, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.host is not None:
            return self.host == host.lower().rstrip(".")
        return self.network is not None and _unwrap(address) in self.network


@dataclass(frozen=True)
class Policy:
    allow: tuple[Allowed, ...] = ()
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    max_retries: int = DEFAULT_MAX_RETRIES
    _slots: threading.BoundedSemaphore = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_response_bytes < 1 or self.max_concurrency < 1 or self.max_retries < 0:
            raise ValueError("the outbound limits must be positive")
        object.__setattr__(self, "_slots", _slots_for(self.max_concurrency))

    def allows(self, host: str, address: Address, port: int) -> bool:
        """Whether a connection to ``address`` (``host`` resolved to it) on ``port`` may be
        made: a public address, or one the operator allowed."""
        if any(entry.covers(host, address, port) for entry in self.allow):
            return True
        return is_public(address)


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect and the path to ask for."""

    scheme: str
    host: str
    port: int
    path: str

    @property
    def https(self) -> bool:
        return self.scheme == "https"


@dataclass(frozen=True)
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


# --- what may be reached -------------------------------------------------------------------


def _unwrap(address: Address) -> Address:
    """The IPv4 address inside an IPv4-mapped IPv6 address, else the address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_public(address: Address) -> bool:
    """True for a globally routable unicast address; False for loopback, private, shared,
    link-local, multicast, reserved and unspecified ones, also when wrapped in IPv6
    (IPv4-mapped, 6to4, Teredo)."""
    inner: list[Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            inner.append(address.ipv4_mapped)
        if address.sixtofour is not None:
            inner.append(address.sixtofour)
        if address.teredo is not None:
            inner.extend(address.teredo)
    return all(
        one.is_global
        and not (
            one.is_multicast
            or one.is_private
            or one.is_loopback
            or one.is_link_local
            or one.is_reserved
            or one.is_unspecified
        )
        for one in inner
    )


def parse_allow(entries: Iterable[str]) -> tuple[Allowed, ...]:
    """The operator's allow-list: ``127.0.0.1``, ``10.0.0.0/8``, ``[::1]:8000``,
    ``127.0.0.1:11434``, ``vllm.internal``, ``vllm.internal:8000``. ValueError names a bad
    entry."""
    allowed = []
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        try:
            allowed.append(_parse_entry(entry))
        except ValueError:
            raise ValueError(MESSAGES["allow_entry"].format(entry=entry)) from None
    return tuple(allowed)


def _parse_entry(entry: str) -> Allowed:
    port = None
    text = entry
    if text.startswith("["):  # [v6] or [v6]:port or [v6/len]:port
        inside, _, rest = text[1:].partition("]")
        if rest:
            if not rest.startswith(":"):
                raise ValueError(entry)
            port = _port(rest[1:])
        text = inside
    elif text.count(":") == 1:  # v4 or name with a port (a bare v6 has several colons)
        text, _, port_text = text.partition(":")
        port = _port(port_text)
    try:
        return Allowed(network=ipaddress.ip_network(text, strict=False), port=port)
    except ValueError:
        pass
    name = text.lower().rstrip(".")
    if not HOST_NAME.match(name) or _DIGITS.fullmatch(name.replace(".", "")):
        raise ValueError(entry)
    return Allowed(host=name, port=port)


def _port(text: str) -> int:
    if not _DIGITS.fullmatch(text) or not 1 <= int(text) <= 65535:
        raise ValueError(text)
    return int(text)


def check_url(url: str, *, base: bool = False) -> Target:
    """``url`` checked for the rules of the module docstring (``base``: a base URL, which
    paths are appended to, so no query or fragment); OutboundError(kind "url") if unfit."""
    if UNSAFE.search(url):
        raise OutboundError("url", MESSAGES["characters"])
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise OutboundError("url", MESSAGES["scheme"])
    if "@" in parts.netloc:
        raise OutboundError("url", MESSAGES["credentials"])
    if not parts.hostname:
        raise OutboundError("url", MESSAGES["no_host"])
    if base and (parts.query or parts.fragment or url.rstrip().endswith(("?", "#"))):
        raise OutboundError("url", MESSAGES["query"])
    try:
        port = parts.port
    except ValueError:
        raise OutboundError("url", MESSAGES["port"]) from None
    if port == 0:
        raise OutboundError("url", MESSAGES["port"])
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    return Target(
        scheme=parts.scheme,
        host=parts.hostname,
        port=port or (443 if parts.scheme == "https" else 80),
        path=path,
    )


def check_reachable_literal(target: Target, policy: Policy) -> None:
    """Early feedback for a host written as an address (``http://10.0.0.1/``): refused now
    rather than at the first request. A name is only judged when it is resolved, at each
    connection."""
    address = literal_address(target.host)
    if address is not None and not policy.allows(target.host, address, target.port):
        raise OutboundError("address", MESSAGES["address"])


def literal_address(host: str) -> Address | None:
    """The address a host written as one stands for, in the forms the C resolver accepts too
    (``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``); None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if NUMERIC_HOST.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


# --- connecting ----------------------------------------------------------------------------


def _guarded_connect(host: str, port: int, timeout: float, policy: Policy) -> socket.socket:
    """``socket.create_connection``, but to the resolved addresses the policy allows only,
    each checked before its socket connects."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise OutboundError("dns", MESSAGES["dns"]) from None
    allowed = []
    for family, kind, proto, _, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0].split("%")[0])
        if policy.allows(host, address, port):
            allowed.append((family, kind, proto, sockaddr))
    if not allowed:
        raise OutboundError("address", MESSAGES["address"])
    for family, kind, proto, sockaddr in allowed:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(sockaddr)
            return sock
        except TimeoutError:
            sock.close()
            raise
        except OSError:
            sock.close()
    raise OutboundError("connection", MESSAGES["connection"])


class _Guarded:
    """Makes http.client's connection (and so its TLS wrapping) use _guarded_connect."""

    def __init__(self, *args, policy: Policy, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.policy = policy
        self._create_connection = self._connect_checked

    def _connect_checked(self, address, timeout, source_address=None):
        host, port = address
        return _guarded_connect(host, port, timeout, self.policy)


class GuardedHTTPConnection(_Guarded, http.client.HTTPConnection):
    pass


class GuardedHTTPSConnection(_Guarded, http.client.HTTPSConnection):
    pass


def connect(target: Target, policy: Policy, *, timeout: float) -> http.client.HTTPConnection:
    """A (not yet opened) connection to ``target`` under ``policy``; it connects on the first
    request, and again after a drop."""
    if target.https:
        return GuardedHTTPSConnection(
            target.host,
            target.port,
            timeout=timeout,
            context=ssl.create_default_context(),
            policy=policy,
        )
    return GuardedHTTPConnection(target.host, target.port, timeout=timeout, policy=policy)


# --- one exchange --------------------------------------------------------------------------


_slot_lock = threading.Lock()
_slot_table: dict[int, threading.BoundedSemaphore] = {}


def _slots_for(size: int) -> threading.BoundedSemaphore:
    """One semaphore per limit, shared by every policy with that limit in this process."""
    with _slot_lock:
        return _slot_table.setdefault(size, threading.BoundedSemaphore(size))


def exchange(
    connection: http.client.HTTPConnection,
    method: str,
    path: str,
    *,
    body: bytes | None,
    headers: dict[str, str],
    policy: Policy,
    timeout: float,
) -> Answer:
    """One request and its whole answer within ``timeout`` seconds (connect, send, wait and
    read together). OutboundError for everything but an HTTP status; the caller decides what
    a status means. On an error the connection is closed (the next request reconnects)."""
    for name, value in headers.items():
        if not HEADER_VALUE.match(value):
            raise OutboundError("header", MESSAGES["header"].format(name=name))
    deadline = time.monotonic() + timeout
    if not policy._slots.acquire(timeout=timeout):
        raise OutboundError("timeout", MESSAGES["timeout"].format(timeout=timeout))
    expired = threading.Event()

    def expire() -> None:
        # A server that sends a byte just before each socket timeout would hold the
        # exchange for ever: at the deadline the socket is shut, which ends any read.
        expired.set()
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
    timer.daemon = True
    timer.start()
    try:
        connection.timeout = timeout
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = _read_capped(response, policy.max_response_bytes)
        if expired.is_set():
            raise TimeoutError
    except OutboundError:
        connection.close()
        raise
    except TimeoutError:
        connection.close()
        raise OutboundError("timeout", MESSAGES["timeout"].format(timeout=timeout)) from None
    except ssl.SSLCertVerificationError:
        connection.close()
        raise OutboundError("tls", MESSAGES["tls"]) from None
    except (http.client.HTTPException, OSError, ValueError):
        connection.close()
        if expired.is_set():
            raise OutboundError("timeout", MESSAGES["timeout"].format(timeout=timeout)) from None
        raise OutboundError("connection", MESSAGES["connection"]) from None
    finally:
        timer.cancel()
        policy._slots.release()
    if response.will_close:
        connection.close()
    if 300 <= response.status < 400 and response.status != 304:
        raise OutboundError(
            "redirect", MESSAGES["redirect"].format(status=response.status), status=response.status
        )
    return Answer(status=response.status, headers=response.headers, body=data)


def _read_capped(response: http.client.HTTPResponse, limit: int) -> bytes:
    # A length that is not ASCII digits ("²" passes str.isdigit() but not int()) is not read:
    # the cap below still holds while the body is read.
    declared = (response.getheader("Content-Length") or "").strip()
    if _DIGITS.fullmatch(declared) and int(declared) > limit:
        raise OutboundError("too_big", MESSAGES["too_big"].format(limit=limit))
    chunks = []
    total = 0
    while True:
        chunk = response.read(min(READ_SIZE, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise OutboundError("too_big", MESSAGES["too_big"].format(limit=limit))
    # http.client returns a short body without complaint when the server closes early:
    # what is left of the declared length tells a cut-off answer from a whole one.
    if response.length:
        raise http.client.IncompleteRead(b"".join(chunks), response.length)
    return b"".join(chunks)


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


def policy_from_settings(settings) -> Policy:
    """The configured policy (config/settings.py: OUTBOUND_*)."""
    return Policy(
        allow=settings.OUTBOUND_ALLOW,
        max_response_bytes=settings.OUTBOUND_MAX_RESPONSE_BYTES,
        max_concurrency=settings.OUTBOUND_MAX_CONCURRENCY,
        max_retries=settings.OUTBOUND_MAX_RETRIES,
    )
