"""A real HTTP receiver on loopback for the alert webhook's tests: it records each delivery
(headers and exact body) and answers by a script (a status, or a pause longer than the
sender's timeout). Nothing here imports Django.

    with WebhookReceiver() as receiver:
        receiver.plan(500, 503)          # the next two deliveries fail, then 204s
        url = receiver.url               # http://127.0.0.1:PORT/hooks/qrelsmith
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict
    body: bytes


@dataclass(frozen=True)
class Pause:
    seconds: float


class WebhookReceiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._plan: deque = deque()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.received.append(Received(self.path, dict(self.headers), body))
                    action = receiver._plan.popleft() if receiver._plan else 204
                if isinstance(action, Pause):
                    time.sleep(action.seconds)
                    action = 204
                self.send_response(action)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/qrelsmith"

    def plan(self, *actions) -> None:
        with self._lock:
            self._plan.extend(actions)

    def __enter__(self) -> WebhookReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
