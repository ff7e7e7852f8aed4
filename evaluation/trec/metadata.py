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
  gigabytes), and a key at most once in each mapping.
- Bounds, checked before the YAML is parsed, as PyYAML's parser does work for every open
  level on each token and its composer recurses once per level (a 40 KB header nested
  20,000 deep held a worker for minutes, then raised RecursionError): at most
  MAX_HEADER_LINES lines and MAX_HEADER_BYTES bytes (while the lines are read), mappings and
  lists nested at most common.nesting.MAX_DEPTH deep and no key or value longer than
  MAX_SCALAR_CHARS characters (in one pass of PyYAML's tokenizer, which stops at the first
  token past a bound).
- Values come out as JSON would hold them: YAML dates and timestamps as ISO 8601 strings,
  keys as strings, so the metadata can be stored and returned as JSON unchanged in meaning.
  A date that does not exist (``2020-13-45``), an integer outside the signed 64-bit range and
  a number that is not finite are refused at their line.
- A problem raises evaluation.trec.TrecFormatError naming the file and line (a YAML error
  at the line of the file it is on), like every other problem of a run file; so does any
  other failure of the YAML library, at the header's first line.

The header lines stay comments for the run reader (evaluation.trec skips lines starting
with ``#``, as trec_eval 10.0 does), and the stored upload keeps them: a download is the
file as it came.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass

import yaml

from common.nesting import MAX_DEPTH
from evaluation.trec import source as trec_source
from evaluation.trec.errors import LineError, TrecFormatError

__all__ = [
    "END",
    "MAX_HEADER_BYTES",
    "MAX_HEADER_LINES",
    "MAX_SCALAR_CHARS",
    "START",
    "RunMetadata",
    "read_ir_metadata",
]

START = "# ir_metadata.start"
END = "# ir_metadata.end"
MAX_HEADER_LINES = 10_000
MAX_HEADER_BYTES = 64 << 10
MAX_SCALAR_CHARS = 8192
_INT64 = (-(2**63), 2**63 - 1)

MESSAGES = {
    "no_end": f"the ir_metadata header that starts here has no {END!r} line",
    "too_long": f"the ir_metadata header is longer than {MAX_HEADER_LINES:,} lines or "
    f"{MAX_HEADER_BYTES >> 10} KiB",
    "too_deep": f"the ir_metadata header nests mappings and lists deeper than {MAX_DEPTH} levels",
    "scalar_too_long": "the ir_metadata header holds a key or value longer than "
    f"{MAX_SCALAR_CHARS:,} characters",
    "duplicate_key": "the ir_metadata header gives the key {key} twice in one mapping",
    "bad_date": "the ir_metadata header holds a date that does not exist ({value}: {problem})",
    "int_range": "the ir_metadata header holds an integer outside the signed 64-bit range "
    "({value})",
    "unreadable": "the ir_metadata header could not be read as YAML ({problem})",
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

    def line_of(mark) -> int:
        line = start + 1 + mark.line if mark is not None else start
        return min(line, end - 1) if body else start

    try:
        _check_tokens(text)
        data = yaml.load(text, Loader=_HeaderLoader)  # a SafeLoader
    except _Refused as refused:
        _fail(path, line_of(refused.mark), refused.message)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        _fail(path, line_of(mark), MESSAGES["yaml"].format(problem=problem))
    except (ValueError, TypeError, OverflowError, RecursionError) as error:
        # Not expected within the bounds: still a file:line error, never a crash.
        problem = f"{type(error).__name__}: {str(error)[:200]}"
        _fail(path, start, MESSAGES["unreadable"].format(problem=problem))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        _fail(path, start + 1, MESSAGES["not_mapping"].format(kind=_kind(data)))
    return RunMetadata(data=_as_json(data, path, start), text=text, start=start, end=end)


class _Refused(Exception):
    """The header breaks a rule of the module's doc at ``mark`` (a YAML mark)."""

    def __init__(self, message: str, mark) -> None:
        super().__init__(message)
        self.message, self.mark = message, mark


_OPENS = (
    yaml.BlockMappingStartToken,
    yaml.BlockSequenceStartToken,
    yaml.FlowMappingStartToken,
    yaml.FlowSequenceStartToken,
)
_CLOSES = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
_INDENTLESS = "-"  # a block sequence at its mapping's indentation: it has no start token


def _check_tokens(text: str) -> None:
    """The bounds of the module's doc that need the YAML's structure, from its tokens (one
    pass of PyYAML's tokenizer, stopped at the first token past a bound, so its work per
    token stays within MAX_DEPTH open levels): raises _Refused, or the tokenizer's
    yaml.YAMLError.

    The depth counted is never less than the parser's: a sequence written at its mapping's
    indentation (``key:`` then ``- item`` lines) has no start token; it counts from its first
    ``-`` until its mapping ends."""
    open_: list = []
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        if isinstance(token, _OPENS):
            open_.append(token)
        elif isinstance(token, _CLOSES):
            if open_ and open_[-1] == _INDENTLESS:
                open_.pop()
            if open_:
                open_.pop()
        elif isinstance(token, yaml.BlockEntryToken):
            if open_ and isinstance(open_[-1], yaml.BlockMappingStartToken):
                open_.append(_INDENTLESS)
        elif isinstance(token, yaml.AnchorToken | yaml.AliasToken):
            raise _Refused(MESSAGES["alias"], token.start_mark)
        elif isinstance(token, yaml.ScalarToken) and len(token.value) > MAX_SCALAR_CHARS:
            raise _Refused(MESSAGES["scalar_too_long"], token.start_mark)
        if len(open_) > MAX_DEPTH:
            raise _Refused(MESSAGES["too_deep"], token.start_mark)


class _HeaderLoader(yaml.SafeLoader):
    """PyYAML's safe loader with the module's rules: a key once per mapping; dates that
    exist; integers within 64 bits; finite numbers. Each refusal names its node's line."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    repeated = key in seen
                    seen.add(key)
                except TypeError:  # unhashable: the safe constructor refuses it
                    continue
                if repeated:
                    message = MESSAGES["duplicate_key"].format(key=repr(_key(key))[:80])
                    raise _Refused(message, key_node.start_mark)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_timestamp(self, node):
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError) as error:
            message = MESSAGES["bad_date"].format(value=repr(node.value)[:80], problem=error)
            raise _Refused(message, node.start_mark) from None

    def construct_yaml_int(self, node):
        try:
            value = super().construct_yaml_int(node)
        except ValueError:  # more digits than Python converts
            value = None
        if value is None or not _INT64[0] <= value <= _INT64[1]:
            text = node.value if len(node.value) <= 40 else node.value[:37] + "..."
            raise _Refused(MESSAGES["int_range"].format(value=text), node.start_mark)
        return value

    def construct_yaml_float(self, node):
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise _Refused(MESSAGES["not_finite"].format(value=value), node.start_mark)
        return value


for _tag, _method in (
    ("tag:yaml.org,2002:timestamp", _HeaderLoader.construct_yaml_timestamp),
    ("tag:yaml.org,2002:int", _HeaderLoader.construct_yaml_int),
    ("tag:yaml.org,2002:float", _HeaderLoader.construct_yaml_float),
):
    _HeaderLoader.add_constructor(_tag, _method)


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
    if isinstance(value, float) and not math.isfinite(value):  # e.g. inside a !!set
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
