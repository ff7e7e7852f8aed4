"""The chat-completions client against a real server on loopback (tests/llm_server.py):
good answers, retries on 429/5xx/dropped connections/timeouts with the waits they ask for,
failures that are not retried, the key kept out of every message, the concurrency limit."""

import logging
import threading
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from annotation.llm import ChatClient, ChatEndpoint, CompletionError, cost_of, map_bounded
from annotation.llm.client import retry_after_seconds
from common.outbound import Policy, parse_allow
from tests.llm_server import KEY, ChatServer, Drop, Raw, Reply, Stall, Status

MESSAGES = [{"role": "user", "content": "Judge D1 please"}]
# The chat server runs on loopback, which only an operator's allow-list opens.
LOOPBACK = Policy(allow=parse_allow(["127.0.0.1"]))


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


class Waits(list):
    """Stands in for time.sleep: records the waits asked for, waits for none."""

    def __call__(self, seconds):
        self.append(seconds)


def client_for(server, waits=None, **options):
    options.setdefault("timeout", 5)
    options.setdefault("max_retries", 3)
    options.setdefault("backoff_base", 0.5)
    endpoint = ChatEndpoint(
        base_url=server.base_url, model="judge-7b", api_key=KEY, policy=LOOPBACK, **options
    )
    return ChatClient(endpoint, sleep=waits if waits is not None else Waits())


def test_a_good_answer_with_its_tokens(server):
    server.plan("D1", Reply("Grade: 2", prompt_tokens=321, completion_tokens=4))
    completion = client_for(server).complete(MESSAGES, temperature=0.0, max_tokens=16)
    assert completion.text == "Grade: 2"
    assert (completion.prompt_tokens, completion.completion_tokens) == (321, 4)
    assert completion.model == "judge-7b"
    assert completion.attempts == 1
    assert server.auth_seen == [f"Bearer {KEY}"]
    request = server.requests[0]
    assert request["model"] == "judge-7b" and request["messages"] == MESSAGES
    assert request["temperature"] == 0.0 and request["max_tokens"] == 16


def test_no_key_sends_no_authorization_header():
    with ChatServer(key=None) as server:
        endpoint = ChatEndpoint(base_url=server.base_url, model="llama3.1:8b", policy=LOOPBACK)
        assert ChatClient(endpoint).complete(MESSAGES).text.startswith("Grade: ")
        assert server.auth_seen == [""]


def test_unknown_token_counts_are_none(server):
    server.plan("D1", Reply("1", prompt_tokens=None, completion_tokens=None))
    completion = client_for(server).complete(MESSAGES)
    assert completion.prompt_tokens is None and completion.completion_tokens is None


def test_429_waits_as_long_as_retry_after_says_then_succeeds(server):
    server.plan("D1", Status(429, retry_after="7"), Reply("Grade: 3"))
    waits = Waits()
    completion = client_for(server, waits).complete(MESSAGES)
    assert completion.text == "Grade: 3" and completion.attempts == 2
    assert waits == [7.0]


def test_retry_after_is_capped_by_max_wait(server):
    server.plan("D1", Status(503, retry_after="3600"), Reply("Grade: 3"))
    waits = Waits()
    client_for(server, waits, max_wait=20).complete(MESSAGES)
    assert waits == [20]


def test_5xx_backs_off_exponentially_with_jitter(server):
    server.plan("D1", Status(500), Status(502), Status(500), Reply("Grade: 1"))
    waits = Waits()
    completion = client_for(server, waits, backoff_base=0.5, backoff_cap=1.5).complete(MESSAGES)
    assert completion.attempts == 4
    assert len(waits) == 3
    for wait, ceiling in zip(waits, [0.5, 1.0, 1.5], strict=True):  # base * 2**n, capped
        assert 0 <= wait <= ceiling


def test_5xx_that_never_ends_fails_after_the_retries(server):
    server.plan("D1", *[Status(500, message="model crashed")] * 10)
    with pytest.raises(CompletionError) as caught:
        client_for(server, max_retries=2).complete(MESSAGES)
    error = caught.value
    assert (error.kind, error.status, error.attempts) == ("server_error", 500, 3)
    # The message names the class of problem; the body is kept apart, as the raw answer.
    assert str(error) == "the endpoint failed (HTTP 500) (after 3 attempts)"
    assert "model crashed" in error.raw
    assert server.answered["Status"] == 3


def test_dropped_connection_is_tried_again(server):
    server.plan("D1", Drop(), Drop(), Reply("Grade: 0"))
    completion = client_for(server).complete(MESSAGES)
    assert completion.text == "Grade: 0"
    assert server.answered["Drop"] == 2


def test_dropped_connections_fail_as_connection_errors(server):
    server.plan("D1", *[Drop()] * 5)
    with pytest.raises(CompletionError) as caught:
        client_for(server, max_retries=1).complete(MESSAGES)
    assert caught.value.kind == "connection"
    assert str(caught.value) == "the connection failed or was dropped (after 2 attempts)"


def test_slow_answer_beyond_the_timeout_is_a_timeout_then_tried_again(server):
    server.plan("D1", Stall(30), Reply("Grade: 2"))
    completion = client_for(server, timeout=0.3).complete(MESSAGES)
    assert completion.text == "Grade: 2" and completion.attempts == 2


def test_slow_answers_fail_as_timeouts(server):
    server.plan("D1", Stall(30), Stall(30))
    with pytest.raises(CompletionError) as caught:
        client_for(server, timeout=0.2, max_retries=1).complete(MESSAGES)
    assert caught.value.kind == "timeout"
    assert str(caught.value) == "no answer within 0.2 s (after 2 attempts)"


def test_an_answer_that_is_not_json_fails_at_once_and_keeps_its_body_as_raw(server):
    server.plan("D1", Raw("<html>Bad gateway</html>", content_type="text/html"))
    with pytest.raises(CompletionError) as caught:
        client_for(server).complete(MESSAGES)
    assert caught.value.kind == "bad_response" and caught.value.attempts == 1
    assert str(caught.value) == "the endpoint's answer is not JSON"
    assert caught.value.raw == "<html>Bad gateway</html>"
    assert len(server.requests) == 1


def test_json_that_is_not_a_completion_fails_at_once(server):
    server.plan("D1", Raw('{"choices": []}'), Raw('{"error": "model not loaded"}'))
    client = client_for(server)
    with pytest.raises(CompletionError, match=r"not a chat completion \(no choices\)") as first:
        client.complete(MESSAGES)
    assert first.value.raw == '{"choices": []}'
    with pytest.raises(CompletionError, match="an error object instead of a completion") as then:
        client.complete(MESSAGES)
    assert then.value.raw == '{"error": "model not loaded"}'


def test_null_content_is_an_empty_answer_not_a_crash(server):
    server.plan("D1", Reply(None))
    assert client_for(server).complete(MESSAGES).text == ""


def test_wrong_key_is_refused_at_once_and_never_shown(server, caplog):
    secret = "sk-this-is-secret-do-not-show"
    endpoint = ChatEndpoint(
        base_url=server.base_url, model="m", api_key=secret, max_retries=3, policy=LOOPBACK
    )
    caplog.set_level(logging.DEBUG)
    with pytest.raises(CompletionError) as caught:
        ChatClient(endpoint, sleep=Waits()).complete(MESSAGES)
    error = caught.value
    assert (error.kind, error.status, error.attempts) == ("refused", 401, 1)
    # The server echoes the refused key back; the kept body hides it.
    assert str(error) == "the endpoint refused the API key (HTTP 401)"
    assert "Incorrect API key provided: [key]" in error.raw and secret not in error.raw
    assert secret not in repr(endpoint)
    assert secret not in caplog.text


def test_the_key_is_not_logged_while_retrying(server, caplog):
    server.plan("D1", Status(429, retry_after="0"), Status(500), Reply("Grade: 1"))
    caplog.set_level(logging.DEBUG)
    client_for(server).complete(MESSAGES)
    assert "trying again" in caplog.text
    assert KEY not in caplog.text


def test_the_connection_is_kept_alive_between_requests(server):
    client = client_for(server)
    for _ in range(3):
        client.complete(MESSAGES)
    assert len(client._remote.connections) == 1
    client.close()


def test_nothing_listening_is_a_connection_error():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    endpoint = ChatEndpoint(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=0, policy=LOOPBACK
    )
    with pytest.raises(CompletionError) as caught:
        ChatClient(endpoint).complete(MESSAGES)
    # A closed port reads like any dropped connection (no port scanning by error wording).
    assert caught.value.kind == "connection"
    assert str(caught.value) == "the connection failed or was dropped"


@pytest.mark.parametrize(
    ("base_url", "problem"),
    [
        ("ftp://host/v1", "must start with http:// or https://"),
        ("localhost:8080/v1", "must start with http:// or https://"),
        ("http:///v1", "names no host"),
        ("http://user:pass@api.example.com/v1", "user name or password"),
        ("https://api.example.com/v1?", "query"),
        ("https://api.example.com/v1#", "query"),
        ("https://api.example.com/v1?x=1", "query"),
        ("https://api.example.com/v 1", "spaces or control characters"),
        ("https://api.example.com:99999/v1", "port"),
        ("http://127.0.0.1:8000/v1", "does not reach"),
        ("http://[::1]:8000/v1", "does not reach"),
        ("http://169.254.169.254/latest", "does not reach"),
        ("http://10.1.2.3/v1", "does not reach"),
    ],
)
def test_bad_base_urls_are_refused(base_url, problem):
    with pytest.raises(ValueError, match=problem):
        ChatEndpoint(base_url=base_url, model="m")


def test_retry_after_forms():
    now = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    assert retry_after_seconds({"Retry-After": "12"}) == 12.0
    assert retry_after_seconds({"retry-after-ms": "250", "Retry-After": "1"}) == 0.25
    date = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds({"Retry-After": date}, now=now) == 30.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({"Retry-After": "-3"}) is None
    assert retry_after_seconds({}) is None


def test_cost_from_prices_per_million_tokens():
    assert cost_of(1000, 10, input_price=0.15, output_price=0.6) == pytest.approx(
        (1000 * 0.15 + 10 * 0.6) / 1e6
    )
    assert cost_of(1000, 10, input_price=None, output_price=0.6) is None
    assert cost_of(None, 10, input_price=0.15, output_price=0.6) is None


def test_requests_in_flight_never_exceed_the_concurrency_limit():
    with ChatServer(latency=0.05) as server:
        client = client_for(server)
        items = [[{"role": "user", "content": f"passage {i}"}] for i in range(24)]
        results = list(map_bounded(client.complete, items, concurrency=4))
    assert len(results) == 24
    assert all(r.text.startswith("Grade: ") for _, r in results)
    assert 1 <= server.most_in_flight <= 4


def test_map_bounded_yields_exceptions_with_their_item():
    def work(n):
        if n == 3:
            raise ValueError("three")
        return n * 10

    results = dict(map_bounded(work, range(6), concurrency=2))
    assert isinstance(results.pop(3), ValueError)
    assert results == {0: 0, 1: 10, 2: 20, 4: 40, 5: 50}


def test_map_bounded_starts_nothing_new_once_stopped_but_yields_what_was_in_flight():
    started = []
    lock = threading.Lock()

    def work(n):
        with lock:
            started.append(n)
        return n

    stopped = threading.Event()
    seen = []
    for item, _ in map_bounded(work, range(100), concurrency=3, stop=stopped.is_set):
        seen.append(item)
        if len(seen) == 5:
            stopped.set()
    assert len(started) <= 5 + 2 * 3  # in flight, and the round started before the yield
    assert sorted(seen) == sorted(started)
