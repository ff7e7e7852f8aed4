"""Topics files: TSV (``qid<TAB>query``), JSONL and TREC topic files (``<top>`` blocks)."""

from __future__ import annotations

import re
from typing import NamedTuple

from common import text_limits
from evaluation.trec.errors import MAX_ERRORS

from .checks import (
    MAX_QID_CHARS,
    Errors,
    Seen,
    check_id,
    json_id,
    json_object,
    json_text,
    quote,
    unknown_keys,
)
from .source import (
    MAX_LINE_BYTES,
    Kind,
    Lines,
    decode,
    extension,
    first_content_line,
    read,
    text_lines,
)

__all__ = ["TOPIC_FORMATS", "TopicRecord", "detect_topic_format", "read_topics"]

TOPIC_FORMATS = {
    "tsv": "TSV (qid<TAB>query)",
    "jsonl": 'JSONL ({"qid": …, "title": …, "description": …, "narrative": …})',
    "trec": "a TREC topic file (<top> <num> Number: … <title> … </top>)",
}
_EXTENSIONS = {".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
_JSON_KEYS = ("qid", "title", "query", "description", "narrative")

_TAG = re.compile(r"<(/?)([A-Za-z]+)>")
_TREC_FIELDS = ("num", "title", "desc", "narr")
_FIELD_PREFIXES = {
    "num": re.compile(r"^number\s*:\s*", re.IGNORECASE),
    "title": re.compile(r"^topic\s*:\s*", re.IGNORECASE),
    "desc": re.compile(r"^description\s*:\s*", re.IGNORECASE),
    "narr": re.compile(r"^narrative\s*:\s*", re.IGNORECASE),
}
# Where the text of a repeated or unknown tag goes (already reported once), so that its lines
# do not each add an error or join the previous field.
_IGNORED = "ignored"


class TopicRecord(NamedTuple):
    qid: str
    query: str
    description: str
    narrative: str
    line: int


def read_topics(
    source,
    *,
    name: str | None = None,
    fmt: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> list[TopicRecord]:
    """Read a topics file (TSV, JSONL or TREC; ``fmt`` None detects it) into records in file
    order. Raises :class:`~evaluation.trec.TrecFormatError` listing every problem."""
    return read(
        source,
        name=name,
        fmt=fmt,
        max_errors=max_errors,
        max_bytes=max_bytes,
        kind=_TOPICS,
        max_line_bytes=max_line_bytes,
    )


def detect_topic_format(data: bytes, name: str = "") -> str | None:
    """``"tsv"``, ``"jsonl"`` or ``"trec"`` from the first non-blank line, else from the
    name's extension; None when neither tells."""
    first = first_content_line(data)
    if first.startswith(b"{"):
        return "jsonl"
    if first[:5].lower() == b"<top>":
        return "trec"
    if b"\t" in first:
        return "tsv"
    return _EXTENSIONS.get(extension(name))


def _topic(
    qid, query, description, narrative, number, qid_line, seen, errors, text_lines=None
) -> TopicRecord | None:
    """The topic, or None after reporting its problems. ``text_lines``: where the
    description and narrative begin, when not on ``number`` (the query's line)."""
    problem = check_id("qid", qid, MAX_QID_CHARS)
    if problem:
        errors.add(qid_line, problem)
    if not query:
        errors.add(number, f"topic {quote(qid)} has an empty query" if qid else "empty query")
    lines = {"description": number, "narrative": number, **(text_lines or {})}
    too_long = [
        (line, message)
        for line, message in (
            (number, text_limits.too_long("query", query, text_limits.QUERY)),
            (
                lines["description"],
                text_limits.too_long("description", description, text_limits.TOPIC_TEXT),
            ),
            (
                lines["narrative"],
                text_limits.too_long("narrative", narrative, text_limits.TOPIC_TEXT),
            ),
        )
        if message
    ]
    for line, message in too_long:
        errors.add(line, message)
    # A topic claims its qid even when it has other problems: a later repeat is still wrong.
    unique = problem is not None or seen.check(qid, qid_line, errors)
    if problem or not query or too_long or not unique:
        return None
    return TopicRecord(qid, query, description, narrative, number)


def _seen_qids() -> Seen:
    return Seen(lambda qid: f"qid {quote(qid)}")


# --- TSV ---------------------------------------------------------------------------------------


def _topics_tsv(lines: Lines, errors: Errors) -> list[TopicRecord]:
    records = []
    seen = _seen_qids()
    for number, line in text_lines(lines, errors):
        fields = line.split("\t")
        if len(fields) != 2:
            errors.add(
                number,
                f"expected qid<TAB>query (2 fields separated by one tab), found {len(fields)}",
            )
            continue
        qid, query = fields[0].strip(), fields[1].strip()
        if number == 1 and qid.lower() == "qid" and query.lower() == "query":
            continue  # header row
        record = _topic(qid, query, "", "", number, number, seen, errors)
        if record:
            records.append(record)
    return records


# --- JSONL -------------------------------------------------------------------------------------


def _topics_jsonl(lines: Lines, errors: Errors) -> list[TopicRecord]:
    records = []
    seen = _seen_qids()
    for number, line in text_lines(lines, errors):
        obj = json_object(line, number, errors)
        if obj is None:
            continue
        bad = unknown_keys(obj, _JSON_KEYS, number, errors)
        if "title" in obj and "query" in obj:
            errors.add(number, "give the query as title or as query, not both")
            bad = True
        qid = json_id(obj, "qid", number, errors)
        if "title" not in obj and "query" not in obj:
            errors.add(number, "missing 'title' (the query)")
            bad = True
        title_key = "query" if "query" in obj else "title"
        query = json_text(obj, title_key, number, errors)
        description = json_text(obj, "description", number, errors)
        narrative = json_text(obj, "narrative", number, errors)
        if bad or None in (qid, query, description, narrative):
            continue
        if not query:
            errors.add(number, f"topic {quote(qid)} has an empty title (the query)")
            continue
        record = _topic(qid, query, description, narrative, number, number, seen, errors)
        if record:
            records.append(record)
    return records


# --- TREC topic files --------------------------------------------------------------------------


class _OpenTopic:
    def __init__(self, line: int):
        self.line = line
        self.fields: dict[str, list[str]] = {_IGNORED: []}
        self.field_lines: dict[str, int] = {}
        self.current: str | None = None


def _topics_trec(lines: Lines, errors: Errors) -> list[TopicRecord]:
    records = []
    seen = _seen_qids()
    topic: _OpenTopic | None = None

    def close() -> None:
        record = _finish_trec_topic(topic, seen, errors)
        if record:
            records.append(record)

    for number, raw in lines:
        line = decode(raw, number, errors)
        if line is None:
            continue
        position = 0
        for match in [*_TAG.finditer(line), None]:
            text = line[position : match.start() if match else len(line)]
            position = match.end() if match else len(line)
            if text.strip():
                if topic is None:
                    errors.add(number, "text outside <top> … </top>")
                elif topic.current is None:
                    errors.add(number, "text outside the fields <num>, <title>, <desc>, <narr>")
                else:
                    topic.fields[topic.current].append(text)
            if match is None:
                break
            closing, tag = match.group(1) == "/", match.group(2).lower()
            if tag == "top" and not closing:
                if topic is not None:
                    errors.add(topic.line, "<top> is not closed before the next <top>")
                    close()
                topic = _OpenTopic(number)
            elif tag == "top":
                if topic is None:
                    errors.add(number, "</top> without an open <top>")
                else:
                    close()
                    topic = None
            elif tag in _TREC_FIELDS:
                if topic is None:
                    errors.add(number, f"<{tag}> outside <top> … </top>")
                elif closing:
                    if topic.current != tag:
                        errors.add(number, f"</{tag}> closes no open <{tag}>")
                    topic.current = None
                elif tag in topic.fields:
                    first = topic.field_lines[tag]
                    errors.add(
                        number, f"second <{tag}> in one topic (the first is on line {first})"
                    )
                    topic.current = _IGNORED
                else:
                    topic.fields[tag] = []
                    topic.field_lines[tag] = number
                    topic.current = tag
            else:
                errors.add(
                    number,
                    f"unknown tag {match.group(0)}; a TREC topic has <top>, <num>, <title>, "
                    "<desc> and <narr>",
                )
                if topic is not None:
                    topic.current = _IGNORED
    if topic is not None:
        errors.add(topic.line, "<top> is never closed by </top>")
        close()
    return records


def _finish_trec_topic(topic: _OpenTopic, seen: Seen, errors: Errors) -> TopicRecord | None:
    values = {}
    for tag in _TREC_FIELDS:
        text = " ".join(" ".join(topic.fields.get(tag, [])).split())
        values[tag] = _FIELD_PREFIXES[tag].sub("", text, count=1)
    if "num" not in topic.fields:
        errors.add(topic.line, "topic has no <num>")
        return None
    if "title" not in topic.fields:
        errors.add(topic.line, f"topic {quote(values['num'])} has no <title> (the query)")
        return None
    return _topic(
        values["num"],
        values["title"],
        values["desc"],
        values["narr"],
        topic.field_lines["title"],
        topic.field_lines["num"],
        seen,
        errors,
        {
            key: topic.field_lines[tag]
            for key, tag in (("description", "desc"), ("narrative", "narr"))
            if tag in topic.field_lines
        },
    )


_TOPICS = Kind(
    "topics",
    TOPIC_FORMATS,
    detect_topic_format,
    {"tsv": _topics_tsv, "jsonl": _topics_jsonl, "trec": _topics_trec},
)
