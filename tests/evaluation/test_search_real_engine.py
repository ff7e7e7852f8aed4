"""The HTTP JSON kind against a real engine: Xapian's Omega (Debian's ``xapian-omega``, a
BM25 search CGI), indexing a few passages with ``scriptindex`` and answering through a JSON
template of its own OmegaScript, served over HTTP by a small CGI gateway on loopback.
Skipped where Omega is not installed (``apt-get install xapian-omega``)."""

from __future__ import annotations

import pytest

from common.outbound import Policy, parse_allow
from evaluation import search
from tests.omega_engine import NOT_INSTALLED, build_index, omega_installed, serve

pytestmark = pytest.mark.skipif(not omega_installed(), reason=NOT_INSTALLED)
DOCS = {
    "d1": ("Heat pumps", "A heat pump moves heat from outside air into a house."),
    "d2": ("Sourdough", 'A sourdough starter is flour and water, "fed" daily.'),
    "d3": ("Air source", "Air source heat pumps work in cold weather too."),
}


@pytest.fixture
def omega(tmp_path):
    with serve(build_index(tmp_path, DOCS)) as url:
        yield url


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
