"""Request templates of search endpoints: JSON text with ``{{name}}`` placeholders.

    fill_template('{"query": {"match": {"text": "{{query}}"}}, "size": {{k}}}',
                  {"query": 'say "hi"', "k": 10})
    # -> {"query": {"match": {"text": 'say "hi"'}}, "size": 10}

Every template is JSON once filled: a query DSL body (Elasticsearch, OpenSearch), a Vespa
request body, a Solr or GET request's parameters (an object of names to values). A
placeholder names one of :data:`FIELDS` (the topic's fields and the depth ``k``) and nothing
else: a template cannot reach anything on the server (no attribute access, no filters, no
environment), and an unknown name is refused when the template is saved.

Values are escaped for where they land: inside a JSON string a value is inserted as the
string's escaped characters (a quote in a query stays a quote in the query, it never ends the
string), outside a string as a whole JSON value (a string gets its quotes, ``k`` is a number).
So whatever a topic holds, the filled template is the JSON its author wrote with data in the
places they chose, never new keys. No Django here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

# What a template may name: the topic's fields and the depth asked for.
FIELDS = ("query", "description", "narrative", "qid", "k")
PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*$")
MAX_TEMPLATE_CHARS = 20_000

MESSAGES = {
    "unknown": "{{{{{name}}}}} is not a field a template can use; use {fields}",
    "syntax": "{{{{{inside}}}}} is not a placeholder: write {{{{query}}}}, {{{{k}}}} and the like",
    "backslash": "a placeholder must not follow a backslash inside a string",
    "not_json": "once filled, the template is not JSON ({why})",
    "too_long": "a template is at most {limit:,} characters",
    "empty": "the template is empty",
    "not_object": "the template must be a JSON object ({{...}})",
}


class TemplateError(ValueError):
    pass


def placeholders(template: str) -> list[str]:
    """The names a template uses, in order; TemplateError for anything else in ``{{ }}``."""
    names = []
    for match in PLACEHOLDER.finditer(template):
        named = NAME.match(match.group(1))
        if named is None:
            raise TemplateError(MESSAGES["syntax"].format(inside=match.group(1)[:40]))
        name = named.group(1)
        if name not in FIELDS:
            raise TemplateError(
                MESSAGES["unknown"].format(
                    name=name[:40], fields=", ".join("{{" + f + "}}" for f in FIELDS)
                )
            )
        names.append(name)
    return names


def fill_template(template: str, values: Mapping[str, str | int]) -> dict:
    """The template with each placeholder replaced by its value, JSON-escaped for where it
    stands, parsed: always a JSON object. TemplateError when the template is unfit."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise TemplateError(MESSAGES["too_long"].format(limit=MAX_TEMPLATE_CHARS))
    if not template.strip():
        raise TemplateError(MESSAGES["empty"])
    placeholders(template)
    out: list[str] = []
    in_string = escaped = False
    position = 0
    while position < len(template):
        if template.startswith("{{", position):
            match = PLACEHOLDER.match(template, position)
            if match is not None:
                if escaped:
                    raise TemplateError(MESSAGES["backslash"])
                value = values[NAME.match(match.group(1)).group(1)]
                if in_string:
                    out.append(json.dumps(str(value))[1:-1])
                else:
                    out.append(json.dumps(value))
                position = match.end()
                continue
        char = template[position]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        out.append(char)
        position += 1
    try:
        filled = json.loads("".join(out))
    except ValueError as error:
        raise TemplateError(MESSAGES["not_json"].format(why=str(error)[:120])) from None
    if not isinstance(filled, dict):
        raise TemplateError(MESSAGES["not_object"])
    return filled


SAMPLE = {
    "query": 'a "sample" query \\ with {braces}',
    "description": "A sample description.",
    "narrative": "A sample narrative.",
    "qid": "sample-1",
    "k": 10,
}


def check_template(template: str) -> dict:
    """The template filled with sample values (a quote, a backslash and braces included),
    for checking it when it is saved; TemplateError says what is wrong."""
    return fill_template(template, SAMPLE)
