"""Prompt templates for machine judges: what an LLM assessor is asked, and in which words.

The default template follows the published LLM-assessor prompts in spirit (Thomas, Spielman,
Craswell and Mitra, "Large language models can accurately predict searcher preferences",
2023; Upadhyay et al., "UMBRELA: UMbrela is the (Open-Source Reproduction of the) Bing
RELevance Assessor", 2024): the assessor is told its role, reads the topic (query,
description, narrative) and the passage, gets the campaign's scale with each grade's
definition, is asked to weigh the passage's intent match and trustworthiness, and gives one
grade on a line of its own. Its words are ours.

A template is two texts (a system message and a user message) with placeholders in braces:

    {query} {description} {narrative}   the topic (description and narrative may be empty)
    {title} {passage}                   the document (its title and text)
    {scale}                             one line per grade: "N = Label: definition"
    {lowest} {highest}                  the scale's lowest and highest grades

Any other text in braces is refused when the template is checked (a typo such as {pasage}
would otherwise reach the model as it is); braces that are not a placeholder, as in a JSON
example, are written doubled: {{ and }}.

Templates are versioned: a machine judge keeps the name and version of the template it
graded with, and a template whose words change gets a new version, so grades made with
different words are never mixed under one judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PLACEHOLDERS = (
    "query",
    "description",
    "narrative",
    "title",
    "passage",
    "scale",
    "lowest",
    "highest",
)
REQUIRED = ("query", "passage", "scale")

# The longest passage sent, in characters: long documents are cut (and say so) rather than
# overflow a small model's context window. A machine judge may set its own.
DEFAULT_MAX_PASSAGE_CHARS = 8000

_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")

MESSAGES = {
    "unknown": "{where}: unknown placeholder {{{name}}} (known: {known}); write {{{{ and }}}} "
    "for a literal brace",
    "lonely": "{where}: a single {brace} at character {at}; write {double} for a literal brace",
    "missing": "the template never mentions {{{name}}}: the model would not see the {what}",
    "empty": "the {where} is empty",
}


class TemplateError(ValueError):
    """A template that cannot be used, with every problem found (``problems``)."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    system: str
    user: str

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version}"


@dataclass(frozen=True)
class Passage:
    """What the model reads: the topic and the document, as plain text."""

    query: str
    description: str
    narrative: str
    title: str
    text: str


DEFAULT_SYSTEM = (
    "You are a search quality rater. You judge how relevant a passage is to a searcher's "
    "query, carefully and consistently, following the grading scale you are given. You answer "
    "with a grade from that scale and nothing else."
)

DEFAULT_USER = """\
A person typed the query below into a search engine. Judge how well the passage \
meets their need.

Query: {query}
Description of the need: {description}
What counts as relevant: {narrative}

Passage title: {title}
Passage:
{passage}

Grade the passage on this scale:
{scale}

Think about it in this order, silently:
1. What does the searcher want? Use the description and the narrative when they are given.
2. How well does the passage's content match that intent (M)?
3. How trustworthy and complete is the passage (T)?
4. Weigh M and T and choose the one grade whose definition fits best. A passage that only \
mentions the words of the query, or is about something else, gets {lowest}.

Do not explain. Answer with exactly one line of the form
Grade: N
where N is one of the grades {lowest} to {highest}."""

DEFAULT_TEMPLATE = PromptTemplate(
    name="qrelsmith-umbrela", version="1", system=DEFAULT_SYSTEM, user=DEFAULT_USER
)


def check_template(template: PromptTemplate) -> PromptTemplate:
    """Return the template if every placeholder is known and the required ones (query,
    passage, scale) appear in one of its two texts; raise TemplateError listing every
    problem otherwise."""
    problems: list[str] = []
    if not template.user.strip():
        problems.append(MESSAGES["empty"].format(where="user message"))
    seen: set[str] = set()
    for where, text in (("system message", template.system), ("user message", template.user)):
        for match in _FIELD.finditer(text):
            token = match.group(0)
            if token in ("{{", "}}"):
                continue
            if match.group(1) is None:  # a brace on its own
                problems.append(
                    MESSAGES["lonely"].format(
                        where=where, brace=token, at=match.start() + 1, double=token * 2
                    )
                )
                continue
            name = match.group(1).strip()
            if name not in PLACEHOLDERS:
                problems.append(
                    MESSAGES["unknown"].format(
                        where=where, name=match.group(1), known=", ".join(PLACEHOLDERS)
                    )
                )
            seen.add(name)
    what = {"query": "query", "passage": "passage", "scale": "grading scale"}
    for name in REQUIRED:
        if name not in seen:
            problems.append(MESSAGES["missing"].format(name=name, what=what[name]))
    if problems:
        raise TemplateError(problems)
    return template


def format_scale(scale: list[dict]) -> str:
    """One line per grade, lowest first: ``N = Label: definition``."""
    lines = []
    for item in scale:
        definition = str(item.get("definition") or "").strip()
        line = f"{item['grade']} = {item['label']}"
        lines.append(f"{line}: {definition}" if definition else line)
    return "\n".join(lines)


def cut_passage(text: str, limit: int) -> str:
    """The passage, cut at ``limit`` characters (at a space when one is near) with a note."""
    if limit <= 0 or len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ", int(limit * 0.9))
    if space > 0:
        cut = cut[:space]
    return f"{cut} […passage cut at {limit:,} characters]"


def _fill(text: str, values: dict[str, str]) -> str:
    def replace(match: re.Match) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        return values[match.group(1).strip()]

    return _FIELD.sub(replace, text)


def render_messages(
    template: PromptTemplate,
    passage: Passage,
    scale: list[dict],
    *,
    max_passage_chars: int = DEFAULT_MAX_PASSAGE_CHARS,
) -> list[dict]:
    """The chat messages for one pair: a system message (left out when the template's is
    empty) and a user message. Empty topic fields read "(not given)"."""
    check_template(template)
    grades = [item["grade"] for item in scale]
    values = {
        "query": passage.query.strip(),
        "description": passage.description.strip() or "(not given)",
        "narrative": passage.narrative.strip() or "(not given)",
        "title": passage.title.strip() or "(none)",
        "passage": cut_passage(passage.text.strip(), max_passage_chars) or "(empty)",
        "scale": format_scale(scale),
        "lowest": str(min(grades)),
        "highest": str(max(grades)),
    }
    messages = []
    if template.system.strip():
        messages.append({"role": "system", "content": _fill(template.system, values)})
    messages.append({"role": "user", "content": _fill(template.user, values)})
    return messages
