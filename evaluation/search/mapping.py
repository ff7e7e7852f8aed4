"""From an engine's JSON answer to ranked hits: JMESPath expressions (jmespath.org) name
the list of hits in the answer, and within each hit its document id, title, text and score.

    mapping = Mapping(hits="hits.hits", id="_id", score="_score",
                      title="_source.title", text="_source.text")
    hits = map_hits(answer, mapping, k=10)

A hit without a usable id fails the whole query (a run must not lose a document silently);
a missing title or text is empty; a list of strings (Solr's multi-valued fields) is joined.
When every hit has a finite numeric score the engine's scores are kept; otherwise each hit
is scored by its position (n, n-1, ..., 1), so the run keeps the engine's order. A document
returned twice keeps its first place. No Django here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import jmespath
from jmespath.exceptions import JMESPathError

FIELDS = ("hits", "id", "title", "text", "score")
REQUIRED = ("hits", "id")
MAX_EXPRESSION_CHARS = 500
MAX_DOCNO_CHARS = 255
MAX_TEXT_CHARS = 100_000  # of a hit's title or text kept for judging
WHITESPACE = re.compile(r"\s")

MESSAGES = {
    "required": "the mapping needs an expression for {field}",
    "expression": "the {field} expression is not JMESPath ({why})",
    "too_long": "the {field} expression is longer than {limit} characters",
    "no_hits": "the answer has no list at {expression!r}",
    "no_id": "hit {n} has no document id at {expression!r}",
    "bad_id": "hit {n}'s document id is not a string or a number",
    "spaces": "hit {n}'s document id holds spaces or is longer than {limit} characters, which "
    "a run file cannot carry",
}


class MappingError(ValueError):
    pass


@dataclass(frozen=True)
class Mapping:
    hits: str
    id: str
    title: str = ""
    text: str = ""
    score: str = ""

    def as_dict(self) -> dict:
        return {field: getattr(self, field) for field in FIELDS}

    @classmethod
    def from_dict(cls, data: dict) -> Mapping:
        return cls(**{field: str(data.get(field) or "").strip() for field in FIELDS})


@dataclass(frozen=True)
class Hit:
    docno: str
    score: float
    title: str
    text: str


@dataclass(frozen=True)
class Mapped:
    hits: list[Hit]
    scores_from: str  # "engine" or "rank"
    duplicates: int  # documents returned more than once (their later places dropped)


def compile_mapping(mapping: Mapping) -> dict:
    """Each expression compiled; MappingError names the first unfit one."""
    compiled = {}
    for field in FIELDS:
        expression = getattr(mapping, field)
        if not expression:
            if field in REQUIRED:
                raise MappingError(MESSAGES["required"].format(field=field))
            continue
        if len(expression) > MAX_EXPRESSION_CHARS:
            raise MappingError(MESSAGES["too_long"].format(field=field, limit=MAX_EXPRESSION_CHARS))
        try:
            compiled[field] = jmespath.compile(expression)
        except JMESPathError as error:
            why = str(error).splitlines()[0][:120]
            raise MappingError(MESSAGES["expression"].format(field=field, why=why)) from None
    return compiled


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(_text(item) for item in value if item is not None)
    if isinstance(value, dict):
        return ""
    text = str(value).replace("\x00", "\ufffd")
    return text[:MAX_TEXT_CHARS]


def _score(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def map_hits(answer, mapping: Mapping, *, k: int) -> Mapped:
    """The first ``k`` hits of ``answer`` as ``mapping`` reads them; MappingError when the
    answer has no list of hits or a hit has no usable id."""
    compiled = compile_mapping(mapping)
    try:
        found = compiled["hits"].search(answer)
    except JMESPathError as error:  # a function given the wrong type at run time
        raise MappingError(MESSAGES["no_hits"].format(expression=mapping.hits)) from error
    if not isinstance(found, list):
        raise MappingError(MESSAGES["no_hits"].format(expression=mapping.hits))
    raw = []
    seen: set[str] = set()
    duplicates = 0
    for n, hit in enumerate(found[:k], 1):
        try:
            values = {f: e.search(hit) for f, e in compiled.items() if f != "hits"}
        except JMESPathError:
            values = {}
        docno = values.get("id")
        if docno is None:
            raise MappingError(MESSAGES["no_id"].format(n=n, expression=mapping.id))
        if isinstance(docno, bool) or not isinstance(docno, str | int | float):
            raise MappingError(MESSAGES["bad_id"].format(n=n))
        docno = str(docno)
        if not docno or WHITESPACE.search(docno) or len(docno) > MAX_DOCNO_CHARS:
            raise MappingError(MESSAGES["spaces"].format(n=n, limit=MAX_DOCNO_CHARS))
        if docno in seen:
            duplicates += 1
            continue
        seen.add(docno)
        raw.append((docno, _score(values.get("score")), values))
    if raw and all(score is not None for _, score, _ in raw):
        scores_from = "engine"
        scores = [score for _, score, _ in raw]
    else:
        scores_from = "rank"
        scores = [float(len(raw) - n) for n in range(len(raw))]
    hits = [
        Hit(docno, score, _text(values.get("title")), _text(values.get("text")))
        for (docno, _, values), score in zip(raw, scores, strict=True)
    ]
    return Mapped(hits, scores_from, duplicates)
