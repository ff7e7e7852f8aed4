"""Loopback search engines for the search-endpoint tests: real sockets answering in the
shapes each engine's documentation shows (Elasticsearch's ``_search``, Solr's ``select``
with ``wt=json``, Vespa's ``/search/``, and a plain JSON API), scoring a small corpus by term
overlap, with scripted faults. Nothing here imports Django.

    with EngineServer("elasticsearch") as server:
        server.plan("storm", Status(503), Slow(5))   # the next two queries holding "storm"
        url = server.url  # http://127.0.0.1:PORT/docs/_search
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CORPUS = {
    "d1": ("Heat pumps", "A heat pump moves heat from outside air into a house."),
    "d2": ("Sourdough", "A sourdough starter is flour and water left to ferment."),
    "d3": ("Cheap flights", "Book cheap flights early and fly midweek."),
    "d4": ("Storm drains", "Storm drains carry rain water away from streets."),
    "d5": ("Air source", "Air source heat pumps work in cold weather too."),
}
PATHS = {
    "elasticsearch": "/docs/_search",
    "solr": "/solr/docs/select",
    "vespa": "/search/",
    "http_json": "/api/search",
}
WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Status:
    code: int
    retry_after: str | None = None


@dataclass(frozen=True)
class Slow:
    seconds: float


@dataclass(frozen=True)
class Raw:
    body: bytes


@dataclass(frozen=True)
class Huge:
    size: int


@dataclass(frozen=True)
class Redirect:
    location: str
    code: int = 302


def rank(query: str, k: int) -> list[tuple[str, float]]:
    terms = {w.lower() for w in WORD.findall(query)}
    scored = []
    for docno, (title, text) in CORPUS.items():
        words = [w.lower() for w in WORD.findall(f"{title} {text}")]
        score = sum(words.count(t) for t in terms)
        if score:
            scored.append((docno, float(score) + 1 / (1 + int(docno[1:]))))
    scored.sort(key=lambda item: -item[1])
    return scored[:k]


def answer(kind: str, query: str, k: int, params: dict) -> dict:
    hits = rank(query, k)
    if kind == "elasticsearch":
        return {
            "took": 3,
            "timed_out": False,
            "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {
                "total": {"value": len(hits), "relation": "eq"},
                "max_score": hits[0][1] if hits else None,
                "hits": [
                    {
                        "_index": "docs",
                        "_id": docno,
                        "_score": score,
                        "_source": {"title": CORPUS[docno][0], "text": CORPUS[docno][1]},
                    }
                    for docno, score in hits
                ],
            },
        }
    if kind == "solr":
        return {
            "responseHeader": {"status": 0, "QTime": 1, "params": params},
            "response": {
                "numFound": len(hits),
                "start": 0,
                "maxScore": hits[0][1] if hits else 0.0,
                "numFoundExact": True,
                "docs": [
                    # Solr's text fields are often multi-valued: lists of strings.
                    {
                        "id": docno,
                        "title": [CORPUS[docno][0]],
                        "text": [CORPUS[docno][1]],
                        "score": score,
                    }
                    for docno, score in hits
                ],
            },
        }
    if kind == "vespa":
        return {
            "root": {
                "id": "toplevel",
                "relevance": 1.0,
                "fields": {"totalCount": len(hits)},
                "coverage": {
                    "coverage": 100,
                    "documents": len(CORPUS),
                    "full": True,
                    "nodes": 1,
                    "results": 1,
                    "resultsFull": 1,
                },
                "children": [
                    {
                        "id": f"id:docs:doc::{docno}",
                        "relevance": score,
                        "source": "docs",
                        "fields": {
                            "sddocname": "doc",
                            "documentid": f"id:docs:doc::{docno}",
                            "id": docno,
                            "title": CORPUS[docno][0],
                            "text": CORPUS[docno][1],
                        },
                    }
                    for docno, score in hits
                ],
            }
        }
    return {
        "results": [
            {"id": d, "title": CORPUS[d][0], "text": CORPUS[d][1], "score": s} for d, s in hits
        ]
    }


class EngineServer:
    def __init__(self, kind: str, *, key: str | None = None):
        self.kind = kind
        self.key = key
        self.plans: dict[str, deque] = {}
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self._handle(b"")

            def do_POST(self):
                self._handle(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _handle(self, body: bytes):
                parts = urlsplit(self.path)
                if parts.path != PATHS[server.kind]:
                    return self._send(404, b'{"error": "no such index"}')
                if server.key is not None and self.headers.get("Authorization") != server.key:
                    return self._send(401, b'{"error": {"type": "security_exception"}}')
                params = {n: v[0] for n, v in parse_qs(parts.query).items()}
                request = json.loads(body) if body else {}
                with server._lock:
                    server.requests.append(
                        {"params": params, "body": request, "headers": dict(self.headers)}
                    )
                query, k = server.read_query(params, request)
                action = server.next_action(query)
                if isinstance(action, Status):
                    headers = {"Retry-After": action.retry_after} if action.retry_after else {}
                    return self._send(action.code, b'{"error": "scripted"}', headers)
                if isinstance(action, Slow):
                    server._stop.wait(action.seconds)
                if isinstance(action, Raw):
                    return self._send(200, action.body)
                if isinstance(action, Huge):
                    return self._send(200, b"[" + b" " * action.size + b"]")
                if isinstance(action, Redirect):
                    return self._send(action.code, b"", {"Location": action.location})
                data = answer(server.kind, query, k, params)
                self._send(200, json.dumps(data).encode())

            def _send(self, code, body, headers=None):
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{PATHS[kind]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def read_query(self, params: dict, body: dict) -> tuple[str, int]:
        if self.kind == "elasticsearch":
            return body["query"]["multi_match"]["query"], int(body.get("size", 10))
        if self.kind == "solr":
            return params.get("q", ""), int(params.get("rows", 10))
        if self.kind == "vespa":
            return body.get("query", ""), int(body.get("hits", 10))
        return params.get("q", ""), int(params.get("n", 10))

    def plan(self, marker: str, *actions) -> None:
        with self._lock:
            self.plans.setdefault(marker, deque()).extend(actions)

    def next_action(self, query: str):
        with self._lock:
            for marker, actions in self.plans.items():
                if actions and marker in query:
                    return actions.popleft()
        return None

    def __enter__(self) -> EngineServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
        time.sleep(0)
