"""Slow clients do not stop the site (issue 27, finding 6), against gunicorn started as
production starts it (config/gunicorn.conf.py).

Four clients that have sent half a request's head hold connections, and a normal request is
answered while all four still hold theirs; then the same with four that have sent half a
body. With gunicorn's sync workers (the Dockerfile's command before) each slow client took a
whole worker and the normal request was never answered. Each slow client is then cut off
by its deadline (config/gunicorn_worker.py): a late head gets 408 from gunicorn, a late body
400 from the app."""

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


def hold_and_serve(port: int, start: bytes) -> list[socket.socket]:
    """Four slow clients start a request each; a normal request is answered while all four
    still hold their connections. Returns the four."""
    slow = [slow_client(port, start) for _ in range(SLOW)]
    status, _headers, page = send(port, "GET", "/accounts/login/")

    assert status == 200, page[:300]
    held = [still_held(client) for client in slow]
    assert all(held), f"slow clients cut off before the normal request was answered: {held}"
    return slow


def test_a_normal_request_is_answered_while_slow_clients_hold_connections(gunicorn):
    heads = hold_and_serve(gunicorn, HEAD_START)
    try:
        for client in heads:  # then each is cut off by its deadline
            assert answer_to(client).startswith(b"HTTP/1.1 408 Request Timeout")
    finally:
        for client in heads:
            client.close()

    # Slow bodies, after the heads: together, eight could all land in one worker and fill
    # its eight threads, which is what the deadlines bound, not what this test measures.
    bodies = hold_and_serve(gunicorn, BODY_START)
    try:
        for client in bodies:
            assert answer_to(client).startswith(b"HTTP/1.1 400 Bad Request")
    finally:
        for client in bodies:
            client.close()
