"""How long the text people type may be: one home for the caps on free text, which forms
(``max_length``), serializers (``max_length``), services (:func:`length_errors`) and file
readers (:func:`too_long`) all read, so a 9 MB campaign description is refused everywhere, with
the limit in the message.

Most of these fields are TextFields, which no database limits: before these caps a campaign
description of 9 MB was stored and then sent with every page that shows it. The caps are
checked in code, not in the schema (no migration). Characters, as Python counts them.
Pure (no Django): the file readers (annotation/formats) use it too.
"""

from __future__ import annotations

__all__ = [
    "DESCRIPTION",
    "GUIDELINES",
    "NAME",
    "NOTE",
    "QUERY",
    "REASON",
    "SKIP_REASON",
    "TAG",
    "TAGS",
    "TOPIC_TEXT",
    "length_errors",
    "too_long",
]

NAME = 200  # a campaign's name (its column's length)
DESCRIPTION = 10_000  # of a campaign, a system, a run, a qrels version, an outside judge
GUIDELINES = 50_000  # a campaign's guidelines (Markdown, shown beside every pair)
QUERY = 10_000  # a topic's query (its title in a TREC topic file)
TOPIC_TEXT = 20_000  # a topic's description and narrative
NOTE = 10_000  # a judgment's note, typed on the judging page or imported with a grade
SKIP_REASON = 200  # why a judge skipped a pair (its column's length)
REASON = 2_000  # a lead's reason for a decision
TAG = 50  # one tag of a system
TAGS = 20  # tags of one system

FIELD_TOO_LONG = "Keep this to {limit:,} characters; it has {length:,}."
LINE_TOO_LONG = "{what} is longer than {limit:,} characters"


def too_long(what: str, text: str, limit: int) -> str | None:
    """Why ``text`` is too long, for a line of a file ("query is longer than 10,000
    characters"), or None."""
    return LINE_TOO_LONG.format(what=what, limit=limit) if len(text) > limit else None


def length_errors(**fields: tuple[str | None, int]) -> dict[str, str]:
    """{field: message} for each ``field=(text, limit)`` whose text is longer than its limit
    (None: not given); a service raises ``ValidationError(length_errors(...))`` when any."""
    return {
        field: FIELD_TOO_LONG.format(limit=limit, length=len(text))
        for field, (text, limit) in fields.items()
        if text is not None and len(text) > limit
    }
