"""The HTTP JSON kind against a real engine: Xapian's Omega (Debian's ``xapian-omega``, a
BM25 search CGI), indexing a few passages with ``scriptindex`` and answering through a JSON
template of its own OmegaScript, served over HTTP by a small CGI gateway on loopback.
Skipped where Omega is not installed (``apt-get install xapian-omega``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from common.outbound import Policy, parse_allow
from evaluation import search

OMEGA = Path("/usr/lib/cgi-bin/omega/omega")
pytestmark = pytest.mark.skipif(
    not OMEGA.exists() or shutil.which("scriptindex") is None,
    reason="Xapian Omega is not installed (apt-get install xapian-omega)",
)
DOCS = {
    "d1": ("Heat pumps", "A heat pump moves heat from outside air into a house."),
    "d2": ("Sourdough", 'A sourdough starter is flour and water, "fed" daily.'),
    "d3": ("Air source", "Air source heat pumps work in cold weather too."),
}
# OmegaScript: the hits as JSON, each field escaped by Omega's own $json.
TEMPLATE = (
    '$httpheader{Content-Type,application/json}{"results":[$hitlist{$if{$ne{$hit,0},$.}'
    '{"id":"$json{$field{id}}","title":"$json{$field{title}}","text":"$json{$field{text}}",'
    '"score":$weight}}]}'
)


@pytest.fixture
def omega(tmp_path):
    (tmp_path / "tmpl").mkdir()
    (tmp_path / "tmpl" / "json").write_text(TEMPLATE)
    (tmp_path / "index.script").write_text(
        "id : field=id boolean=Q unique=Q\ntitle : field=title index=S\ntext : field=text index\n"
    )
    records = "\n".join(f"id={d}\ntitle={t}\ntext={x}\n" for d, (t, x) in DOCS.items())
    (tmp_path / "docs.txt").write_text(records)
    subprocess.run(
        [
            "scriptindex",
            str(tmp_path / "default"),
            str(tmp_path / "index.script"),
            str(tmp_path / "docs.txt"),
        ],
        check=True,
        capture_output=True,
    )
    (tmp_path / "omega.conf").write_text(
        f"database_dir {tmp_path}\ntemplate_dir {tmp_path / 'tmpl'}\nlog_dir {tmp_path}\n"
    )

    class Gateway(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            env = {
                "PATH": os.environ.get("PATH", ""),
                "REQUEST_METHOD": "GET",
                "GATEWAY_INTERFACE": "CGI/1.1",
                "OMEGA_CONFIG_FILE": str(tmp_path / "omega.conf"),
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
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/cgi-bin/omega"
    server.shutdown()
    server.server_close()


def test_the_http_json_kind_reads_a_real_engines_ranking(omega):
    endpoint = search.Endpoint(
        kind="http_json",
        url=omega,
        method="GET",
        template='{"P": "{{query}}", "HITSPERPAGE": {{k}}}',
        mapping=search.Mapping(hits="results", id="id", title="title", text="text", score="score"),
    )
    client = search.SearchClient(
        endpoint, policy=Policy(allow=parse_allow(["127.0.0.1"])), timeout=10, max_retries=0
    )
    result = client.search(search.Topic("1", "heat pump"), k=10)
    hits = result.mapped.hits
    assert {hit.docno for hit in hits} == {"d1", "d3"}
    assert result.mapped.scores_from == "engine" and hits[0].score >= hits[1].score > 0
    assert hits[0].title in ("Heat pumps", "Air source")
    quoted = client.search(search.Topic("2", 'sourdough "fed"'), k=1).mapped.hits
    assert [hit.docno for hit in quoted] == ["d2"] and '"fed"' in quoted[0].text
