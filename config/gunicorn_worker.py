"""gunicorn's threaded worker with deadlines on reading a request, so that slow clients
cannot hold its threads (issue 27, finding 6). config/gunicorn.conf.py names it.

A thread of gunicorn's ``gthread`` worker takes a connection once its first bytes arrive
and then reads the request head and body with plain blocking reads: a client that sends a
header line every few seconds, or a body a byte at a time, keeps that thread for as long
as it likes. Here every read of a request has a deadline:

- the head (request line and headers) must be complete ``HEADER_TIMEOUT`` seconds after
  its first read; a client that is late gets ``408 Request Timeout`` and the connection
  closes;
- the body must keep coming: no read waits longer than ``BODY_IDLE_TIMEOUT``, and after the
  first ``BODY_GRACE`` seconds it must have arrived at ``MIN_BODY_RATE`` bytes a second on
  average. A body that falls behind ends the request with ``SlowRequest``, a Django
  ``BadRequest``, so the page or the API answers 400 (the client is too slow to read it
  anyway) and the connection closes.

A connection that sends nothing at all waits in gunicorn's poller, holding no thread
(gunicorn does that itself after 5 seconds). So each slow client holds a thread for
seconds, not minutes; the worker's other threads keep serving everyone else. In front of
the web nodes, nginx with request buffering (deploy/nginx.conf) takes slow clients off
gunicorn entirely.

A connection that ends is closed by the thread that served it, not by gunicorn's main loop,
which would wait up to 2 s there for the client to close its end, serving nobody meanwhile.

Writing the response is left as gunicorn does it (blocking, no deadline).

The hooks used are gunicorn 27's (``TConn``, ``ThreadWorker.accept``, ``handle``,
``handle_request``, ``handle_error``, ``_DEFER``); tests/config/test_gunicorn.py and tests/live/ check
them against the pinned version."""

import errno
import time

from django.core.exceptions import BadRequest
from gunicorn import util
from gunicorn.http.parser import RequestParser
from gunicorn.http.unreader import SocketUnreader
from gunicorn.workers import gthread

HEADER_TIMEOUT = 10.0
BODY_IDLE_TIMEOUT = 30.0
BODY_GRACE = 10.0
MIN_BODY_RATE = 1024  # bytes a second, on average over the body so far


class SlowRequest(BadRequest):
    """The client did not send its request's head or body in time."""


class _Reading:
    """What one connection's current request has read, and by when it must read more."""

    def __init__(self):
        self.head()

    def head(self):
        self.in_body = False
        self.deadline = None  # set by the first read of the head
        self.body_started = None
        self.body_bytes = 0
        self.limit = ""  # the limit the last wait was bounded by, in words

    def body(self):
        self.in_body = True
        self.body_started = time.monotonic()

    def timeout(self) -> float:
        """Seconds the next read may wait; raises ``SlowRequest`` when none are left."""
        now = time.monotonic()
        if not self.in_body:
            if self.deadline is None:
                self.deadline = now + HEADER_TIMEOUT
            left = self.deadline - now
            self.limit = f"the request's head took longer than {HEADER_TIMEOUT:g} s"
        else:
            # The body may fall behind MIN_BODY_RATE by the grace it has had so far.
            due = self.body_started + max(BODY_GRACE, self.body_bytes / MIN_BODY_RATE)
            left = due - now
            self.limit = f"the request's body came slower than {MIN_BODY_RATE} bytes a second"
            if left > BODY_IDLE_TIMEOUT:
                left = BODY_IDLE_TIMEOUT
                self.limit = f"the request's body stopped for {BODY_IDLE_TIMEOUT:g} s"
        if left <= 0:
            raise SlowRequest(self.limit)
        return left


class DeadlineUnreader(SocketUnreader):
    """gunicorn's socket reader, each read bounded by the connection's ``_Reading``."""

    def __init__(self, sock, reading: _Reading):
        super().__init__(sock)
        self.reading = reading

    def chunk(self, size_hint=None):
        if self.sock.gettimeout() is not None:
            # gunicorn bounds this read itself (draining a body the application left
            # unread before the connection is reused) and handles its timeout.
            return super().chunk(size_hint)
        self.sock.settimeout(self.reading.timeout())
        try:
            data = super().chunk(size_hint)
        except TimeoutError:
            raise SlowRequest(self.reading.limit) from None
        finally:
            self.sock.settimeout(None)
        if self.reading.in_body:
            self.reading.body_bytes += len(data)
        return data


class DeadlineConn(gthread.TConn):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reading = _Reading()
        self.closed = False

    def close(self, graceful=False):
        # Closed once: by the worker thread that served it (see DeadlineThreadWorker.handle),
        # and then again, as a no-op, by gunicorn's main loop.
        if not self.closed:
            self.closed = True
            super().close(graceful)

    def init(self):
        fresh = self.parser is None
        super().init()
        if fresh and type(self.parser) is RequestParser:
            # Same reader, bounded; keeps whatever the HTTP/2 check already read back.
            plain = self.parser.unreader
            self.parser.unreader = DeadlineUnreader(plain.sock, self.reading)
            self.parser.unreader.buf = plain.buf


class DeadlineThreadWorker(gthread.ThreadWorker):
    """``gthread`` with deadlines on reading each request (see the module's docstring)."""

    def accept(self, listener):
        # gunicorn's own, with the connection class that carries the deadlines.
        try:
            client_sock, client_addr = listener.accept()
            self.nr_conns += 1
            client_sock.setblocking(True)
            conn = DeadlineConn(self.cfg, client_sock, client_addr, listener.getsockname())
            self.enqueue_req(conn)
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise

    def handle(self, conn):
        conn.reading.head()  # a new request on this connection: its head's deadline
        keep = super().handle(conn)
        if keep is not gthread._DEFER and not keep:
            # Close here, in this thread. gunicorn's main loop would do it itself, lingering
            # up to 2 s for the client to close its side first (RFC 9112, 9.6), and
            # meanwhile accept and dispatch nothing: a client that keeps its end open
            # (as every slow client that was cut off does) would stall the whole worker.
            conn.close(graceful=True)
        return keep

    def handle_request(self, req, conn):
        conn.reading.body()  # the head is read; from here on, the body's
        return super().handle_request(req, conn)

    def handle_error(self, req, client, addr, exc):
        if not isinstance(exc, SlowRequest):
            return super().handle_error(req, client, addr, exc)
        # A late head: no request reached the application. Say so briefly and close.
        self.log.warning("Slow request from ip=%s: %s", (addr or ("",))[0], exc)
        try:
            util.write_error(client, 408, "Request Timeout", str(exc))
        except Exception:
            self.log.debug("Failed to send the 408.")
