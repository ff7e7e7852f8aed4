"""Read the files a lead imports into a campaign: topics, documents and pairs.

Strict and all-or-nothing, like evaluation/trec: a reader returns every record of the file, or
raises one :class:`~evaluation.trec.TrecFormatError` holding the first ``max_errors`` problems
in line order (``file:line: problem``) and the total count. Pure: stdlib only, plus
evaluation/trec's byte reading and error classes.

Input, for every format (evaluation/trec/source.py reads it, as it does for runs and qrels):

- bytes, a path, or a binary file-like object; plain or gzip (recognised by its first two
  bytes, 1f 8b, never by the name; concatenated members are read); at most ``max_bytes``
  after decompression, counted while decompressing so a gzip bomb stays small;
- a UTF-8 byte-order mark at the very start is dropped; lines end with ``\\n`` and a ``\\r``
  before it belongs to the line end; lines are numbered from 1; a line that is not valid
  UTF-8 or holds a NUL byte is an error; so is a line longer than ``max_line_bytes``
  (:data:`MAX_LINE_BYTES`, 64 KiB, for topics, pairs and gold grades;
  :data:`MAX_DOCUMENT_LINE_BYTES`, 1 MiB, for documents, whose text sits on one line), which
  is never held in memory whole;
- problems with the file as a whole (not gzip, too large, no records, unknown format) are
  reported on line 0.

Topics (:func:`read_topics`), one of:

- TSV: ``qid<TAB>query`` per line, exactly one tab; a first line ``qid<TAB>query`` is a header.
- JSONL: one JSON object per line with ``qid`` (string or integer) and ``title`` (the query;
  ``query`` is accepted as its other name), optional ``description`` and ``narrative``
  (strings or null). Other keys are errors, so a misspelt ``narative`` is not lost silently.
- TREC topic files: ``<top>`` … ``</top>`` blocks holding ``<num> Number: 301``,
  ``<title> …``, ``<desc> Description: …`` and ``<narr> Narrative: …``. A field runs until
  the next tag and may span lines; its whitespace is collapsed to single spaces. Closing
  tags (``</title>``) are allowed; ``Topic:`` before a title is dropped as well.

Documents (:func:`read_documents`), one of:

- JSONL: objects with ``docno`` (string or integer) and optional ``title``, ``text``, ``url``.
- CSV (RFC 4180 quoting; a quoted field may span lines) or TSV (no quoting: a field holds no
  tab or newline), both with a header row naming the columns: ``docno`` and any of
  ``title``, ``text``, ``url``, in any order. A record's line is the line it starts on.

Pairs (:func:`read_pairs`): ``qid docno`` per line, separated by ASCII whitespace as in TREC
files; blank lines and lines starting with ``#`` are skipped; a first data line naming the
columns (``qid docno``, ``topic_id doc_id``...: pairs.QID_HEADERS, pairs.DOCNO_HEADERS) is a
header.

Gold grades (:func:`read_gold`): ``qid docno grade`` per line, or TREC qrels lines
``qid iter docno grade`` (iter ignored); the first line fixes which, blank lines and ``#``
comments are skipped as for pairs, and a header names the columns as for pairs; a grade is an
integer (its place on the campaign's scale is the caller's check).

The caller's checks (pairs, gold grades, judgments: ``check``): a function of the records read
well that returns (line, problem) pairs, such as a topic the campaign does not have; they join
the file's own problems in one TrecFormatError, in line order under the same caps.

JSON lines are read strictly: a key given twice in one object is an error naming the key (the
json module would keep the last value silently), as is a number too long to convert.

Everywhere: qids and docnos are stripped of surrounding whitespace, must be non-empty, contain
no whitespace (runs and qrels could never name them) and fit the database's columns
(:data:`MAX_QID_CHARS`, :data:`MAX_DOCNO_CHARS`); a query must be non-empty; a url must be an
http(s) address of at most :data:`MAX_URL_CHARS`. A repeated qid (topics), docno (documents)
or pair (pairs) is an error on the later line naming the earlier one.

The format is detected from the content's first non-blank line (``{`` starts JSONL, ``<top>``
a TREC topic file, a tab TSV, a comma CSV), then from the file name's extension (``.gz``
ignored); a file neither tells apart is refused, naming the formats accepted.

Judgments made elsewhere (:func:`read_judgments`): per-judge grades in our CSV/TSV or JSONL,
TREC qrels of one named judge, UMBRELA's JSONL and autojudge-annotate's JSONL; see the
judgments package.

Modules: source (input to numbered lines, format detection, the shared reading loop), checks
(database limits, the line-ordered error log, id/url/JSON checks), topics, documents, pairs.
The names below are the API; the modules' other names are the package's own.
"""

from .checks import MAX_DOCNO_CHARS, MAX_QID_CHARS, MAX_URL_CHARS, quote
from .documents import DOCUMENT_FORMATS, DocumentRecord, detect_document_format, read_documents
from .judgments import (
    JUDGMENT_FORMAT_LIST,
    JUDGMENT_FORMATS,
    JudgmentFile,
    JudgmentFormat,
    JudgmentRecord,
    describe_judgment_formats,
    detect_judgment_format,
    map_grade,
    parse_mapping,
    read_judgments,
)
from .pairs import GoldRecord, PairRecord, read_gold, read_pairs
from .source import MAX_DOCUMENT_LINE_BYTES, MAX_LINE_BYTES
from .topics import TOPIC_FORMATS, TopicRecord, detect_topic_format, read_topics

__all__ = [
    "DOCUMENT_FORMATS",
    "JUDGMENT_FORMATS",
    "JUDGMENT_FORMAT_LIST",
    "MAX_DOCNO_CHARS",
    "MAX_DOCUMENT_LINE_BYTES",
    "MAX_LINE_BYTES",
    "MAX_QID_CHARS",
    "MAX_URL_CHARS",
    "TOPIC_FORMATS",
    "DocumentRecord",
    "GoldRecord",
    "JudgmentFile",
    "JudgmentFormat",
    "JudgmentRecord",
    "PairRecord",
    "TopicRecord",
    "describe_judgment_formats",
    "detect_document_format",
    "detect_judgment_format",
    "detect_topic_format",
    "map_grade",
    "parse_mapping",
    "quote",
    "read_documents",
    "read_gold",
    "read_judgments",
    "read_pairs",
    "read_topics",
]
