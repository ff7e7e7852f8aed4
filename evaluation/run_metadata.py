"""ir_metadata headers of run files: what made a run, as YAML in comment lines at its top
(pure: PyYAML and evaluation.trec's byte reader, no Django).

The ir_metadata convention (Breuer et al., "ir_metadata: An Extensible Metadata Schema for
IR Experiments", SIGIR 2022, https://www.ir-metadata.org) puts a YAML document between two
comment lines at the top of a TREC run file::

    # ir_metadata.start
    # tag: bm25-rm3
    # method:
    #   retrieval:
    #     - name: bm25
    #       k1: 0.9
    # ir_metadata.end
    1 Q0 d1 1 12.5 bm25-rm3

Rules here:

- The header is read only when the file's first line that is not blank is the start line
  (``# ir_metadata.start``, whitespace around it ignored); elsewhere such lines are ordinary
  comments. A run without a header has no metadata (None).
- Every line up to ``# ir_metadata.end`` must be a comment (or blank); the YAML is each line without its
  ``#`` and the one space after it. It must parse as one YAML mapping (``key: value``
  lines), with no anchors or aliases (``&x``, ``*x``: a few lines of them can expand to
  gigabytes), in at most MAX_HEADER_LINES lines and MAX_HEADER_BYTES bytes.
- Values come out as JSON would hold them: YAML dates and timestamps as ISO 8601 strings,
  keys as strings, so the metadata can be stored and returned as JSON unchanged in meaning.
- A problem raises evaluation.trec.TrecFormatError naming the file and line (a YAML error
  at the line of the file it is on), like every other problem of a run file.

The header lines stay comments for the run reader (evaluation.trec skips lines starting
with ``#``, as trec_eval 10.0 does), and the stored upload keeps them: a download is the
file as it came.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass

import yaml

from evaluation.trec import source as trec_source
from evaluation.trec.errors import LineError, TrecFormatError

__all__ = ["END", "MAX_HEADER_LINES", "START", "RunMetadata", "read_ir_metadata"]

START = "# ir_metadata.start"
END = "# ir_metadata.end"
MAX_HEADER_LINES = 10_000
MAX_HEADER_BYTES = 1 << 20

MESSAGES = {
    "no_end": f"the ir_metadata header that starts here has no {END!r} line",
    "too_long": f"the ir_metadata header is longer than {MAX_HEADER_LINES:,} lines or "
    f"{MAX_HEADER_BYTES >> 20} MiB",
    "not_comment": "the ir_metadata header started on line {start} has not ended (with "
    f"{END!r}), and this line is not a comment starting with '#'",
    "not_utf8": "the ir_metadata header is not valid UTF-8",
    "yaml": "the ir_metadata header is not valid YAML: {problem}",
    "alias": "the ir_metadata header uses YAML anchors or aliases (& or *), which are not accepted",
    "not_mapping": "the ir_metadata header must be a YAML mapping (key: value lines), not {kind}",
    "not_finite": "the ir_metadata header holds a number that is not finite ({value})",
}


@dataclass(frozen=True)
class RunMetadata:
    """A run file's ir_metadata: ``data`` as JSON would hold it, ``text`` the YAML as
    written (comment marks removed), ``start`` and ``end`` the header's first and last line
    numbers in the file."""

    data: dict
    text: str
    start: int
    end: int


def read_ir_metadata(
    source, *, name: str | None = None, max_bytes: int | None = None
) -> RunMetadata | None:
    """The ir_metadata header at the top of a run file (path, bytes or binary file; plain
    or gzip), or None when it has none. Only the header's lines are read (``max_bytes`` caps
    the decompressed bytes read, as for the run reader). Raises
    TrecFormatError (file:line) for a header that breaks the rules in the module's doc."""
    path = trec_source.display_name(source, name)
    lines = trec_source.iter_lines(source, name=path, max_bytes=max_bytes)
    start = None
    body: list[tuple[int, bytes]] = []
    size = 0
    for number, raw in lines:
        line = raw.rstrip(b"\r")
        if start is None:
            if not line.strip():
                continue
            if line.strip() != START.encode():
                return None
            start = number
            continue
        if line.strip() == END.encode():
            return _parse(path, start, number, body)
        if line.strip() and not line.lstrip().startswith(b"#"):
            _fail(path, number, MESSAGES["not_comment"].format(start=start))
        size += len(line) + 1
        if len(body) >= MAX_HEADER_LINES or size > MAX_HEADER_BYTES:
            _fail(path, start, MESSAGES["too_long"])
        body.append((number, line))
    if start is not None:
        _fail(path, start, MESSAGES["no_end"])
    return None


def _fail(path: str, line: int, message: str):
    raise TrecFormatError([LineError(path, line, message)])


def _uncommented(line: bytes) -> bytes:
    """A header line without its '#' and the one space after it (a blank line stays)."""
    if not line.strip():
        return b""
    text = line.lstrip()[1:]
    return text[1:] if text[:1] == b" " else text


def _parse(path: str, start: int, end: int, body: list[tuple[int, bytes]]) -> RunMetadata:
    texts = []
    for number, line in body:
        try:
            texts.append(_uncommented(line).decode("utf-8"))
        except UnicodeDecodeError:
            _fail(path, number, MESSAGES["not_utf8"])
    text = "\n".join(texts) + ("\n" if texts else "")
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                mark = event.start_mark
                _fail(path, start + 1 + mark.line, MESSAGES["alias"])
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        line = start + 1 + mark.line if mark is not None else start
        line = min(line, end - 1) if body else start
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        _fail(path, line, MESSAGES["yaml"].format(problem=problem))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        _fail(path, start + 1, MESSAGES["not_mapping"].format(kind=_kind(data)))
    return RunMetadata(data=_as_json(data, path, start), text=text, start=start, end=end)


def _kind(value) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


def _as_json(value, path: str, start: int):
    """YAML's values as JSON holds them: dates as ISO strings, keys as strings."""
    if isinstance(value, dict):
        return {_key(k): _as_json(v, path, start) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_json(v, path, start) for v in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes):  # !!binary
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        _fail(path, start + 1, MESSAGES["not_finite"].format(value=value))
    if isinstance(value, set):
        return sorted((_as_json(v, path, start) for v in value), key=str)
    return value


def _key(key) -> str:
    if isinstance(key, bool) or key is None:
        return str(key).lower() if key is not None else "null"
    if isinstance(key, datetime.date | datetime.datetime):
        return key.isoformat()
    return str(key)
