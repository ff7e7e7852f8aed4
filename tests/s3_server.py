"""A real S3-protocol server on loopback for the object-storage tests, and a proxy in front of
it that can drop uploads on demand (a store that fails in the middle of an upload).

moto's standalone server (`python -m moto.server`, a dev dependency) speaks the S3 protocol
over HTTP; boto3 talks to it exactly as to AWS or MinIO. Nothing here imports Django.
"""

from __future__ import annotations

import contextlib
import http.client
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ACCESS_KEY = "testing-access-key"
SECRET_KEY = "testing-secret-key"
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """Start moto's S3 server on a free loopback port; yields its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's S3 server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


class FlakyProxy:
    """An HTTP proxy to ``upstream`` that, while ``fail_uploads`` matches a request's path,
    reads part of a PUT body and then drops the connection without an answer, as a store or
    network failing in the middle of an upload does. Everything else is passed through."""

    def __init__(self, upstream: str):
        self.upstream = upstream.removeprefix("http://")
        self.fail_uploads: re.Pattern[str] | None = None
        self.dropped: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    raw = b""
                    while True:
                        size_line = self.rfile.readline()
                        raw += size_line
                        size = int(size_line.split(b";")[0].strip(), 16)
                        chunk = self.rfile.read(size + 2)
                        raw += chunk
                        if size == 0:
                            # trailers, up to the blank line
                            while chunk not in (b"\r\n", b""):
                                chunk = self.rfile.readline()
                                raw += chunk
                            return raw
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _forward(self) -> None:
                pattern = proxy.fail_uploads
                if self.command == "PUT" and pattern is not None and pattern.search(self.path):
                    length = int(self.headers.get("Content-Length") or 0)
                    self.rfile.read(min(length, 16))  # the upload has started...
                    proxy.dropped.append(self.path)
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)  # ...and the line goes dead
                    return
                body = self._body()
                upstream = http.client.HTTPConnection(proxy.upstream, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "expect"}
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status, answer.reason)
                for key, value in answer.getheaders():
                    if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                upstream.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> FlakyProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def create_bucket(endpoint: str, bucket: str) -> None:
    import boto3

    boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name=REGION,
    ).create_bucket(Bucket=bucket)


def list_keys(endpoint: str, bucket: str) -> list[str]:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name=REGION,
    )
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        keys.extend(item["Key"] for item in page.get("Contents", []))
    return sorted(keys)
