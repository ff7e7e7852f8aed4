"""Search endpoints without Django: templates, mappings, requests, and the client against
loopback engines that answer as Elasticsearch, Solr and Vespa document (tests/search_servers.py),
with their faults."""

from __future__ import annotations

import json
import time

import pytest

from common.outbound import Policy, parse_allow
from evaluation import search
from evaluation.search import templates
from tests.search_servers import EngineServer, Huge, Raw, Redirect, Slow, Status

LOOPBACK = Policy(allow=parse_allow(["127.0.0.1"]), max_response_bytes=64 * 1024)


def endpoint_for(server, kind=None, **changes) -> search.Endpoint:
    kind = kind or server.kind
    start = search.DEFAULTS[kind]
    fields = {
        "kind": kind,
        "url": server.url,
        "template": start["template"],
        "mapping": start["mapping"],
        "method": start["method"],
    }
    fields.update(changes)
    return search.Endpoint(**fields)


def client(endpoint, **options) -> search.SearchClient:
    options.setdefault("timeout", 2.0)
    options.setdefault("max_retries", 0)
    return search.SearchClient(
        endpoint, policy=options.pop("policy", LOOPBACK), sleep=lambda s: None, **options
    )


# --- templates -----------------------------------------------------------------------------


def test_a_quote_in_a_query_stays_inside_its_string():
    hostile = 'x", "size": 10000, "script": {"source": "boom'
    filled = templates.fill_template(
        '{"q": "{{query}}", "size": {{k}}}', {"query": hostile, "k": 5}
    )
    assert filled == {"q": hostile, "size": 5}


def test_a_placeholder_outside_a_string_is_a_whole_json_value():
    filled = templates.fill_template('{"q": {{query}}, "n": "{{k}}"}', {"query": 'a"b', "k": 3})
    assert filled == {"q": 'a"b', "n": "3"}


@pytest.mark.parametrize(
    "template",
    [
        '{"q": "{{settings.SECRET_KEY}}"}',
        '{"q": "{{ os.environ }}"}',
        '{"q": "{{__class__}}"}',
        '{"q": "{{query|safe}}"}',
        '{"q": "{{#toJson}}query{{/toJson}}"}',
    ],
)
def test_a_template_names_only_the_topics_fields(template):
    with pytest.raises(search.TemplateError):
        search.check_template(template)


def test_a_placeholder_after_a_backslash_is_refused():
    with pytest.raises(search.TemplateError, match="backslash"):
        search.check_template('{"q": "\\\\{{query}}"}'.replace("\\\\", "\\"))


def test_a_template_must_be_a_json_object_once_filled():
    with pytest.raises(search.TemplateError, match="not JSON"):
        search.check_template('{"q": "{{query}}",}')
    with pytest.raises(search.TemplateError, match="object"):
        search.check_template('["{{query}}"]')


@pytest.mark.parametrize("kind", search.KINDS)
def test_every_kinds_starting_template_and_mapping_are_sound(kind):
    start = search.DEFAULTS[kind]
    assert search.check_template(start["template"])
    search.compile_mapping(start["mapping"])


# --- k and requests ------------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, -1, search.MAX_K + 1, 10**9, True, "10"])
def test_k_is_capped_once_for_everyone(k):
    with pytest.raises(ValueError, match=str(search.MAX_K)):
        search.check_k(k)


def test_solr_sends_its_parameters_with_a_json_writer():
    endpoint = search.Endpoint(
        kind="solr",
        url="http://x/solr/c/select",
        template=search.DEFAULTS["solr"]["template"],
        mapping=search.DEFAULTS["solr"]["mapping"],
    )
    request = search.build_request(endpoint, search.Topic("1", "a&b=c"), 7, path="/solr/c/select")
    assert request.method == "GET" and request.body is None
    assert "q=a%26b%3Dc" in request.path and "rows=7" in request.path and "wt=json" in request.path


def test_a_header_of_ones_choice_may_not_be_one_the_request_sets():
    for name in ("Host", "Content-Length", "bad name", "X\r\nInjected"):
        with pytest.raises(ValueError):
            search.check_header_name(name)
    assert search.check_header_name("X-Api-Key") == "X-Api-Key"


# --- mapping -------------------------------------------------------------------------------


def test_hits_without_scores_are_scored_by_rank_and_duplicates_dropped():
    answer = {"items": [{"id": "b"}, {"id": "a"}, {"id": "b"}, {"id": 7}]}
    mapped = search.map_hits(answer, search.Mapping(hits="items", id="id", score="s"), k=10)
    assert [(h.docno, h.score) for h in mapped.hits] == [("b", 3.0), ("a", 2.0), ("7", 1.0)]
    assert mapped.scores_from == "rank" and mapped.duplicates == 1


def test_a_hit_without_an_id_fails_the_query_rather_than_vanishing():
    with pytest.raises(search.MappingError, match="hit 2"):
        search.map_hits({"h": [{"id": "a"}, {"x": 1}]}, search.Mapping(hits="h", id="id"), k=5)
    with pytest.raises(search.MappingError, match="spaces"):
        search.map_hits({"h": [{"id": "a b"}]}, search.Mapping(hits="h", id="id"), k=5)
    with pytest.raises(search.MappingError, match="no list"):
        search.map_hits({"h": {}}, search.Mapping(hits="h", id="id"), k=5)


# --- each kind against its loopback engine -------------------------------------------------


@pytest.mark.parametrize("kind", ["elasticsearch", "solr", "vespa", "http_json"])
def test_each_kind_reads_its_engines_answer(kind):
    with EngineServer(kind) as server:
        result = client(endpoint_for(server)).search(search.Topic("1", "heat pumps"), k=3)
    hits = result.mapped.hits
    assert [h.docno for h in hits][:2] == ["d1", "d5"]
    assert result.mapped.scores_from == "engine"
    assert hits[0].title == "Heat pumps" and "heat pump" in hits[0].text
    assert len(hits) <= 3


def test_the_key_travels_in_its_header_and_never_in_what_is_kept():
    with EngineServer("elasticsearch", key="ApiKey s3cret-key") as server:
        endpoint = endpoint_for(server, auth="apikey", secret="s3cret-key")
        result = client(endpoint).search(search.Topic("1", "storm"), k=2)
        assert result.mapped.hits[0].docno == "d4"
        assert "s3cret-key" not in repr(endpoint)
        server.plan("echo", Raw(b'{"you sent": "ApiKey s3cret-key"}'))
        with pytest.raises(search.SearchError) as failed:
            client(endpoint).search(search.Topic("2", "echo"), k=2)
    assert "s3cret-key" not in failed.value.raw and "[key]" in failed.value.raw
    assert "s3cret-key" not in str(failed.value)


def test_a_server_error_and_a_rate_limit_are_tried_again():
    with EngineServer("solr") as server:
        server.plan("storm", Status(503), Status(429, retry_after="0"))
        result = client(endpoint_for(server), max_retries=2).search(search.Topic("1", "storm"), k=2)
    assert result.attempts == 3 and result.mapped.hits[0].docno == "d4"


def test_retries_stop_at_their_cap_and_say_how_many_were_made():
    with EngineServer("vespa") as server:
        server.plan("storm", Status(500), Status(502), Status(503))
        with pytest.raises(search.SearchError) as failed:
            client(endpoint_for(server), max_retries=1).search(search.Topic("1", "storm"), k=2)
    assert failed.value.kind == "server_error" and failed.value.attempts == 2
    assert "after 2 attempts" in str(failed.value)


def test_retries_are_capped_by_the_servers_policy():
    with pytest.raises(ValueError):
        search.SearchClient(
            search.Endpoint(
                kind="solr",
                url="http://127.0.0.1:1/solr/c/select",
                template="{}",
                mapping=search.Mapping(hits="h", id="id"),
            ),
            policy=Policy(allow=parse_allow(["127.0.0.1"]), max_retries=2),
            max_retries=3,
        )


def test_a_slow_engine_fails_within_the_timeout():
    with EngineServer("elasticsearch") as server:
        server.plan("storm", Slow(5))
        started = time.monotonic()
        with pytest.raises(search.SearchError) as failed:
            client(endpoint_for(server), timeout=0.5).search(search.Topic("1", "storm"), k=2)
    assert failed.value.kind == "timeout" and time.monotonic() - started < 3


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        (Raw(b"<html>oops</html>"), "not_json"),
        (Raw(b'{"hits": {"hits": "nope"}}'), "mapping"),
        (Raw(json.dumps({"timed_out": True, "hits": {"hits": []}}).encode()), "engine"),
        (Huge(200_000), "too_big"),
        (Redirect("http://elsewhere.example/docs/_search"), "redirect"),
        (Status(400), "refused"),
    ],
)
def test_faults_fail_the_query_with_their_class(action, kind):
    with EngineServer("elasticsearch") as server:
        server.plan("storm", action)
        with pytest.raises(search.SearchError) as failed:
            client(endpoint_for(server)).search(search.Topic("1", "storm"), k=2)
    assert failed.value.kind == kind
    assert "oops" not in str(failed.value)  # the message never quotes the answer


def test_vespa_errors_inside_a_200_are_a_failure_not_an_empty_list():
    body = {"root": {"id": "toplevel", "errors": [{"code": 12, "summary": "Timed out"}]}}
    with EngineServer("vespa") as server:
        server.plan("storm", Raw(json.dumps(body).encode()))
        with pytest.raises(search.SearchError) as failed:
            client(endpoint_for(server)).search(search.Topic("1", "storm"), k=2)
    assert failed.value.kind == "engine"


def test_loopback_and_private_addresses_are_refused_unless_allowed():
    with EngineServer("elasticsearch") as server:
        endpoint = endpoint_for(server)
        with pytest.raises(Exception) as refused:
            search.SearchClient(endpoint, policy=Policy(), timeout=1, max_retries=0)
        assert "OUTBOUND_ALLOW" in str(refused.value)
    for url in ("http://10.1.2.3/x/_search", "http://169.254.169.254/latest", "http://0x7f.1/x"):
        with pytest.raises(Exception, match="OUTBOUND_ALLOW"):
            search.check_endpoint_url(url, Policy())


def test_a_query_set_keeps_every_outcome_failed_ones_included():
    with EngineServer("elasticsearch") as server:
        server.plan("storm", Status(500))
        topics = [search.Topic("1", "heat"), search.Topic("2", "storm"), search.Topic("3", "zzz")]
        outcomes = search.ask_topics(client(endpoint_for(server)), topics, k=5, concurrency=2)
    assert [o.qid for o in outcomes] == ["1", "2", "3"]
    assert outcomes[1].failed and outcomes[1].status == 500
    assert not outcomes[2].failed and outcomes[2].hits == []
    text = search.run_text(outcomes, tag="live").decode().splitlines()
    assert text[0].split()[:4] == ["1", "Q0", "d1", "1"]
    assert {line.split()[0] for line in text} == {"1"}


def test_the_http_json_kind_posts_its_filled_template_as_the_body():
    endpoint = search.Endpoint(
        kind="http_json",
        url="http://x/api/search",
        method="POST",
        template='{"q": "{{query}}", "about": "{{description}}", "limit": {{k}}}',
        mapping=search.Mapping(hits="results", id="id"),
        auth="header",
        auth_header="X-Api-Key",
        secret="abc",
    )
    topic = search.Topic("7", 'a "b"', description="line\nbreak")
    request = search.build_request(endpoint, topic, 4, path="/api/search")
    assert request.method == "POST" and request.path == "/api/search"
    assert json.loads(request.body) == {"q": 'a "b"', "about": "line\nbreak", "limit": 4}
    assert request.headers["X-Api-Key"] == "abc" and "abc" not in repr(request)
