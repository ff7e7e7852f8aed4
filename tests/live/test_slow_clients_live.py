"""Slow clients do not stop the site (issue 27, finding 6), against gunicorn started as
production starts it (config/gunicorn.conf.py).

Four clients that send a request's head a line at a time and four that send a body a byte at
a time hold connections; a normal request is answered meanwhile, while all eight still hold
theirs. With gunicorn's sync workers (the Dockerfile's command before) each slow client took
a whole worker and the normal request was never answered. Then each slow client is cut
off by its deadline (config/gunicorn_worker.py): a late head gets 408 from gunicorn, a late
body 400 from the app."""

import socket

import pytest

from tests.faults.conftest import output, stop
from tests.live.servers import send, start_gunicorn

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

SLOW = 4
HEAD_START = b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n"
BODY_START = (
    b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n"
    b'--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n'
)


@pytest.fixture
def gunicorn(settings, tmp_path, media_root):
    process, port = start_gunicorn(settings, tmp_path)
    yield port
    stop(process)
    gunicorn.log = output(process)


def slow_client(port: int, start: bytes) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=60)
    client.sendall(start)
    return client


def still_held(client: socket.socket) -> bool:
    """Open, and not answered: the server is still waiting for the rest of the request."""
    try:
        return client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True


def answer_to(client: socket.socket) -> bytes:
    """What the server sends before it closes the connection."""
    received = b""
    while chunk := client.recv(65536):
        received += chunk
    return received


def test_a_normal_request_is_answered_while_slow_clients_hold_connections(gunicorn):
    heads = [slow_client(gunicorn, HEAD_START) for _ in range(SLOW)]
    bodies = [slow_client(gunicorn, BODY_START) for _ in range(SLOW)]
    for client in heads:  # a second header line each: the server is reading these heads
        client.sendall(b"X-Slower: 1\r\n")
    try:
        status, _headers, page = send(gunicorn, "GET", "/accounts/login/")

        assert status == 200, page[:300]
        held = [still_held(client) for client in heads + bodies]
        assert all(held), f"slow clients cut off before the normal request was answered: {held}"

        # Then every slow client is cut off by its deadline, with a status saying why.
        for client in heads:
            assert answer_to(client).startswith(b"HTTP/1.1 408 Request Timeout")
        for client in bodies:
            assert answer_to(client).startswith(b"HTTP/1.1 400 Bad Request")
    finally:
        for client in heads + bodies:
            client.close()
