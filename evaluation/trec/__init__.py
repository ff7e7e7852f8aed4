"""Read and write TREC run and qrels files: strict, streaming, with line-numbered errors.

A run file holds one retrieved document per line, ``qid Q0 docno rank score tag``; a qrels file
one judgment per line, ``qid iteration docno grade``.

Grammar (trec_eval's for run files, stricter where trec_eval misreads: it reads ``2.5abc`` as
2.5, we refuse it):

- Input is bytes, plain or gzip-compressed. Gzip is recognised by its first two bytes (1f 8b),
  never by the file name; concatenated gzip members and NUL padding after them are accepted,
  as gzip(1) does. A UTF-8 byte-order mark at the very start is dropped.
- Lines end with ``\\n``; a ``\\r`` before it belongs to the line end. Lines are numbered from 1.
- Whitespace is ASCII whitespace: space, tab, CR, VT (0x0B) and FF (0x0C), the set C's
  ``isspace`` gives trec_eval. Fields are separated by runs of it; leading and trailing
  whitespace is ignored. Other characters, including non-breaking and other Unicode spaces,
  belong to the field they are in (a docno may contain U+00A0).
- A line that is empty or only whitespace is blank; a line whose first non-whitespace character
  is ``#`` is a comment. Both are skipped but keep their line numbers. Comments are not checked
  at all (like trec_eval); every other line is, in this order:
  it is at most 65,536 bytes long, not counting the line end ("line is longer than 65536
  bytes"); it contains no NUL byte; it is valid UTF-8; it has at least 6 (run) or exactly 4
  (qrels) fields; its numbers are well formed; its (qid, docno) pair has not appeared before.
- As in trec_eval, a run line's fields after the sixth are ignored and its rank field is
  never read: a rank that is not an integer is null in the frame. Both are accepted and
  reported as notices (errors.Notice: a count and the first line numbers), never as errors. A line
  failing one of the first four checks gets that one error; otherwise it can get several (a
  bad rank, a bad score, a repeated pair). Every line with the right number of fields claims
  its pair, so a later line with the same pair is a duplicate even if the first was invalid.
- Integers (grade; a rank, when it is one) are ASCII: ``[+-]?[0-9]+``, within the signed 64-bit range. So
  ``1.0``, ``1e2``, ``0x10``, ``1_000``, ``١`` and ``１`` are rejected.
- Scores are ASCII decimal numbers: ``[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?``
  (so ``1.``, ``.5``, ``-0`` and ``1e5`` are fine), read as the nearest double, which must be
  finite: ``nan``, ``inf`` and ``1e999`` are rejected, ``1e-999`` reads as 0.0.
- The Q0 column of a run and the iteration column of qrels may hold any field.
- A file with no lines other than blank lines and comments is an error. Problems with the file
  as a whole (empty, not valid gzip, larger than ``max_bytes``) are reported on line 0.

Every error is collected: a reader raises one :class:`TrecFormatError` holding the first
``max_errors`` of them in line order and the total count, and returns nothing. Counting stops
at ``errors.MAX_ERRORS_COUNTED`` (10,000): the reader stops at that error's line, and the
error's last entry says so (``stopped_at``), so a file of millions of bad lines costs the work
of its first ones.

How :func:`read_run` and :func:`read_qrels` read, fastest first (no Python loop per line
until the last):

1. Polars' CSV reader, for the usual layouts (single spaces or single tabs between fields,
   CRLF, comments at the start of lines), after cheap byte-level checks that make its result
   exact; 16 MiB at a time, so memory stays bounded, each piece copied, checked and parsed on
   one of two worker threads a few pieces ahead of the caller (who may score the pieces it
   has meanwhile: topics.RunTopics). Run pieces in the plainest layout (six fields of
   printable ASCII, single spaces, ``\n`` line ends, an integer rank) are read in place by
   runscan.c (native), in one pass that checks as it reads, where setup has built it; polars
   reads the rest (and all of them without a C compiler), with the same results. For a
   7M-line run, about 1.3 s of CPU with runscan.c, 2.5 s with polars alone.
2. One string per line in polars, whitespace normalised at byte level, split and cast with
   vectorised expressions: any layout, and the exact error report of a file with errors, with
   only the reported lines and the few lines polars cannot judge (invalid UTF-8, NUL bytes,
   long lines) going through the reference line checker. 4 MiB at a time (lines.PIECE_BYTES),
   so memory holds one piece's work besides the frame of a valid file.
3. The line-by-line parser behind :func:`iter_run` and :func:`iter_qrels`, the reference for
   the grammar, when polars cannot read the lines at all; and alone for small inputs (at most
   reading.FEW_BYTES, or reading.FEW_DECLINED_BYTES once path 1 declined), where each polars
   call costs more than the whole parse.

Each path accepts a file only when it is certain the grammar does; tests feed hostile input to
all three and require the same frames and the same error lists.

Modules: errors (LineError, TrecFormatError, the error log), source (bytes, gzip, size limits,
line splitting and line checks, public for other importers), grammar (formats, numbers, the
one line checker of every format, the line-by-line reference parser), reading (the public readers), canonical (path 1), native
(runscan.c, the C reader of path 1's plainest run pieces), lines
(path 2), writing (writers and mapping helpers), topics (a run in chunks of whole topics, for
scoring runs too large to hold whole), fields (trec_eval's other inputs: preference,
qrels_prefs, qrels_jg and z-score files). The names below are the API; the modules'
other names are the package's own.
"""

from .errors import EXTRA_FIELDS, MAX_ERRORS, RANK_NOT_INTEGER, LineError, Notice, TrecFormatError
from .fields import REL_FORMATS, read_prefs, read_qrels_jg, read_qrels_prefs, read_zscores
from .grammar import QRELS_SCHEMA, RUN_SCHEMA, QrelsLine, RunLine
from .reading import iter_qrels, iter_run, read_qrels, read_run
from .source import MAX_LINE_BYTES
from .topics import CHUNK_LINES, NotInTopicBlocks, RunTopics, iter_run_topics, regroup_topics
from .writing import qrels_from_dict, run_from_dict, write_qrels, write_run

__all__ = [
    "CHUNK_LINES",
    "EXTRA_FIELDS",
    "MAX_ERRORS",
    "MAX_LINE_BYTES",
    "QRELS_SCHEMA",
    "RANK_NOT_INTEGER",
    "REL_FORMATS",
    "RUN_SCHEMA",
    "LineError",
    "NotInTopicBlocks",
    "Notice",
    "QrelsLine",
    "RunLine",
    "RunTopics",
    "TrecFormatError",
    "iter_qrels",
    "iter_run",
    "iter_run_topics",
    "qrels_from_dict",
    "read_prefs",
    "read_qrels",
    "read_qrels_jg",
    "read_qrels_prefs",
    "read_run",
    "read_zscores",
    "regroup_topics",
    "run_from_dict",
    "write_qrels",
    "write_run",
]
