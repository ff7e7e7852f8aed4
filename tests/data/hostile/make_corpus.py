"""Write the hostile-input corpus (tests/data/hostile/<kind>/…) and its manifest.json.

    python tests/data/hostile/make_corpus.py [--out DIR]

Every file is made here, byte for byte (gzip with a fixed time stamp), so the corpus is
reproducible; the generated files are committed too, and tests/test_hostile_input.py checks
that this script still writes exactly them. Each case names the file, the entry point a user
would feed it to, what should happen, and the message fragments the user must see:

- ``rejected``: refused with every fragment in the messages, nothing stored;
- ``accepted``: a valid file in an unusual shape (a UTF-8 byte-order mark, CRLF) imports;
- ``neutralised``: imported, but what would run elsewhere (a script in a page, a formula in
  a spreadsheet) is made inert: ``scenario`` names the check.

Entry points: ``web:topics``, ``web:documents``, ``web:pairs``, ``web:gold``, ``web:runs``,
``web:judgments``, ``api:judgments``, ``command:import_judgments``,
``web:guidelines`` (the lead's and engineer's pages), ``api:topics``, ``api:documents``,
``api:runs``, ``api:qrels`` (/api/v1/), ``command:import_campaign`` (manage.py). The campaign
the files go into has topics 1 and 2 and documents d1 to d3; a file's name in a message is
its base name.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
OUT = ROOT  # where files are written (--out: elsewhere, to compare with the committed ones)
MIB = 1024 * 1024
# The upload limit the tests run with (settings.MAX_UPLOAD_MB): the bombs expand past it.
LIMIT_MB = 16
TREC_LINE = "65536"  # evaluation/trec's line cap, as its messages print it
LINE = "65,536"  # annotation/formats' caps, as their messages print them
DOCUMENT_LINE = "1,048,576"

CASES: list[dict] = []


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def bomb(size: int) -> bytes:
    """A gzip file of ``size`` zero bytes, written in pieces (never all in memory)."""
    compressor = gzip.zlib.compressobj(9, gzip.zlib.DEFLATED, 16 + gzip.zlib.MAX_WBITS)
    piece = bytes(MIB)
    out = [compressor.compress(piece) for _ in range(size // MIB)]
    out.append(compressor.flush())
    data = b"".join(out)
    return data[:4] + b"\x00\x00\x00\x00" + data[8:]  # no time stamp: reproducible


def case(path: str, data: bytes, entry: str, outcome: str, why: str, expect=(), **extra):
    CASES.append(
        {
            "file": path,
            "entry": entry,
            "outcome": outcome,
            "why": why,
            "expect": list(expect),
            **extra,
        }
    )
    target = OUT / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def rejected(path, data, entry, why, *expect, **extra):
    case(path, data, entry, "rejected", why, expect, **extra)


def name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


# --- runs (web run upload, API) --------------------------------------------------------------


def runs() -> None:
    good = "1 Q0 d1 1 3.0 bm25\n1 Q0 d2 2 2.0 bm25\n"
    rejected(
        "runs/five_columns.run",
        (good + "1 Q0 d3 3 1.0\n").encode(),
        "web:runs",
        "wrong column count",
        "five_columns.run:3: expected at least 6 fields (qid Q0 docno rank score tag), found 5",
    )
    for stem, score, message in [
        ("score_nan", "nan", "score 'nan' is not finite"),
        ("score_inf", "-inf", "score '-inf' is not finite"),
        ("score_2.5abc", "2.5abc", "score '2.5abc' is not a number"),
        (
            "score_empty_field",
            "",
            "expected at least 6 fields (qid Q0 docno rank score tag), found 5",
        ),
    ]:
        rejected(
            f"runs/{stem}.run",
            (good + f"2 Q0 d1 1 {score} bm25\n").encode(),
            "api:runs" if stem == "score_inf" else "web:runs",
            f"score {score!r}",
            f"{stem}.run:3: {message}",
        )
    rejected(
        "runs/bad_line_for_a_new_system.run",
        (good + "1 Q0 d3 3 x bm25\n").encode(),
        "web:runs",
        "a refused run uploaded for a system created in the same form",
        "bad_line_for_a_new_system.run:3: score 'x' is not a number",
        new_system="fresh",
    )
    rejected(
        "runs/duplicate_docno.run",
        (good + "1 Q0 d1 3 1.0 bm25\n").encode(),
        "web:runs",
        "a document ranked twice for one topic",
        "duplicate_docno.run:3: docno 'd1' already appears for topic '1' on line 1",
    )
    rejected(
        "runs/nul_byte.run",
        (good + "1 Q0 d\x003 3 1.0 bm25\n").encode(),
        "web:runs",
        "NUL byte",
        "nul_byte.run:3: line contains a NUL byte",
    )
    rejected(
        "runs/latin1.run",
        (good + "1 Q0 café 3 1.0 bm25\n").encode("latin-1"),
        "web:runs",
        "latin-1 bytes",
        "latin1.run:3: line is not valid UTF-8",
    )
    rejected(
        "runs/utf16_bom.run",
        good.encode("utf-16"),
        "api:runs",
        "UTF-16 with a byte-order mark",
        "utf16_bom.run:0: file is UTF-16 text (it starts with a UTF-16 byte-order mark); "
        "save it as UTF-8",
    )
    rejected(
        "runs/utf16le_no_bom.run",
        good.encode("utf-16-le"),
        "web:runs",
        "UTF-16 without a byte-order mark",
        "utf16le_no_bom.run:1: line contains a NUL byte",
    )
    rejected(
        "runs/line_10mb.run.gz",
        gz(("1 Q0 " + "d" * (10 * MIB) + " 1 1.0 bm25\n").encode()),
        "web:runs",
        "a 10 MB line (gzip)",
        f"line_10mb.run.gz:1: line is longer than {TREC_LINE} bytes",
    )
    rejected(
        "runs/gzip_bomb.run.gz",
        bomb(4 * LIMIT_MB * MIB),
        "web:runs",
        f"gzip bomb: {4 * LIMIT_MB} MB of zeros",
        f"gzip_bomb.run.gz:0: file is larger than the limit of {LIMIT_MB * MIB} bytes "
        "(after decompression)",
    )
    rejected(
        "runs/truncated.run.gz",
        gz(good.encode() * 50)[:-30],
        "web:runs",
        "truncated gzip",
        "truncated.run.gz:0: gzip stream is truncated",
    )
    rejected("runs/empty.run", b"", "api:runs", "empty file", "The submitted file is empty.")
    rejected(
        "runs/blank_lines_only.run",
        b"\n  \r\n\t\n",
        "web:runs",
        "whitespace only",
        "blank_lines_only.run:0: file has no run lines",
    )
    case(
        "runs/formula_injection.run",
        b'=1+1 Q0 =HYPERLINK("http://evil.example") 1 2.0 bm25\n'
        b"=1+1 Q0 @d2 2 1.0 bm25\n@SUM(1) Q0 @d2 1 1.0 bm25\n+1 Q0 +d3 1 1.0 bm25\n"
        b"-1 Q0 @d2 1 1.0 bm25\n",
        "api:runs",
        "neutralised",
        "formula injection: a run of the formula topics, for its topics.csv",
        ["neutralised"],
        scenario="formula",
    )
    for entry, stem in (("web:runs", "trec_eval_extras"), ("api:runs", "trec_eval_extras_api")):
        case(
            f"runs/{stem}.run",
            b"1 Q0 d1 1 3.0 bm25 reserved field\n1 Q0 d2 NaN-rank 2.0 bm25\n",
            entry,
            "accepted",
            "fields after the sixth and a rank that is not an integer: trec_eval accepts both",
            [
                f"{stem}.run: 1 line has more than 6 fields: the fields after the sixth are "
                "ignored, as trec_eval ignores them (line 1)",
                f"{stem}.run: 1 line has a rank that is not an integer",
            ],
            rows=2,
        )
    case(
        "runs/utf8_bom_crlf.run",
        b"\xef\xbb\xbf" + good.replace("\n", "\r\n").encode(),
        "api:runs",
        "accepted",
        "UTF-8 byte-order mark and CRLF line ends: valid",
        [],
        rows=2,
    )


# --- qrels (API) -------------------------------------------------------------------------------


def qrels() -> None:
    good = "1 0 d1 2\n1 0 d2 0\n"
    rejected(
        "qrels/three_columns.qrels",
        (good + "2 0 d1\n").encode(),
        "api:qrels",
        "wrong column count",
        "three_columns.qrels:3: expected 4 fields (qid iteration docno grade), found 3",
    )
    rejected(
        "qrels/float_grade.qrels",
        (good + "2 0 d1 1.5\n").encode(),
        "api:qrels",
        "float grade",
        "float_grade.qrels:3: grade '1.5' is not an integer",
    )
    rejected(
        "qrels/grade_2abc.qrels",
        (good + "2 0 d1 2abc\n").encode(),
        "api:qrels",
        "trailing garbage after a grade",
        "grade_2abc.qrels:3: grade '2abc' is not an integer",
    )
    rejected(
        "qrels/duplicate_pair.qrels",
        (good + "1 0 d1 3\n").encode(),
        "api:qrels",
        "a pair graded twice",
        "duplicate_pair.qrels:3: docno 'd1' already appears for topic '1' on line 1",
    )
    rejected(
        "qrels/latin1.qrels",
        (good + "2 0 naïve 1\n").encode("latin-1"),
        "api:qrels",
        "latin-1 bytes",
        "latin1.qrels:3: line is not valid UTF-8",
    )
    rejected(
        "qrels/cr_only_line_ends.qrels",
        good.replace("\n", "\r").encode(),
        "api:qrels",
        "old Mac line ends (CR only): one long line",
        "cr_only_line_ends.qrels:1: expected 4 fields (qid iteration docno grade), found 8",
    )
    rejected(
        "qrels/gzip_bomb.qrels.gz",
        bomb(2 * LIMIT_MB * MIB),
        "api:qrels",
        f"gzip bomb: {2 * LIMIT_MB} MB of zeros",
        f"gzip_bomb.qrels.gz:0: file is larger than the limit of {LIMIT_MB * MIB} bytes",
    )
    case(
        "qrels/formula_injection.qrels",
        b'=1+1 0 =HYPERLINK("http://evil.example") 1\n@SUM(1) 0 @d2 2\n+1 0 +d3 0\n',
        "api:qrels",
        "neutralised",
        "formula injection: qrels of the formula topics, to score the run with",
        ["neutralised"],
        scenario="formula",
    )
    case(
        "qrels/bom_mixed_line_ends.qrels",
        b"\xef\xbb\xbf1 0 d1 2\r\n1 0 d2 0\n2 0 d1 1\r\n",
        "api:qrels",
        "accepted",
        "UTF-8 byte-order mark, CRLF and LF mixed: valid",
        [],
        rows=3,
    )


# --- topics (web and API imports) --------------------------------------------------------------


def topics() -> None:
    rejected(
        "topics/three_fields.tsv",
        b"1\tcheap flights\n2\tsourdough\tstarter\n",
        "web:topics",
        "a tab inside the query",
        "three_fields.tsv:2: expected qid<TAB>query (2 fields separated by one tab), found 3",
    )
    rejected(
        "topics/duplicate_qid.tsv",
        b"1\tcheap flights\n1\tsourdough starter\n",
        "web:topics",
        "a qid twice",
        "duplicate_qid.tsv:2: qid '1' already appears on line 1",
    )
    rejected(
        "topics/empty_query.tsv",
        b"1\tcheap flights\n2\t   \n",
        "api:topics",
        "empty field",
        "empty_query.tsv:2: topic '2' has an empty query",
    )
    rejected(
        "topics/duplicate_key.jsonl",
        b'{"qid": "1", "qid": "2", "title": "cheap flights"}\n',
        "web:topics",
        "duplicate JSON key (the last would win silently)",
        "duplicate_key.jsonl:1: duplicate key 'qid' (a key may appear once per object)",
    )
    rejected(
        "topics/not_an_object.jsonl",
        b'{"qid": "1", "title": "cheap flights"}\n["2", "sourdough starter"]\n',
        "web:topics",
        "JSON that is not an object",
        "not_an_object.jsonl:2: expected a JSON object, found a list",
    )
    rejected(
        "topics/deeply_nested.jsonl",
        b'{"qid": "1", "title": ' + b"[" * 30_000 + b"]" * 30_000 + b"}\n",
        "web:topics",
        "JSON nested 30,000 deep (within the line cap)",
        "deeply_nested.jsonl:1: ",
        fmt="jsonl",
    )
    rejected(
        "topics/huge_number.jsonl",
        b'{"qid": ' + b"9" * 5000 + b', "title": "cheap flights"}\n',
        "web:topics",
        "an integer of 5,000 digits (Python refuses to convert it)",
        "huge_number.jsonl:1: not valid JSON: a number has too many digits",
    )
    rejected(
        "topics/query_10mb.tsv.gz",
        gz(b"1\tcheap flights\n2\t" + b"q" * (10 * MIB) + b"\n"),
        "web:topics",
        "a 10 MB query (gzip)",
        f"query_10mb.tsv.gz:2: line is longer than {LINE} bytes",
    )
    rejected(
        "topics/overlong_qid.tsv",
        b"q" * 150 + b"\tcheap flights\n",
        "web:topics",
        "a qid longer than the database column",
        "overlong_qid.tsv:1: qid ",
        "is longer than 100 characters",
    )
    rejected(
        "topics/latin1.tsv",
        "1\tcrème brûlée\n".encode("latin-1"),
        "web:topics",
        "latin-1 bytes",
        "latin1.tsv:1: line is not valid UTF-8",
    )
    rejected(
        "topics/utf16_bom.tsv",
        "1\tcheap flights\n".encode("utf-16"),
        "web:topics",
        "UTF-16 with a byte-order mark",
        "utf16_bom.tsv:0: file is UTF-16 text",
    )
    rejected(
        "topics/nul_byte.tsv",
        b"1\tcheap\x00flights\n",
        "api:topics",
        "NUL byte",
        "nul_byte.tsv:1: line contains a NUL byte",
    )
    rejected(
        "topics/unclosed_top.trec",
        b"<top>\n<num> Number: 301\n<title> crime\n",
        "web:topics",
        "TREC topic never closed",
        "unclosed_top.trec:1: <top> is never closed by </top>",
    )
    rejected(
        "topics/gzip_bomb.tsv.gz",
        bomb(2 * LIMIT_MB * MIB),
        "web:topics",
        f"gzip bomb: {2 * LIMIT_MB} MB of zeros",
        f"gzip_bomb.tsv.gz:0: file is larger than the limit of {LIMIT_MB * MIB} bytes",
    )
    rejected(
        "topics/truncated.jsonl.gz",
        gz(b'{"qid": "1", "title": "cheap flights"}\n' * 40)[:-12],
        "web:topics",
        "truncated gzip",
        "truncated.jsonl.gz:0: gzip stream is truncated",
    )
    rejected("topics/empty.tsv", b"", "web:topics", "empty file", "The submitted file is empty.")
    case(
        "topics/utf8_bom_crlf.tsv",
        b"\xef\xbb\xbfqid\tquery\r\n3\tcheap flights\r\n4\tsourdough starter\r\n",
        "web:topics",
        "accepted",
        "UTF-8 byte-order mark, header and CRLF: valid; the BOM is not part of a qid",
        [],
        rows=2,
        qids=["3", "4"],
    )
    case(
        "topics/formula_injection.tsv",
        "\n".join(
            [
                "=1+1\t=cmd|' /C calc'!A0",
                "@SUM(1)\t@SUM(A1:A9)",
                '+1\t+HYPERLINK("http://evil.example")',
                "-1\t-2+3",
            ]
        ).encode()
        + b"\n",
        "web:topics",
        "neutralised",
        "formula injection: qids and queries that a spreadsheet would run",
        ["neutralised"],
        scenario="formula",
    )
    case(
        "topics/html_in_query.tsv",
        b"1\t<script>alert('query')</script> cheap flights\n"
        b'2\t<img src=x onerror="alert(2)"> sourdough <b>starter</b>\n',
        "web:topics",
        "neutralised",
        "HTML and a script tag in queries",
        ["neutralised"],
        scenario="judging-page",
    )


# --- documents -------------------------------------------------------------------------------


def documents() -> None:
    rejected(
        "documents/wrong_columns.tsv",
        b"docno\ttitle\ttext\nd1\tOne\tFirst.\nd2\tTwo\n",
        "web:documents",
        "a row shorter than the header",
        "wrong_columns.tsv:3: expected 3 fields as in the header, found 2",
    )
    rejected(
        "documents/no_header.csv",
        b"d1,One,First.\n",
        "web:documents",
        "no header row",
        "no_header.csv:1: the first row must be a header naming the columns",
    )
    rejected(
        "documents/unclosed_quote.csv",
        b'docno,text\nd1,"First.\nd2,Second.\n',
        "web:documents",
        "a quote never closed",
        "unclosed_quote.csv:2: not valid CSV",
    )
    rejected(
        "documents/duplicate_key.jsonl",
        b'{"docno": "d1", "docno": "d9", "text": "First."}\n',
        "web:documents",
        "duplicate JSON key",
        "duplicate_key.jsonl:1: duplicate key 'docno' (a key may appear once per object)",
    )
    rejected(
        "documents/duplicate_docno.jsonl",
        b'{"docno": "d1", "text": "First."}\n{"docno": "d1", "text": "Again."}\n',
        "api:documents",
        "a docno twice",
        "duplicate_docno.jsonl:2: docno 'd1' already appears on line 1",
    )
    rejected(
        "documents/not_an_object.jsonl",
        b'"just a string"\n',
        "web:documents",
        "JSON that is not an object",
        "not_an_object.jsonl:1: expected a JSON object, found a string",
    )
    rejected(
        "documents/javascript_url.jsonl",
        b'{"docno": "d1", "title": "One", "url": "javascript:alert(1)"}\n',
        "web:documents",
        "a javascript: url",
        "javascript_url.jsonl:1: url 'javascript:alert(1)' is not an http(s) address",
    )
    rejected(
        "documents/overlong_docno.tsv",
        b"docno\ttext\n" + b"d" * 300 + b"\tlong id\n",
        "web:documents",
        "a docno longer than the database column",
        "overlong_docno.tsv:2: docno ",
        "is longer than 255 characters",
    )
    rejected(
        "documents/line_2mb.jsonl.gz",
        gz(b'{"docno": "d1", "text": "' + b"t" * (2 * MIB) + b'"}\n'),
        "web:documents",
        "a 2 MB document line (gzip), past the 1 MiB cap",
        f"line_2mb.jsonl.gz:1: line is longer than {DOCUMENT_LINE} bytes",
    )
    rejected(
        "documents/nan_docno.jsonl",
        b'{"docno": NaN, "text": "not a number"}\n',
        "web:documents",
        "a non-finite number as a docno",
        "nan_docno.jsonl:1: docno must be a string or an integer, found a number",
    )
    rejected(
        "documents/utf16le_no_bom.jsonl",
        '{"docno": "d1"}\n'.encode("utf-16-le"),
        "web:documents",
        "UTF-16 without a byte-order mark",
        "utf16le_no_bom.jsonl:1: line contains a NUL byte",
        fmt="jsonl",
    )
    case(
        "documents/utf8_bom.csv",
        b'\xef\xbb\xbfdocno,title,text\r\nd1,One,"First, with a comma."\r\n',
        "web:documents",
        "accepted",
        "UTF-8 byte-order mark before the CSV header: valid",
        [],
        rows=1,
    )
    case(
        "documents/script_tags.jsonl",
        b'{"docno": "d1", "title": "<script>alert(\'title\')</script>", '
        b'"text": "cheap flights </textarea><script>alert(\'text\')</script>'
        b'<svg onload=alert(3)>"}\n'
        b'{"docno": "d2", "title": "<b onmouseover=alert(4)>Two</b>", '
        b'"text": "sourdough <iframe src=javascript:alert(5)></iframe> starter"}\n',
        "web:documents",
        "neutralised",
        "script tags and event handlers in document titles and text",
        ["neutralised"],
        scenario="judging-page",
    )
    case(
        "documents/formula_injection.jsonl",
        b'{"docno": "=HYPERLINK(\\"http://evil.example\\")", "title": "=1+1"}\n'
        b'{"docno": "@d2", "title": "@SUM(A1)"}\n'
        b'{"docno": "+d3", "text": "+cmd"}\n',
        "web:documents",
        "neutralised",
        "formula injection: docnos that a spreadsheet would run",
        ["neutralised"],
        scenario="formula",
    )


# --- pairs and gold -------------------------------------------------------------------------


def pairs() -> None:
    rejected(
        "pairs/unknown_qid.txt",
        b"1 d1\n99 d1\n",
        "web:pairs",
        "a topic the campaign does not have",
        "unknown_qid.txt:2: topic '99' is not in this campaign (import it first)",
    )
    rejected(
        "pairs/errors_of_every_kind.txt",
        b"qid docno\n1 d1 extra\n99 d1\n1 d2\n1 d2\n",
        "web:pairs",
        "a field too many, an unknown topic and a repeat: all of them in one answer",
        "errors_of_every_kind.txt:2: expected 2 fields (qid docno), found 3",
        "errors_of_every_kind.txt:3: topic '99' is not in this campaign (import it first)",
        "errors_of_every_kind.txt:5: pair '1' 'd2' already appears on line 4",
    )
    case(
        "pairs/header.tsv",
        b"qid\tdocno\n1\td1\n",
        "web:pairs",
        "accepted",
        "a header line naming the columns, as a topics TSV file may have",
        [],
    )
    rejected(
        "pairs/run_line.txt",
        b"1 Q0 d1 1 3.0 bm25\n",
        "web:pairs",
        "a run file given as pairs",
        "run_line.txt:1: expected 2 fields (qid docno), found 6 (a run line?",
    )
    rejected(
        "pairs/duplicate_pair.txt",
        b"1 d1\n2 d2\n1 d1\n",
        "web:pairs",
        "a pair twice",
        "duplicate_pair.txt:3: pair '1' 'd1' already appears on line 1",
    )
    rejected(
        "pairs/nul_byte.txt",
        b"1 d1\n2 d\x002\n",
        "web:pairs",
        "NUL byte",
        "nul_byte.txt:2: line contains a NUL byte",
    )
    rejected(
        "pairs/comments_only.txt",
        b"# qid docno\n\n# nothing else\n",
        "web:pairs",
        "no pairs at all",
        "comments_only.txt:0: file has no pairs",
    )
    rejected(
        "pairs/long_line.txt",
        b"1 " + b"d" * 70_000 + b"\n",
        "web:pairs",
        "a 70 KB line",
        f"long_line.txt:1: line is longer than {LINE} bytes",
    )
    case(
        "pairs/formula_injection.txt",
        b'=1+1 =HYPERLINK("http://evil.example")\n@SUM(1) @d2\n+1 +d3\n-1 @d2\n',
        "web:pairs",
        "neutralised",
        "formula injection: pairs of the formula topics and documents",
        ["neutralised"],
        scenario="formula",
    )


def gold() -> None:
    rejected(
        "gold/unknown_qid.txt",
        b"1 d1 2\n99 d1 1\n",
        "web:gold",
        "a topic the campaign does not have",
        "unknown_qid.txt:2: topic '99' is not in this campaign (import it first)",
    )
    rejected(
        "gold/negative_grade.txt",
        b"1 d1 -1\n",
        "web:gold",
        "a negative grade, off the campaign's 0-3 scale",
        "negative_grade.txt:1: grade -1 is not on this campaign's scale (0, 1, 2, 3)",
    )
    rejected(
        "gold/float_grade.txt",
        b"1 d1 2.5\n",
        "web:gold",
        "a float grade",
        "float_grade.txt:1: grade '2.5' is not an integer",
    )
    rejected(
        "gold/mixed_layouts.txt",
        b"1 d1 2\n1 0 d2 1\n",
        "web:gold",
        "three fields, then four",
        "mixed_layouts.txt:2: expected 3 fields (qid docno grade) as on line 1, found 4",
    )
    rejected(
        "gold/huge_grade.txt",
        b"1 d1 " + b"9" * 4000 + b"\n",
        "web:gold",
        "a grade of 4,000 digits",
        "huge_grade.txt:1: grade ",
        "is out of range",
    )


# --- judgments made elsewhere (page, API, manage.py import_judgments) ------------------------

HEADER = b"qid,docno,judge,grade\n"


def judgments() -> None:
    rejected(
        "judgments/zero_to_four.csv",
        HEADER + b"1,d1,w1,4\n1,d2,w1,2\n",
        "web:judgments",
        "a 0-4 grade on a 0-3 campaign, without a mapping",
        "zero_to_four.csv:2: grade '4' is not on this campaign's scale (0, 1, 2, 3); 1 line",
        "give a mapping",
    )
    rejected(
        "judgments/unknown_topic.tsv",
        b"qid\tdocno\tjudge\tgrade\n1\td1\tw1\t2\n99\td1\tw1\t1\n",
        "api:judgments",
        "a topic the campaign does not have",
        "unknown_topic.tsv:3: topic '99' is not in this campaign (import it first)",
    )
    rejected(
        "judgments/unknown_document.jsonl",
        b'{"qid": "1", "docno": "nope", "judge": "w1", "grade": 1}\n',
        "command:import_judgments",
        "a document the campaign does not have",
        "unknown_document.jsonl:1: document 'nope' is not in this campaign (import it first)",
    )
    rejected(
        "judgments/not_in_pool.csv",
        HEADER + b"2,d1,w1,1\n",
        "web:judgments",
        "a pair outside the pool, without 'add missing pairs'",
        "not_in_pool.csv:2: pair '2' 'd1' is not in the campaign's pool",
    )
    rejected(
        "judgments/repeated.csv",
        HEADER + b"1,d1,w1,1\n1,d1,w1,2\n",
        "api:judgments",
        "one judge grading one pair twice",
        "repeated.csv:3: the grade of '1' 'd1' by judge 'w1' already appears on line 2",
    )
    rejected(
        "judgments/worker_column.csv",
        b"qid,docno,worker,grade\n1,d1,w1,1\n",
        "web:judgments",
        "a crowd platform's column name",
        "worker_column.csv:1: the first row must be a header naming the columns",
        "unknown column 'worker'",
    )
    rejected(
        "judgments/long_judge.csv",
        HEADER + b"1,d1," + b"w" * 200 + b",1\n",
        "api:judgments",
        "a judge name of 200 characters",
        "long_judge.csv:2: judge 'wwww",
        "is longer than 150 characters",
    )
    rejected(
        "judgments/nul.csv",
        HEADER + b"1,d1,w\x001,1\n",
        "web:judgments",
        "a NUL byte",
        "nul.csv:2: ",
    )
    rejected(
        "judgments/umbrela_garbage.jsonl",
        b'{"model": "m", "query": "cheap flights", "passage": "Some text.", "prompt": "",'
        b' "prediction": "", "judgment": "three", "result_status": "yes"}\n'
        b'{"model": "m", "query": "cheap flights", "passage": "x"\n',
        "api:judgments",
        "UMBRELA output with a bad status and a broken line",
        "umbrela_garbage.jsonl:1: result_status must be 1 or 0",
        "umbrela_garbage.jsonl:2: not valid JSON",
        fmt="umbrela",
    )
    rejected(
        "judgments/autojudge_labels.jsonl",
        b'{"topic_id": "1", "docid": "d1", "username": "alice", "rating": "Perfect"}\n',
        "web:judgments",
        "autojudge-annotate labels without a mapping",
        "autojudge_labels.jsonl:1: grade 'Perfect' is not on this campaign's scale",
    )
    rejected(
        "judgments/gzip_bomb.csv.gz",
        bomb(2 * LIMIT_MB * MIB),
        "web:judgments",
        f"gzip bomb: {2 * LIMIT_MB} MB of zeros",
        f"gzip_bomb.csv.gz:0: file is larger than the limit of {LIMIT_MB * MIB} bytes",
    )
    rejected(
        "judgments/qrels_no_judge.qrels",
        b"1 0 d1 2\n",
        "api:judgments",
        "a qrels file without the judge it belongs to",
        "Name the judge whose grades this qrels file holds.",
    )
    case(
        "judgments/bom_crlf.csv",
        b"\xef\xbb\xbf" + HEADER.replace(b"\n", b"\r\n") + b"1,d1,w1,2\r\n2,d3,w2,0\r\n",
        "web:judgments",
        "accepted",
        "a byte-order mark and CRLF line ends",
    )


# --- campaign backups (manage.py import_campaign) --------------------------------------------


def campaigns() -> None:
    rejected(
        "campaigns/not_an_object.json",
        b'["qrelsmith-campaign", 1]\n',
        "command:import_campaign",
        "JSON that is not an object",
        "not_an_object.json: the document must be a JSON object",
    )
    rejected(
        "campaigns/duplicate_key.json",
        b'{"format": "qrelsmith-campaign", "version": 1, "version": 1}\n',
        "command:import_campaign",
        "duplicate JSON key",
        "duplicate_key.json: document: key 'version' appears more than once",
    )
    rejected(
        "campaigns/deeply_nested.json",
        b"[" * 20_000 + b"]" * 20_000,
        "command:import_campaign",
        "JSON nested 20,000 deep",
        "deeply_nested.json",
        "nested too deeply",
    )
    rejected(
        "campaigns/nan.json",
        b'{"format": "qrelsmith-campaign", "version": NaN}\n',
        "command:import_campaign",
        "NaN is not JSON",
        "nan.json",
        "NaN is not a JSON number",
    )
    rejected(
        "campaigns/latin1.json",
        '{"format": "qrelsmith-campaign", "campaign": "Über"}'.encode("latin-1"),
        "command:import_campaign",
        "latin-1 bytes",
        "latin1.json",
        "not UTF-8 text",
    )
    rejected(
        "campaigns/truncated.json.gz",
        gz(b'{"format": "qrelsmith-campaign", "version": 1}' * 20)[:-10],
        "command:import_campaign",
        "truncated gzip",
        "truncated.json.gz",
        "gzip stream is truncated",
    )
    rejected(
        "campaigns/gzip_bomb.json.gz",
        bomb(2 * LIMIT_MB * MIB),
        "command:import_campaign",
        f"gzip bomb: {2 * LIMIT_MB} MB of zeros",
        "gzip_bomb.json.gz",
        "larger than the limit",
    )
    rejected(
        "campaigns/wrong_format.json",
        b'{"format": "something-else", "version": 1}\n',
        "command:import_campaign",
        "another program's JSON",
        "wrong_format.json: format: must be 'qrelsmith-campaign'",
    )
    rejected(
        "campaigns/empty.json",
        b"",
        "command:import_campaign",
        "empty file",
        "empty.json: not valid JSON: Expecting value (line 1, column 1)",
    )


# --- guidelines (the campaign form's Markdown) -----------------------------------------------


def guidelines() -> None:
    for stem, text in [
        ("script_tag", "Grade **carefully**.\n\n<script>alert('guidelines')</script>\n"),
        ("javascript_link", "See [the rules](javascript:alert('link')) first.\n"),
        (
            "event_handlers",
            '<img src="x" onerror="alert(\'img\')">\n\n<p onclick="alert(1)">Be fair.</p>\n',
        ),
        (
            "iframe_and_style",
            '<iframe src="https://evil.example"></iframe>\n<style>body{display:none}</style>\n'
            "<form action=https://evil.example><input name=p></form>\n",
        ),
    ]:
        case(
            f"guidelines/{stem}.md",
            text.encode(),
            "web:guidelines",
            "neutralised",
            f"Markdown guidelines with {stem.replace('_', ' ')}",
            ["neutralised"],
            scenario="guidelines",
        )
    rejected(
        "guidelines/nul_byte.md",
        b"Grade\x00 carefully.\n",
        "web:guidelines",
        "a NUL byte in a form field",
        "Null characters are not allowed.",
    )


# --- files that are no text at all (issue 28): one answer, not an error per "line" ---------


def png() -> bytes:
    """A 2 x 2 PNG image, byte for byte the same every time."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data).to_bytes(4, "big")
        return len(data).to_bytes(4, "big") + kind + data + crc

    header = (2).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    pixels = zlib.compress(b"\x00" + bytes(range(6)) + b"\x00" + bytes(range(6, 12)), 9)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def xlsx() -> bytes:
    """A spreadsheet's container (a zip with the parts that name it XLSX), fixed dates."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as book:
        for part, body in (
            ("[Content_Types].xml", "<Types/>"),
            ("xl/workbook.xml", "<workbook/>"),
            ("xl/worksheets/sheet1.xml", "<worksheet><c>qid</c><c>docno</c></worksheet>"),
        ):
            book.writestr(zipfile.ZipInfo(part, date_time=(2026, 1, 1, 0, 0, 0)), body)
    return out.getvalue()


def not_text() -> None:
    image = "not a text file: its first bytes are those of a PNG file (image/png)"
    for path, entry in (
        ("runs/photo.png", "web:runs"),
        ("qrels/photo.png", "api:qrels"),
        ("topics/photo.png", "web:topics"),
        ("documents/photo.png", "web:documents"),
        ("pairs/photo.png", "web:pairs"),
        ("gold/photo.png", "web:gold"),
        ("judgments/photo.png", "web:judgments"),
    ):
        rejected(path, png(), entry, "a PNG image", f"photo.png:0: {image}")
    rejected(
        "judgments/grades.xlsx",
        xlsx(),
        "api:judgments",
        "a spreadsheet, not its CSV",
        "grades.xlsx:0: not a text file: its first bytes are those of a XLSX file",
    )
    rejected(
        "documents/photo.png.gz",
        gz(png()),
        "web:documents",
        "a PNG image, gzipped",
        f"photo.png.gz:0: {image}",
    )


def main(argv: list[str]) -> None:
    global OUT
    if argv[:1] == ["--out"] and len(argv) == 2:
        OUT = Path(argv[1])
    elif argv:
        raise SystemExit("usage: make_corpus.py [--out DIR]")
    makers = (runs, qrels, topics, documents, pairs, gold, judgments, campaigns, guidelines)
    for make in (*makers, not_text):
        make()
    manifest = {
        "about": (
            "Hostile and malformed inputs, each fed to the entry point a user would use by "
            "tests/test_hostile_input.py; made by make_corpus.py (run it to write them again)."
        ),
        "max_upload_mb": LIMIT_MB,
        "cases": CASES,
    }
    text = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    (OUT / "manifest.json").write_text(text, encoding="utf-8")
    print(f"wrote {len(CASES)} files and manifest.json under {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
