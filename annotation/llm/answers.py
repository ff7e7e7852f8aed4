"""Reading a machine judge's answer: a grade on the campaign's scale, or a failure that keeps
the raw text. Never a guess.

Accepted answers, after removing a reasoning model's ``<think>…</think>`` block and
surrounding whitespace:

- the grade alone: ``2`` (also ``"2"``, ``**2**``, ``2.``);
- one or more lines ``Grade: 2`` (also ``Final grade: 2``, ``Score = 2``, ``##final score: 2``,
  ``**Grade:** 2``), all giving the same grade; the rest of the answer is free text;
- a JSON object with an integer ``grade`` (or ``score``): ``{"grade": 2}``.

Everything else is a failure with the reason: no grade found, two different grades, a number
that is not a whole grade (``2.5``), or a grade outside the scale.
"""

from __future__ import annotations

import json
import re

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_ALONE = re.compile(r"^[*_#`'\"\s]*(-?\d+(?:\.\d+)?)[.*_`'\"\s]*$")
_LINE = re.compile(
    r"^[*_#`>\s]*(?:final\s+)?(?:grade|score|relevance(?:\s+grade|\s+score)?)[*_`\s]*"
    r"[:=][*_`\s]*(-?\d+(?:\.\d+)?)[.*_`\s]*(?:/\s*\d+)?\s*$",
    re.IGNORECASE | re.MULTILINE,
)

MESSAGES = {
    "empty": "the answer is empty",
    "no_grade": "no grade found (expected a line 'Grade: N' or the grade alone)",
    "conflicting": "the answer gives different grades: {grades}",
    "not_whole": "{value} is not a whole grade",
    "off_scale": "grade {grade} is not on the scale ({lowest}–{highest})",
    "unfinished_think": "the answer is still reasoning (an unclosed <think>): no grade given",
}


class AnswerError(ValueError):
    """An answer that is not a grade on the scale; ``raw`` is the answer as it came."""

    def __init__(self, reason: str, raw: str):
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


def parse_grade(raw: str | None, grades: list[int]) -> int:
    """The grade the answer ``raw`` gives, if it is one of ``grades``; AnswerError otherwise."""
    text = raw or ""
    body = _THINK.sub("", text).strip()
    if not body:
        if "<think>" in text.lower():
            raise AnswerError(MESSAGES["unfinished_think"], text)
        raise AnswerError(MESSAGES["empty"], text)
    if "<think>" in body.lower() and "</think>" not in body.lower():
        raise AnswerError(MESSAGES["unfinished_think"], text)
    values = _values(body)
    if not values:
        raise AnswerError(MESSAGES["no_grade"], text)
    if len(set(values)) > 1:
        shown = ", ".join(dict.fromkeys(values))
        raise AnswerError(MESSAGES["conflicting"].format(grades=shown), text)
    value = values[0]
    try:
        grade = int(value)
    except ValueError:
        raise AnswerError(MESSAGES["not_whole"].format(value=value), text) from None
    if grade not in grades:
        raise AnswerError(
            MESSAGES["off_scale"].format(grade=grade, lowest=min(grades), highest=max(grades)),
            text,
        )
    return grade


def _values(body: str) -> list[str]:
    alone = _ALONE.match(body)
    if alone:
        return [alone.group(1)]
    if body.startswith("{"):
        found = _from_json(body)
        if found is not None:
            return [found]
    return [match.group(1) for match in _LINE.finditer(body)]


def _from_json(body: str) -> str | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for key in ("grade", "score"):
        value = data.get(key)
        if isinstance(value, bool):  # True is not a grade
            return None
        if isinstance(value, int | float):
            return str(value)
        if isinstance(value, str) and re.fullmatch(r"-?\d+(?:\.\d+)?", value.strip()):
            return value.strip()
    return None
