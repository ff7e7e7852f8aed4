"""The pure parts of single sign-on: the operator's settings, the groups-to-roles mapping and
the transport that carries the provider requests through the outbound policy."""

import http.server
import threading

import pytest
import requests

from accounts.oidc import transport
from accounts.oidc.config import read_provider
from accounts.oidc.mapping import (
    Grant,
    grants_for,
    groups_for_role,
    groups_in_claims,
    parse_group_roles,
)
from common.outbound import Policy

ROLES = ("judge", "lead", "engineer")
SETTINGS = {
    "issuer": "https://sso.example.com/realms/acme",
    "client_id": "qrelsmith",
    "client_secret": "s3cret",
    "scopes": "openid email profile",
    "groups_claim": "groups",
    "group_roles": ["relevance-leads:lead"],
    "name": "Acme SSO",
}


def test_group_roles_map_each_group_to_its_roles():
    mapping = parse_group_roles(
        ["relevance-leads:lead", " relevance-leads:judge ", "/team/judges:judge", "", "x:lead"],
        roles=ROLES,
    )
    assert mapping == {
        "relevance-leads": (Grant("lead"), Grant("judge")),
        "/team/judges": (Grant("judge"),),
        "x": (Grant("lead"),),
    }
    assert grants_for(["relevance-leads", "other"], mapping) == {Grant("lead"), Grant("judge")}
    assert grants_for([], mapping) == set()
    assert groups_for_role(mapping) == {
        "lead": ["relevance-leads", "x"],
        "judge": ["relevance-leads", "/team/judges"],
    }


def test_a_group_name_may_hold_colons_the_role_is_after_the_last():
    assert parse_group_roles(["urn:acme:leads:lead"], roles=ROLES) == {
        "urn:acme:leads": (Grant("lead"),)
    }


@pytest.mark.parametrize("entry", ["leads", "leads:", ":lead", " : "])
def test_an_entry_that_is_not_group_colon_role_is_refused(entry):
    with pytest.raises(ValueError, match="is not group:role"):
        parse_group_roles([entry], roles=ROLES)


def test_an_unknown_role_is_refused_with_the_roles_there_are():
    with pytest.raises(ValueError, match="'leader'; the roles are engineer, judge, lead"):
        parse_group_roles(["leads:leader"], roles=ROLES)
    assert parse_group_roles(["leads:leader"]) == {"leads": (Grant("leader"),)}  # shape only


def test_groups_claim_is_a_list_or_one_name():
    assert groups_in_claims({"groups": ["a", "b", "a"]}, "groups") == ["a", "b"]
    assert groups_in_claims({"hd": "example.com"}, "hd") == ["example.com"]
    assert groups_in_claims({}, "groups") == []
    assert groups_in_claims({"groups": None}, "groups") == []
    for value in (3, {"a": 1}, ["a", 2]):
        with pytest.raises(ValueError, match="neither a list of names nor one name"):
            groups_in_claims({"groups": value}, "groups")


def test_no_issuer_is_single_sign_on_off():
    assert read_provider(**{**SETTINGS, "issuer": " "}) is None


def test_the_provider_settings_are_read():
    provider = read_provider(**{**SETTINGS, "scopes": "openid  email openid"})
    assert provider.discovery_url == (
        "https://sso.example.com/realms/acme/.well-known/openid-configuration"
    )
    assert provider.scope == "openid email"
    assert "s3cret" not in repr(provider)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"issuer": "http://sso.example.com"}, "must be an https:// URL"),
        ({"issuer": "https://user:pw@sso.example.com"}, "user name or password"),
        ({"issuer": "https://sso.example.com/?tenant=1"}, "query"),
        ({"issuer": "ftp://sso.example.com"}, "http:// or https://"),
        ({"client_secret": ""}, "OIDC_CLIENT_SECRET"),
        ({"client_id": " "}, "OIDC_CLIENT_ID"),
        ({"scopes": "email profile"}, "must include openid"),
        ({"groups_claim": ""}, "OIDC_GROUPS_CLAIM"),
        ({"group_roles": ["leads"]}, "is not group:role"),
    ],
)
def test_unusable_provider_settings_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        read_provider(**{**SETTINGS, **changes})


@pytest.mark.parametrize(
    "issuer", ["http://127.0.0.1:5556", "http://localhost:8080/realms/x", "http://[::1]:9000"]
)
def test_plain_http_is_for_loopback_only(issuer):
    assert read_provider(**{**SETTINGS, "issuer": issuer}).issuer == issuer


def session_for(policy: Policy) -> requests.Session:
    session = requests.Session()
    transport.mount(session, policy)
    return session


@pytest.fixture
def redirecting_server():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = b'{"issuer": "x"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_issuers_host_and_port_are_allowed_and_nothing_else(redirecting_server):
    policy = transport.policy_for_issuer(Policy(), redirecting_server)
    session = session_for(policy)

    assert session.get(f"{redirecting_server}/.well-known").json() == {"issuer": "x"}

    other_port = redirecting_server.rsplit(":", 1)[0] + ":9"
    with pytest.raises(transport.ProviderUnreachable) as refused:
        session.get(other_port)
    assert refused.value.kind == "address"
    with pytest.raises(transport.ProviderUnreachable) as refused:
        session_for(Policy()).get(f"{redirecting_server}/.well-known")  # no issuer pass
    assert refused.value.kind == "address"


def test_a_redirect_from_the_provider_is_not_followed(redirecting_server):
    session = session_for(transport.policy_for_issuer(Policy(), redirecting_server))
    with pytest.raises(transport.ProviderUnreachable) as refused:
        session.get(f"{redirecting_server}/moved")
    assert refused.value.kind == "redirect"
