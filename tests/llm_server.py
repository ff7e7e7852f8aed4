"""A real chat-completions server on loopback for the machine-judge tests: it speaks the
OpenAI protocol (POST /v1/chat/completions with a Bearer key) over HTTP/1.1 keep-alive and
answers from a script, so the client and the runner are tested against real sockets, real
status codes, real timeouts and real dropped connections. Nothing here imports Django.

    with ChatServer(key="sk-test") as server:
        server.plan("D17", Status(429, retry_after="1"), Reply("Grade: 2"))
        ... ChatEndpoint(base_url=server.base_url, model="m", api_key="sk-test") ...

Each request is answered by the next planned action of the first marker found in its
messages (a docno, a query), or else by ``server.default(request)``, which by default grades
deterministically from the text (the same passage always gets the same grade).
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEY = "sk-loopback-test-key-0123456789"


@dataclass(frozen=True)
class Reply:
    """A 200 with a completion whose message content is ``text``."""

    text: str | None
    prompt_tokens: int | None = 120
    completion_tokens: int | None = 3
    delay: float = 0.0  # seconds before answering (a slow model)


@dataclass(frozen=True)
class Status:
    """An HTTP error with an OpenAI-style error body."""

    code: int
    retry_after: str | None = None
    message: str = "scripted failure"


@dataclass(frozen=True)
class Raw:
    """A 200 whose body is ``body`` as it is (not JSON, not a completion)."""

    body: str | bytes
    content_type: str = "application/json"


@dataclass(frozen=True)
class Drop:
    """Read the request, then close the connection without a word."""


@dataclass(frozen=True)
class Stall:
    """Read the request and answer nothing for ``seconds`` (beyond the client's timeout),
    then a good answer nobody waits for any more."""

    seconds: float


@dataclass(frozen=True)
class Truncated:
    """A 200 that promises ``declared`` bytes (Content-Length), sends ``sent`` of a
    completion, then closes the connection: an answer cut off mid-way."""

    declared: int = 400
    sent: int = 40


@dataclass(frozen=True)
class Drip:
    """A 200 whose body (a good completion padded to ``size`` bytes) comes one byte every
    ``every`` seconds, for at most ``seconds``, then the connection closes: a server that
    never lets a socket timeout fire."""

    every: float = 0.05
    seconds: float = 5.0
    size: int = 10_000


@dataclass(frozen=True)
class Redirect:
    """A redirect to ``location`` (another host, an internal address)."""

    location: str
    code: int = 307


Action = Reply | Status | Raw | Drop | Stall | Truncated | Drip | Redirect


def hashed_grade(text: str, grades: int = 4) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % grades


def default_grade(request: dict) -> Action:
    """A grade drawn from the user message's passage, the same for the same passage."""
    user = next((m["content"] for m in request["messages"] if m.get("role") == "user"), "")
    return Reply(f"Grade: {hashed_grade(user)}")


WORD = re.compile(r"[a-z0-9]+")
QUERY_LINE = re.compile(r"^Query: (.*)$", re.MULTILINE)
PASSAGE = re.compile(r"^Passage:\n(.*?)\n\nGrade the passage", re.MULTILINE | re.DOTALL)


def lexical_overlap(query: str, passage: str) -> float:
    """The share of the query's distinct words (runs of lowercase letters and digits) that
    occur in the passage; 0 for a query without words."""
    words = set(WORD.findall(query.lower()))
    if not words:
        return 0.0
    return len(words & set(WORD.findall(passage.lower()))) / len(words)


def lexical_grade(request: dict) -> Action:
    """A stated rule instead of a model, for figures that mean something: it reads the query
    and the passage from the default prompt (the lines ``Query: …`` and ``Passage:`` up to the
    scale) and grades their lexical overlap on 0-3: no query word in the passage 0, fewer
    than half 1, half or more 2, all 3. It sees nothing else (no human's grade). A prompt
    it cannot read is answered in prose, which the runner records as a failure."""
    user = next((m["content"] for m in request["messages"] if m.get("role") == "user"), "")
    query, passage = QUERY_LINE.search(user), PASSAGE.search(user)
    if query is None or passage is None:
        return Reply("I cannot find the query and the passage in this prompt.")
    share = lexical_overlap(query.group(1), passage.group(1))
    grade = 0 if share == 0 else 1 if share < 0.5 else 2 if share < 1 else 3
    return Reply(f"Grade: {grade}")


EVIDENCE = re.compile(r"\bevidence\b")


def _query_and_passage(request: dict) -> tuple[str, str] | None:
    user = next((m["content"] for m in request["messages"] if m.get("role") == "user"), "")
    query, passage = QUERY_LINE.search(user), PASSAGE.search(user)
    if query is None or passage is None:
        return None
    return query.group(1), passage.group(1)


def honest_grade(request: dict) -> Action:
    """A stated rule that reads what the passage says, not how: its grade is how many times
    it says the word "evidence" (at most 3). Query words stuffed in, an instruction to call it
    relevant and shuffled sentences change nothing (the gullibility gate's probes pass)."""
    found = _query_and_passage(request)
    if found is None:
        return Reply("I cannot find the query and the passage in this prompt.")
    return Reply(f"Grade: {min(3, len(EVIDENCE.findall(found[1].lower())))}")


def gullible_grade(request: dict) -> Action:
    """The honest rule, except that a passage holding every word of the query is called
    highly relevant (3): the keyword stuffing the gullibility gate probes for."""
    found = _query_and_passage(request)
    if found is None:
        return Reply("I cannot find the query and the passage in this prompt.")
    if lexical_overlap(*found) == 1.0:
        return Reply("Grade: 3")
    return honest_grade(request)


ANSWERS = {
    "hash": default_grade,
    "lexical": lexical_grade,
    "honest": honest_grade,
    "gullible": gullible_grade,
}


def _completion(text: str) -> dict:
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "model": "loopback",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }


class ChatServer:
    def __init__(
        self,
        *,
        key: str | None = KEY,
        default: Callable[[dict], Action] = default_grade,
        latency: float = 0.0,
    ):
        self.key = key
        self.default = default
        self.latency = latency  # seconds added to every good answer (a model's think time)
        self.plans: dict[str, deque[Action]] = {}
        self.requests: list[dict] = []
        self.auth_seen: list[str] = []
        self.answered: dict[str, int] = defaultdict(int)
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        self._stalls = threading.Event()  # set on exit: stalled handlers stop waiting
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                """``/stats``: what the server has seen (for a benchmark in another process)."""
                if self.path != "/stats":
                    return self._json(404, {"error": {"message": f"no route {self.path}"}})
                with server._lock:
                    stats = {
                        "requests": len(server.requests),
                        "answered": dict(server.answered),
                        "most_in_flight": server.most_in_flight,
                    }
                    server.most_in_flight = server.in_flight  # each read starts a new window
                self._json(200, stats)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._json(404, {"error": {"message": f"no route {self.path}"}})
                auth = self.headers.get("Authorization", "")
                with server._lock:
                    server.auth_seen.append(auth)
                if server.key is not None and auth != f"Bearer {server.key}":
                    # Real servers echo a prefix of the key they refused: so do we.
                    shown = auth.removeprefix("Bearer ")
                    return self._json(
                        401, {"error": {"message": f"Incorrect API key provided: {shown}"}}
                    )
                try:
                    request = json.loads(body)
                except ValueError:
                    return self._json(400, {"error": {"message": "body is not JSON"}})
                with server._lock:
                    server.requests.append(request)
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                try:
                    self._answer(server.next_action(request), request)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, action: Action, request: dict) -> None:
                kind = type(action).__name__
                with server._lock:
                    server.answered[kind] += 1
                if isinstance(action, Drop):
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(action, Stall):
                    server._stalls.wait(action.seconds)
                    action = Reply("Grade: 0")
                if isinstance(action, Status):
                    headers = {"Retry-After": action.retry_after} if action.retry_after else {}
                    error = {"message": action.message, "type": "scripted", "code": action.code}
                    return self._json(action.code, {"error": error}, headers)
                if isinstance(action, Raw):
                    body = action.body if isinstance(action.body, bytes) else action.body.encode()
                    return self._send(200, body, action.content_type)
                if isinstance(action, Redirect):
                    return self._send(action.code, b"", "text/plain", {"Location": action.location})
                if isinstance(action, Truncated):
                    self.close_connection = True
                    body = json.dumps(_completion("Grade: 3")).encode().ljust(action.declared)
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(action.declared))
                    self.end_headers()
                    self.wfile.write(body[: action.sent])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(action, Drip):
                    self.close_connection = True
                    body = json.dumps(_completion("Grade: 3")).encode().ljust(action.size)
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(action.size))
                    self.end_headers()
                    ends = time.monotonic() + action.seconds
                    try:
                        for byte in body:
                            if time.monotonic() > ends:
                                break
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(action.every)
                    except OSError:  # the client gave up
                        pass
                    return
                delay = action.delay + server.latency
                if delay:
                    time.sleep(delay)
                usage = {}
                if action.prompt_tokens is not None:
                    usage["prompt_tokens"] = action.prompt_tokens
                if action.completion_tokens is not None:
                    usage["completion_tokens"] = action.completion_tokens
                answer = {
                    "id": "chatcmpl-loopback",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": request.get("model", ""),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": action.text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
                self._json(200, answer)

            def _json(self, code: int, data: dict, headers: dict | None = None) -> None:
                self._send(code, json.dumps(data).encode(), "application/json", headers)

            def _send(self, code, body: bytes, content_type: str, headers=None) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (timed out) meanwhile
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def plan(self, marker: str, *actions: Action) -> None:
        """Answer the next requests that mention ``marker`` with ``actions``, in order; when
        they run out, the default answers."""
        with self._lock:
            self.plans.setdefault(marker, deque()).extend(actions)

    def next_action(self, request: dict) -> Action:
        text = "\n".join(str(m.get("content", "")) for m in request.get("messages", []))
        with self._lock:
            for marker, actions in self.plans.items():
                if actions and marker in text:
                    return actions.popleft()
        return self.default(request)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stalls.set()
        self.server.shutdown()
        self.server.server_close()
