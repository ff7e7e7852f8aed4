"""The outbound policy (common/outbound.py) against real sockets on loopback: which addresses
may be reached in every spelling, the operator's allow-list, URLs that are refused, redirects,
size caps, answers cut short, servers that drip, header injection, the concurrency bound, and
error wording that cannot tell a closed port from a service that is not HTTP."""

import ipaddress
import re
import socket
import threading
import time

import pytest

from annotation.llm import ChatClient, ChatEndpoint, CompletionError
from common.outbound import (
    MESSAGES,
    OutboundError,
    Policy,
    check_url,
    connect,
    exchange,
    is_public,
    parse_allow,
)
from tests.llm_server import KEY, ChatServer, Drip, Redirect, Reply, Truncated

LOOPBACK = Policy(allow=parse_allow(["127.0.0.1"]))
MESSAGES_ = [{"role": "user", "content": "Judge D1 please"}]


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "::1",
        "::ffff:127.0.0.1",  # IPv4-mapped loopback
        "::ffff:169.254.169.254",
        "169.254.169.254",  # cloud metadata
        "fe80::1",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "100.64.0.1",  # shared address space (carrier NAT)
        "fc00::1",  # unique local
        "224.0.0.1",
        "ff02::1",
        "0.0.0.0",
        "::",
        "240.0.0.1",  # reserved
        "255.255.255.255",
        "2002:7f00:1::1",  # 6to4 around 127.0.0.1
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo around 10.0.0.1
    ],
)
def test_addresses_inside_are_not_public(address):
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_public(address):
    assert is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "localhost", "[::1]"],
)
def test_every_spelling_of_loopback_is_refused_when_connecting(host):
    """The address is judged after resolution, so decimal, hex, octal and short forms of
    127.0.0.1 and names that resolve to it are all refused, before any socket connects."""
    with ChatServer() as server:
        port = server.base_url.split(":")[2].split("/")[0]
        target = check_url(f"http://{host}:{port}/v1")
        with pytest.raises(OutboundError) as caught:
            exchange(
                connect(target, Policy(), timeout=2),
                "GET",
                "/v1",
                body=None,
                headers={},
                policy=Policy(),
                timeout=2,
            )
        assert caught.value.kind == "address"
        assert server.requests == []


def test_the_socket_connects_to_the_address_that_was_checked(monkeypatch):
    """One lookup per connection: what was checked is what is connected to (a second lookup
    could answer otherwise: DNS rebinding)."""
    lookups = []
    real = socket.getaddrinfo

    def counting(host, *args, **kwargs):
        lookups.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", counting)
    with ChatServer() as server:
        port = int(server.base_url.split(":")[2].split("/")[0])
        policy = Policy(allow=parse_allow([f"localhost:{port}"]))
        endpoint = ChatEndpoint(
            base_url=f"http://localhost:{port}/v1", model="m", api_key=KEY, policy=policy
        )
        assert ChatClient(endpoint).complete(MESSAGES_).text.startswith("Grade: ")
    assert lookups == ["localhost"]


def test_the_allow_list_opens_exactly_what_it_names():
    allowed = parse_allow(["127.0.0.1:11434", "10.0.0.0/8", "[::1]", "vllm.internal:8000"])
    policy = Policy(allow=allowed)
    loopback = ipaddress.ip_address("127.0.0.1")
    assert policy.allows("127.0.0.1", loopback, 11434)
    assert not policy.allows("127.0.0.1", loopback, 5432)  # the database's port stays shut
    assert policy.allows("x", ipaddress.ip_address("10.9.8.7"), 80)
    assert policy.allows("x", ipaddress.ip_address("::1"), 1)
    assert policy.allows("vllm.internal", ipaddress.ip_address("10.1.1.1"), 8000)
    assert not policy.allows("vllm.internal", ipaddress.ip_address("192.168.0.1"), 8001)
    assert not policy.allows("x", ipaddress.ip_address("169.254.169.254"), 80)
    assert policy.allows("x", ipaddress.ip_address("93.184.215.14"), 443)  # public


@pytest.mark.parametrize("entry", ["10.0.0.0/33", "host name", "127.0.0.1:0", "1.2.3.4:http"])
def test_a_bad_allow_list_entry_is_named(entry):
    with pytest.raises(ValueError, match=f"OUTBOUND_ALLOW: {entry!r}"):
        parse_allow([entry])


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", MESSAGES["scheme"]),
        ("gopher://host/", MESSAGES["scheme"]),
        ("http://admin:secret@api.example.com/v1", MESSAGES["credentials"]),
        ("http://@api.example.com/v1", MESSAGES["credentials"]),
        ("https://api.example.com/v1?", MESSAGES["query"]),
        ("https://api.example.com/v1#x", MESSAGES["query"]),
        ("https://api.example.com/v1\r\nX-Injected: 1", MESSAGES["characters"]),
        ("https://api.example.com:0/v1", MESSAGES["port"]),
    ],
)
def test_unfit_base_urls_are_refused_with_their_reason(url, message):
    with pytest.raises(OutboundError) as caught:
        check_url(url, base=True)
    assert caught.value.message == message


def test_a_redirect_is_not_followed():
    with ChatServer() as server:
        server.plan("D1", Redirect("http://169.254.169.254/latest/meta-data/"))
        client = ChatClient(
            ChatEndpoint(base_url=server.base_url, model="m", api_key=KEY, policy=LOOPBACK)
        )
        with pytest.raises(CompletionError) as caught:
            client.complete(MESSAGES_)
        assert caught.value.kind == "refused" and caught.value.status == 307
        assert "redirect" in str(caught.value) and "169.254" not in str(caught.value)
        assert len(server.requests) == 1


def test_an_answer_larger_than_the_cap_is_refused():
    with ChatServer() as server:
        server.plan("D1", Reply("x" * 5000))
        small = Policy(allow=LOOPBACK.allow, max_response_bytes=1000)
        client = ChatClient(
            ChatEndpoint(base_url=server.base_url, model="m", api_key=KEY, policy=small)
        )
        with pytest.raises(CompletionError) as caught:
            client.complete(MESSAGES_)
        assert caught.value.kind == "bad_response"
        assert str(caught.value) == "the answer is larger than 1,000 bytes"


def test_an_answer_cut_short_is_a_dropped_connection_and_is_tried_again():
    """Content-Length 400, 40 bytes sent, connection closed: http.client returns the 40 bytes
    without complaint; the module sees the missing 360 and the client tries again."""
    with ChatServer() as server:
        server.plan("D1", Truncated(declared=400, sent=40), Reply("Grade: 2"))
        client = ChatClient(
            ChatEndpoint(base_url=server.base_url, model="m", api_key=KEY, policy=LOOPBACK),
            sleep=lambda seconds: None,
        )
        completion = client.complete(MESSAGES_)
        assert (completion.text, completion.attempts) == ("Grade: 2", 2)


def test_a_server_that_drips_bytes_is_cut_off_at_the_timeout():
    """One byte every 50 ms never lets a socket timeout fire; the exchange's own deadline
    does. Without it the drip would end (after 5 s) in a cut-short answer, not a timeout."""
    with ChatServer() as server:
        server.plan("D1", Drip(every=0.05, seconds=5))
        client = ChatClient(
            ChatEndpoint(
                base_url=server.base_url,
                model="m",
                api_key=KEY,
                timeout=0.5,
                max_retries=0,
                policy=LOOPBACK,
            )
        )
        with pytest.raises(CompletionError) as caught:
            client.complete(MESSAGES_)
        assert caught.value.kind == "timeout"


def test_a_key_that_would_break_its_header_is_refused_and_never_shown():
    with ChatServer() as server:
        secret = "sk-secret\r\nX-Injected: yes"
        client = ChatClient(
            ChatEndpoint(base_url=server.base_url, model="m", api_key=secret, policy=LOOPBACK)
        )
        with pytest.raises(CompletionError) as caught:
            client.complete(MESSAGES_)
        assert caught.value.kind == "refused"
        assert "sk-secret" not in str(caught.value) and "sk-secret" not in repr(caught.value)
        assert server.requests == []


def test_exchanges_in_flight_never_exceed_the_process_bound():
    with ChatServer(latency=0.2) as server:
        policy = Policy(allow=LOOPBACK.allow, max_concurrency=2)
        client = ChatClient(
            ChatEndpoint(base_url=server.base_url, model="m", api_key=KEY, policy=policy)
        )
        threads = [threading.Thread(target=client.complete, args=(MESSAGES_,)) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(server.requests) == 6
        assert server.most_in_flight == 2


def _serve_once(behaviour):
    """A raw TCP service on loopback that does ``behaviour(connection)`` to each client."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def run():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                behaviour(connection)

    threading.Thread(target=run, daemon=True).start()
    return listener


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _ssh_banner(connection):
    connection.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
    time.sleep(0.05)


def _redis_error(connection):
    connection.recv(65536)
    connection.sendall(b"-ERR unknown command 'POST'\r\n")


def _reset(connection):
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def _read_request(connection) -> None:
    """The client's whole request, its head and then its Content-Length of body. Closing a
    socket whose receive buffer still holds bytes sends a reset, not the end of the answer:
    after one recv, a body that came in a second segment (a busy machine) was still there,
    and the client lost the answer to the reset (CI, 2026-11-29)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    missing = (int(length.group(1)) if length else 0) - len(body)
    while missing > 0:
        chunk = connection.recv(missing)
        if not chunk:
            return
        missing -= len(chunk)


def _odd_length(connection):
    _read_request(connection)
    connection.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + b"Content-Length: \xb2"  # "²" as http.client reads headers (latin-1)
        + b"\r\nConnection: close\r\n\r\n"
        + b'{"choices": [{"message": {"content": "Grade: 2"}}]}'
    )


def test_a_content_length_that_is_not_ascii_digits_is_not_a_crash():
    """ "²" passes str.isdigit() and fails int(): a server that sends it is read to the cap
    like one that sends no length, never an uncaught ValueError in a worker."""
    listener = _serve_once(_odd_length)
    try:
        client = ChatClient(
            ChatEndpoint(
                base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1",
                model="m",
                max_retries=0,
                timeout=10,  # a loaded machine (CI lanes) may take seconds to schedule the server
                policy=LOOPBACK,
            )
        )
        assert client.complete(MESSAGES_).text == "Grade: 2"
    finally:
        listener.close()


def test_closed_ports_and_services_that_are_not_http_read_alike():
    """A closed port, an SSH banner, a Redis error line and a reset all give one kind and one
    message: the wording cannot be used to scan ports."""
    seen = set()
    listeners = [_serve_once(b) for b in (_ssh_banner, _redis_error, _reset)]
    ports = [_closed_port(), *(listener.getsockname()[1] for listener in listeners)]
    try:
        for port in ports:
            client = ChatClient(
                ChatEndpoint(
                    base_url=f"http://127.0.0.1:{port}/v1",
                    model="m",
                    max_retries=0,
                    timeout=2,
                    policy=LOOPBACK,
                )
            )
            with pytest.raises(CompletionError) as caught:
                client.complete(MESSAGES_)
            seen.add((caught.value.kind, str(caught.value), caught.value.raw))
    finally:
        for listener in listeners:
            listener.close()
    assert seen == {("connection", MESSAGES["connection"], "")}
