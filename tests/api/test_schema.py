"""The API contract: an OpenAPI 3 schema that validates, interactive docs that need no
internet, personal tokens, and no server error for any id or body a client may send."""

import importlib.util
import io
import json
import re

import pytest
import yaml
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.urls import get_resolver

pytestmark = pytest.mark.django_db

SIDECAR = "drf_spectacular_sidecar"


def api_routes() -> list[str]:
    [api] = [p for p in get_resolver().url_patterns if str(p.pattern) == "api/v1/"]
    return [str(pattern.pattern) for pattern in api.url_patterns]


def test_the_schema_validates_with_no_warnings(tmp_path):
    target = tmp_path / "schema.yaml"

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))

    schema = yaml.safe_load(target.read_text())
    assert schema["openapi"].startswith("3."), schema["openapi"]
    assert schema["info"]["version"] == "1"
    assert schema["paths"], "the schema lists no endpoint"
    assert all(path.startswith("/api/v1/") for path in schema["paths"])


def test_every_route_but_the_contract_itself_is_in_the_schema(tmp_path):
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(target))
    documented = {
        re.sub(r"\{[^}]+\}", "*", path) for path in yaml.safe_load(target.read_text())["paths"]
    }

    routed = {
        "/api/v1/" + re.sub(r"<[^>]+>", "*", route)
        for route in api_routes()
        if route not in ("", "schema/", "docs/")
    }

    assert routed - documented == set(), "routes missing from the schema"


def test_a_logged_in_user_downloads_the_schema_as_json(api, make_user):
    response = api(make_user("ann", "judge")).get(
        "/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json"
    )

    assert response.status_code == 200
    assert json.loads(response.content)["info"]["title"] == "Qrelsmith API"


def test_the_schema_is_built_once_whatever_the_query_asks(api, make_user, monkeypatch):
    """Building the schema costs about a second of CPU: a user asking again, in another
    format, or with ``?lang=`` and ``?version=`` (which drf-spectacular would honour with a
    fresh build each) gets the one built first (config/api_schema.py)."""
    from drf_spectacular.generators import SchemaGenerator

    from config import api_schema

    monkeypatch.setattr(api_schema, "_schema", {})
    monkeypatch.setattr(api_schema, "_rendered", {})
    built = []
    build = SchemaGenerator.get_schema
    monkeypatch.setattr(
        SchemaGenerator, "get_schema", lambda self, **kw: built.append(1) or build(self, **kw)
    )
    client = api(make_user("reader"))
    bodies = [
        client.get("/api/v1/schema/" + query, HTTP_ACCEPT="application/json")
        for query in ("", "?lang=de", "?version=7", "?lang=zz&version=x")
    ]
    yaml_body = client.get("/api/v1/schema/")
    assert [body.status_code for body in bodies] == [200] * 4 and yaml_body.status_code == 200
    assert len({body.content for body in bodies}) == 1 and len(built) == 1
    assert yaml.safe_load(yaml_body.content) == json.loads(bodies[0].content)
    assert json.loads(bodies[0].content)["info"]["version"] == "1"


def test_the_docs_page_loads_its_start_up_script_from_the_server_not_inline(api, make_user):
    client = api(make_user("ann", "judge"))

    html = client.get("/api/v1/docs/").content.decode()

    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "an inline script needs CSP"
    [script_url] = re.findall(r'<script src="(/api/v1/docs/\?[^"]*)"', html)
    script = client.get(script_url.replace("&amp;", "&"))
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "/api/v1/schema/" in script.content.decode()


@pytest.mark.skipif(
    importlib.util.find_spec(SIDECAR) is None,
    reason=(
        "drf-spectacular-sidecar is not installed: pin drf-spectacular-sidecar==2026.10.1, add "
        "it to INSTALLED_APPS and set SWAGGER_UI_DIST and SWAGGER_UI_FAVICON_HREF to 'SIDECAR'"
    ),
)
def test_the_docs_page_needs_no_internet(api, make_user, settings):
    html = api(make_user("ann", "judge")).get("/api/v1/docs/").content.decode()

    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, "the docs page references no asset"
    static = "/" + settings.STATIC_URL.strip("/") + "/"
    for url in assets:
        assert not url.startswith(("http:", "https:", "//")), (
            f"{url} is on the internet: set SWAGGER_UI_DIST and SWAGGER_UI_FAVICON_HREF to "
            "'SIDECAR' in SPECTACULAR_SETTINGS"
        )
        if url.startswith(static):
            path = url.removeprefix(static)
            assert finders.find(path), f"{path} is not a static file: is {SIDECAR} installed?"


def test_create_token_makes_a_token_the_api_accepts(api, make_user):
    make_user("eng", "engineer")
    out = io.StringIO()

    call_command("create_token", "eng", "--name", "ci", stdout=out, stderr=io.StringIO())

    client = api()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {out.getvalue().strip()}")
    assert client.get("/api/v1/runs/").status_code == 200


def test_no_route_answers_a_server_error_to_missing_absurd_or_malformed_input(api, world):
    """What a fuzzer would try first: ids that do not exist or overflow a 64-bit integer,
    every method, and bodies of the wrong JSON type. 4xx everywhere, never 5xx; a GET of a
    missing object is a 404 (or 405 where the route takes no GET)."""
    client = api(world.users["admin"])
    bodies = ["[]", '"text"', "{}", '{"file": 5, "runs": "x", "pairs": {"a": 1}}', "{broken"]
    problems = []
    for route in api_routes():
        for value in (999_999, 2**63, 2**70):
            url = "/api/v1/" + route.replace("<int:campaign_pk>", str(world.campaign.pk))
            url = url.replace("<int:pk>", str(value))
            for method in ("get", "options", "delete", "put"):
                status = getattr(client, method)(url).status_code
                missing = method == "get" and "<int:pk>" in route and status not in (404, 405)
                if status >= 500 or missing:
                    problems.append(f"{method.upper()} {url}: {status}")
        url = "/api/v1/" + route.replace("<int:campaign_pk>", str(world.campaign.pk))
        url = url.replace("<int:pk>", str(world.assignment.pk))
        for method in ("post", "patch"):
            for body in bodies:
                status = getattr(client, method)(url, body, content_type="application/json")
                if status.status_code >= 500:
                    problems.append(f"{method.upper()} {url} {body}: {status.status_code}")
    assert problems == []
