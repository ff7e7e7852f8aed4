"""A real search engine on loopback: Xapian's Omega (Debian's ``xapian-omega``, a BM25
search CGI) over an index ``scriptindex`` builds, answering through a JSON template of its
own OmegaScript, served over HTTP by a small CGI gateway. Used by the real-engine test
(tests/evaluation/test_search_real_engine.py) and the QPS bench (bench/search_qps.py).
Nothing here imports Django.

    if omega_installed():
        root = build_index(tmp_path, {"d1": ("Heat pumps", "A heat pump moves heat.")})
        with serve(root) as url:          # in this process (threads)
            ...
    python tests/omega_engine.py ROOT   # in a process of its own: prints its URL
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

OMEGA = Path("/usr/lib/cgi-bin/omega/omega")
NOT_INSTALLED = "Xapian Omega is not installed (apt-get install xapian-omega)"
# OmegaScript: the hits as JSON, each field escaped by Omega's own $json.
TEMPLATE = (
    '$httpheader{Content-Type,application/json}{"results":[$hitlist{$if{$ne{$hit,0},$.}'
    '{"id":"$json{$field{id}}","title":"$json{$field{title}}","text":"$json{$field{text}}",'
    '"score":$weight}}]}'
)
PATH = "/cgi-bin/omega"


def omega_installed() -> bool:
    return OMEGA.exists() and shutil.which("scriptindex") is not None


def build_index(root: Path, docs: dict[str, tuple[str, str]]) -> Path:
    """An Omega database ``default`` of ``docs`` (docno: (title, text)) under ``root``, with
    the JSON template and the configuration the gateway reads."""
    (root / "tmpl").mkdir(parents=True, exist_ok=True)
    (root / "tmpl" / "json").write_text(TEMPLATE)
    (root / "index.script").write_text(
        "id : field=id boolean=Q unique=Q\ntitle : field=title index=S\ntext : field=text index\n"
    )
    records = "\n".join(f"id={d}\ntitle={t}\ntext={x}\n" for d, (t, x) in docs.items())
    (root / "docs.txt").write_text(records)
    subprocess.run(
        ["scriptindex", str(root / "default"), str(root / "index.script"), str(root / "docs.txt")],
        check=True,
        capture_output=True,
    )
    (root / "omega.conf").write_text(
        f"database_dir {root}\ntemplate_dir {root / 'tmpl'}\nlog_dir {root}\n"
    )
    return root


def gateway(root: Path) -> ThreadingHTTPServer:
    """The CGI gateway on a free loopback port (not started): each GET runs Omega once."""

    class Gateway(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            env = {
                "PATH": os.environ.get("PATH", ""),
                "REQUEST_METHOD": "GET",
                "GATEWAY_INTERFACE": "CGI/1.1",
                "OMEGA_CONFIG_FILE": str(root / "omega.conf"),
                "QUERY_STRING": urlsplit(self.path).query + "&FMT=json&DB=default",
            }
            out = subprocess.run([str(OMEGA)], env=env, capture_output=True, timeout=10).stdout
            _, _, body = (
                out.partition(b"\r\n\r\n") if b"\r\n\r\n" in out else out.partition(b"\n\n")
            )
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    server.daemon_threads = True
    return server


@contextmanager
def serve(root: Path):
    """The gateway in this process; yields the search address."""
    server = gateway(root)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{PATH}"
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":  # the gateway in a process of its own (the bench's engine)
    server = gateway(Path(sys.argv[1]))
    print(f"http://127.0.0.1:{server.server_address[1]}{PATH}", flush=True)
    server.serve_forever()
