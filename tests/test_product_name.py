"""The product is called Qrelsmith (issue 15): its former name, which another relevance-judging
tool also uses, appears nowhere a user meets it: the templates (every page, its header and
footer, the error pages), the README and the OpenAPI document the API serves."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# "Relevance Studio", "relevance-studio", "relevance_studio", "RelevanceStudio", any case.
FORMER_NAME = re.compile(r"relevance[\s_-]?studio", re.IGNORECASE)
NEW_NAME = "Qrelsmith"


def places_in_text(label: str, text: str) -> list[str]:
    """``label:line: the line`` for each line of ``text`` that says the former name."""
    return [
        f"{label}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if FORMER_NAME.search(line)
    ]


def places_in_json(value, path: str = "$") -> list[str]:
    """The JSON path of each key or string in ``value`` that says the former name."""
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            where = f"{path}.{key}"
            if FORMER_NAME.search(key):
                found.append(f"{where} (the key)")
            found += places_in_json(item, where)
        return found
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in places_in_json(item, f"{path}[{i}]")]
    if isinstance(value, str) and FORMER_NAME.search(value):
        return [f"{path}: {value!r}"]
    return []


def fix_hint(places: list[str]) -> str:
    return f"the former product name is still shown; say {NEW_NAME} instead at:\n" + "\n".join(
        places
    )


def test_the_finders_see_every_spelling_of_the_former_name():
    text = "ok\n<title>Relevance Studio</title>\nrelevance-studio\nRELEVANCE_STUDIO\nrelevance judgments"
    assert places_in_text("t.html", text) == [
        "t.html:2: <title>Relevance Studio</title>",
        "t.html:3: relevance-studio",
        "t.html:4: RELEVANCE_STUDIO",
    ]
    document = {"info": {"title": "RelevanceStudio API"}, "tags": [{"relevance studio": 1}]}
    assert places_in_json(document) == [
        "$.info.title: 'RelevanceStudio API'",
        "$.tags[0].relevance studio (the key)",
    ]


def test_no_template_says_the_former_name():
    templates = sorted(p for p in (ROOT / "templates").rglob("*") if p.is_file())
    assert len(templates) > 20, "templates/ not found where expected"
    places = [
        place
        for path in templates
        for place in places_in_text(
            str(path.relative_to(ROOT)), path.read_text(encoding="utf-8", errors="replace")
        )
    ]
    assert places == [], fix_hint(places)
    assert NEW_NAME in (ROOT / "templates" / "base.html").read_text(encoding="utf-8")


def test_the_readme_does_not_say_the_former_name():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    places = places_in_text("README.md", text)
    assert places == [], fix_hint(places)
    assert text.startswith(f"# {NEW_NAME}\n")


@pytest.mark.django_db
def test_the_openapi_document_does_not_say_the_former_name(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("reader"))
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    document = json.loads(response.content)
    assert document["paths"], "the schema lists no endpoint"
    places = places_in_json(document)
    assert places == [], fix_hint(places)
    assert document["info"]["title"] == f"{NEW_NAME} API"
