"""Documents files: JSONL, CSV (RFC 4180 quoting) and TSV, the last two with a header row."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import NamedTuple

from evaluation.trec.errors import MAX_ERRORS

from .checks import (
    MAX_DOCNO_CHARS,
    Errors,
    Seen,
    check_id,
    check_url,
    json_id,
    json_object,
    json_text,
    quote,
    unknown_keys,
)
from .source import (
    MAX_DOCUMENT_LINE_BYTES,
    Kind,
    Lines,
    decode,
    extension,
    first_content_line,
    read,
    text_lines,
)

__all__ = [
    "DOCUMENT_COLUMNS",
    "DOCUMENT_FORMATS",
    "DocumentRecord",
    "detect_document_format",
    "read_documents",
]

DOCUMENT_FORMATS = {
    "jsonl": 'JSONL ({"docno": …, "title": …, "text": …, "url": …})',
    "csv": "CSV with a header row (docno,title,text,url)",
    "tsv": "TSV with a header row (docno<TAB>title<TAB>text<TAB>url)",
}
DOCUMENT_COLUMNS = ("docno", "title", "text", "url")
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
}


class DocumentRecord(NamedTuple):
    docno: str
    title: str
    text: str
    url: str
    line: int


def read_documents(
    source,
    *,
    name: str | None = None,
    fmt: str | None = None,
    max_errors: int = MAX_ERRORS,
    max_bytes: int | None = None,
    max_line_bytes: int = MAX_DOCUMENT_LINE_BYTES,
) -> list[DocumentRecord]:
    """Read a documents file (JSONL, CSV or TSV; ``fmt`` None detects it) into records in
    file order. Raises :class:`~evaluation.trec.TrecFormatError` listing every problem."""
    return read(
        source,
        name=name,
        fmt=fmt,
        max_errors=max_errors,
        max_bytes=max_bytes,
        kind=_DOCUMENTS,
        max_line_bytes=max_line_bytes,
    )


def detect_document_format(data: bytes, name: str = "") -> str | None:
    """``"jsonl"``, ``"csv"`` or ``"tsv"`` from the first non-blank line, else from the
    name's extension; None when neither tells."""
    first = first_content_line(data)
    if first.startswith(b"{"):
        return "jsonl"
    if b"\t" in first:
        return "tsv"
    if b"," in first:
        return "csv"
    return _EXTENSIONS.get(extension(name))


def _document(values: dict, number: int, seen: Seen, errors: Errors) -> DocumentRecord | None:
    docno = values.get("docno", "")
    problem = check_id("docno", docno, MAX_DOCNO_CHARS)
    url = values.get("url", "")
    url_problem = check_url(url)
    if problem:
        errors.add(number, problem)
    if url_problem:
        errors.add(number, url_problem)
    unique = problem is not None or seen.check(docno, number, errors)
    if problem or url_problem or not unique:
        return None
    return DocumentRecord(docno, values.get("title", ""), values.get("text", ""), url, number)


def _seen_docnos() -> Seen:
    return Seen(lambda docno: f"docno {quote(docno)}")


# --- JSONL -------------------------------------------------------------------------------------


def _documents_jsonl(lines: Lines, errors: Errors) -> list[DocumentRecord]:
    records = []
    seen = _seen_docnos()
    for number, line in text_lines(lines, errors):
        obj = json_object(line, number, errors)
        if obj is None:
            continue
        bad = unknown_keys(obj, DOCUMENT_COLUMNS, number, errors)
        values = {"docno": json_id(obj, "docno", number, errors)}
        for key in ("title", "text", "url"):
            values[key] = json_text(obj, key, number, errors)
        if bad or None in values.values():
            continue
        record = _document(values, number, seen, errors)
        if record:
            records.append(record)
    return records


# --- CSV and TSV -------------------------------------------------------------------------------


def _header(fields: list[str], separator: str, errors: Errors, number: int) -> list[str] | None:
    names = [field.strip().lower() for field in fields]
    example = separator.join(DOCUMENT_COLUMNS)
    if "docno" not in names:
        errors.add(
            number,
            f"the first row must be a header naming the columns, with docno among them "
            f"(for example {example!r})",
        )
        return None
    unknown = [name for name in names if name not in DOCUMENT_COLUMNS]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if unknown:
        errors.add(
            number,
            f"unknown column{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(quote(n) for n in unknown)} (expected {', '.join(DOCUMENT_COLUMNS)})",
        )
    if repeated:
        errors.add(number, f"column {', '.join(quote(n) for n in repeated)} appears twice")
    return None if unknown or repeated else names


def _row(names, fields, number, seen, errors) -> DocumentRecord | None:
    if len(fields) != len(names):
        errors.add(number, f"expected {len(names)} fields as in the header, found {len(fields)}")
        return None
    values = {name: field.strip() for name, field in zip(names, fields, strict=True)}
    return _document(values, number, seen, errors)


def _documents_tsv(lines: Lines, errors: Errors) -> list[DocumentRecord]:
    records = []
    seen = _seen_docnos()
    names = None
    for number, line in text_lines(lines, errors):
        fields = line.split("\t")
        if names is None:
            names = _header(fields, "\t", errors, number)
            if names is None:
                return records  # without columns no row can be read
            continue
        record = _row(names, fields, number, seen, errors)
        if record:
            records.append(record)
    return records


def _documents_csv(lines: Lines, errors: Errors) -> list[DocumentRecord]:
    # Documents are long: raise the csv module's 128 KiB per-field default (process-wide,
    # harmless: it only ever grows here).
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))
    reader = csv.reader(_csv_lines(lines, errors), strict=True)
    records = []
    seen = _seen_docnos()
    names = None
    start = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            errors.add(start, f"not valid CSV: {error}; reading stopped here")
            break
        number, start = start, reader.line_num + 1
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        if names is None:
            names = _header(fields, ",", errors, number)
            if names is None:
                return records
            continue
        record = _row(names, fields, number, seen, errors)
        if record:
            records.append(record)
    return records


def _csv_lines(lines: Lines, errors: Errors) -> Iterator[str]:
    # Every line reaches the reader ending in "\n" (a "\r\n" file included), so a quoted field
    # spanning lines holds "\n". A line that cannot be decoded is reported and read as empty,
    # which keeps the reader's line count right.
    for number, raw in lines:
        line = decode(raw, number, errors)
        yield "\n" if line is None else line + "\n"


_DOCUMENTS = Kind(
    "documents",
    DOCUMENT_FORMATS,
    detect_document_format,
    {"jsonl": _documents_jsonl, "csv": _documents_csv, "tsv": _documents_tsv},
)
