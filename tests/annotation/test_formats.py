"""annotation/formats/: strict, all-or-nothing readers for topics, documents and pairs.

Pure: run with `pytest tests/annotation/test_formats.py -p no:django`.
"""

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from annotation import formats
from annotation.formats import DocumentRecord, PairRecord, TopicRecord
from common import text_limits
from evaluation.trec import TrecFormatError


def errors_of(reader, data: bytes, name: str = "f", **options) -> list[str]:
    with pytest.raises(TrecFormatError) as caught:
        reader(data, name=name, **options)
    return [str(error) for error in caught.value.errors]


ROBUST04_STYLE = b"""<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity.

<narr> Narrative:
A relevant document must name the organization.

</top>

<top>
<num> Number: 302 </num>
<title> Topic: Poliomyelitis and Post-Polio </title>
</top>
"""


# --- topics: TSV ------------------------------------------------------------------------------


def test_tsv_topics_are_read_in_file_order_with_their_lines():
    records = formats.read_topics(b"1\tdog walking\n\n2\tcat food\n", name="t.tsv")
    assert records == [
        TopicRecord("1", "dog walking", "", "", 1),
        TopicRecord("2", "cat food", "", "", 3),
    ]


def test_tsv_topics_accept_a_header_crlf_bom_and_gzip():
    data = b"\xef\xbb\xbfqid\tquery\r\n1\tdog walking\r\n"
    assert formats.read_topics(gzip.compress(data), name="t.tsv.gz") == [
        TopicRecord("1", "dog walking", "", "", 2)
    ]


def test_tsv_topic_errors_name_every_bad_line():
    data = b"1\tdog\n1\tcat\n2\n3\t \n\tno qid\n4 4\tspace in qid\n5\ta\tb\n\xff\tx\n"
    assert errors_of(formats.read_topics, data, fmt="tsv") == [
        "f:2: qid '1' already appears on line 1",
        "f:3: expected qid<TAB>query (2 fields separated by one tab), found 1",
        "f:4: topic '3' has an empty query",
        "f:5: empty qid",
        "f:6: qid '4 4' contains whitespace",
        "f:7: expected qid<TAB>query (2 fields separated by one tab), found 3",
        "f:8: line is not valid UTF-8",
    ]


def test_a_qid_longer_than_the_database_column_is_refused():
    qid = "q" * (formats.MAX_QID_CHARS + 1)
    assert errors_of(formats.read_topics, f"{qid}\tquery\n".encode()) == [
        f"f:1: qid '{'q' * 57}...' is longer than {formats.MAX_QID_CHARS} characters"
    ]


# --- topics: JSONL ----------------------------------------------------------------------------


def test_jsonl_topics_take_title_as_the_query_and_keep_description_and_narrative():
    data = (
        b'{"qid": 301, "title": " crime ", "description": "Find orgs.", "narrative": "Name it."}\n'
        b'{"qid": "302", "query": "polio", "description": null}\n'
    )
    assert formats.read_topics(data, name="t.jsonl") == [
        TopicRecord("301", "crime", "Find orgs.", "Name it.", 1),
        TopicRecord("302", "polio", "", "", 2),
    ]


def test_jsonl_topic_errors_are_specific():
    data = (
        b'{"qid": 1, "title": "a", "narative": "typo"}\n'
        b'{"qid": 2, "title": "a", "query": "b"}\n'
        b"[1, 2]\n"
        b'{"qid": 3, "title": \n'
        b'{"qid": 4.5, "title": "x"}\n'
        b'{"qid": 5, "title": 7}\n'
        b'{"qid": 6}\n'
        b'{"title": "no qid"}\n'
        b'{"qid": 9, "title": ""}\n'
    )
    assert errors_of(formats.read_topics, data) == [
        "f:1: unknown field 'narative' (expected qid, title, query, description, narrative)",
        "f:2: give the query as title or as query, not both",
        "f:3: expected a JSON object, found a list",
        "f:4: not valid JSON: Expecting value (column 21)",
        "f:5: qid must be a string or an integer, found a number",
        "f:6: title must be a string, found a number",
        "f:7: missing 'title' (the query)",
        "f:8: missing 'qid'",
        "f:9: topic '9' has an empty title (the query)",
    ]


# --- topics: TREC -----------------------------------------------------------------------------


def test_trec_topic_files_are_read_with_prefixes_dropped_and_lines_joined():
    records = formats.read_topics(ROBUST04_STYLE, name="topics.301-450")
    assert records == [
        TopicRecord(
            "301",
            "International Organized Crime",
            "Identify organizations that participate in international criminal activity.",
            "A relevant document must name the organization.",
            3,
        ),
        TopicRecord("302", "Poliomyelitis and Post-Polio", "", "", 16),
    ]


def test_trec_topics_may_sit_on_one_line():
    data = b"<top><num>7</num><title>seven</title><desc>d</desc></top>\n"
    assert formats.read_topics(data) == [TopicRecord("7", "seven", "d", "", 1)]


def test_trec_topic_errors_point_at_the_right_lines():
    data = (
        b"stray text\n"  # 1
        b"<top>\n"  # 2
        b"<title> no number\n"  # 3
        b"</top>\n"  # 4
        b"<top>\n"  # 5
        b"<num> Number: 301\n"  # 6
        b"<title> crime\n"  # 7
        b"<con> concepts\n"  # 8
        b"</top>\n"  # 9
        b"<top>\n"  # 10
        b"<num> Number: 301\n"  # 11
        b"<title> crime again\n"  # 12
        b"</top>\n"  # 13
        b"<top>\n"  # 14
        b"<num> Number: 302\n"  # 15
        b"</top>\n"  # 16
        b"<top>\n"  # 17
        b"<num> 303\n"  # 18
        b"<title> open\n"  # 19
    )
    assert errors_of(formats.read_topics, data, fmt="trec") == [
        "f:1: text outside <top> … </top>",
        "f:2: topic has no <num>",
        "f:8: unknown tag <con>; a TREC topic has <top>, <num>, <title>, <desc> and <narr>",
        "f:11: qid '301' already appears on line 6",
        "f:14: topic '302' has no <title> (the query)",
        "f:17: <top> is never closed by </top>",
    ]


def test_a_repeated_field_in_a_trec_topic_names_the_first():
    data = b"<top>\n<num> 1\n<title> a\n<title> b\n</top>\n"
    assert errors_of(formats.read_topics, data) == [
        "f:4: second <title> in one topic (the first is on line 3)"
    ]


# --- topics: format detection -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (b'\n{"qid": 1}\n', "topics.txt", "jsonl"),
        (b"  <TOP>\n", "topics", "trec"),
        (b"1\tq\n", "queries.txt", "tsv"),
        (b"1 q\n", "queries.tsv", "tsv"),  # content cannot tell; the extension can
        (b"1 q\n", "queries.jsonl.gz", "jsonl"),
        (b"1 q\n", "queries.txt", None),
    ],
)
def test_topic_format_is_detected_from_content_then_extension(data, name, expected):
    assert formats.detect_topic_format(data, name) == expected


def test_an_unknown_topic_format_is_refused_naming_the_formats_accepted():
    [error] = errors_of(formats.read_topics, b"1 dog walking\n", name="q.txt")
    assert error.startswith("q.txt:0: cannot tell the format of the file; accepted: TSV")
    assert "JSONL" in error and "TREC topic file" in error


def test_an_explicit_format_overrides_detection():
    assert errors_of(formats.read_topics, b"1\tq\n", fmt="jsonl") == [
        "f:1: not valid JSON: Extra data (column 3)"
    ]
    with pytest.raises(ValueError, match="unknown topics format 'xml'"):
        formats.read_topics(b"1\tq\n", fmt="xml")


def test_a_file_without_topics_is_an_error_on_line_zero():
    assert errors_of(formats.read_topics, b"\n  \n") == ["f:0: file has no topics"]
    assert errors_of(formats.read_topics, b"qid\tquery\n") == ["f:0: file has no topics"]


# --- documents --------------------------------------------------------------------------------


def test_jsonl_documents_are_read():
    data = (
        b'{"docno": "d1", "title": "T", "text": "body", "url": "https://x.org/1"}\n{"docno": 7}\n'
    )
    assert formats.read_documents(data, name="docs.jsonl") == [
        DocumentRecord("d1", "T", "body", "https://x.org/1", 1),
        DocumentRecord("7", "", "", "", 2),
    ]


def test_csv_documents_need_a_header_and_may_quote_newlines_and_commas():
    data = b'text,docno,url\n"line one\nline two, with a comma",d1,\n"say ""hi""",d2,http://x.org\n'
    assert formats.read_documents(data, name="docs.csv") == [
        DocumentRecord("d1", "", "line one\nline two, with a comma", "", 2),
        DocumentRecord("d2", "", 'say "hi"', "http://x.org", 4),
    ]


def test_tsv_documents_need_a_header():
    data = b"docno\ttitle\ttext\nd1\tT\tbody\n"
    assert formats.read_documents(data, name="docs.tsv") == [
        DocumentRecord("d1", "T", "body", "", 2)
    ]
    [error] = errors_of(formats.read_documents, b"d1\tbody\n", fmt="tsv")
    assert error == (
        "f:1: the first row must be a header naming the columns, with docno among them "
        "(for example 'docno\\ttitle\\ttext\\turl')"
    )


def test_document_errors_name_every_bad_line():
    data = (
        b"docno,title,text,url\n"  # 1
        b"d1,a,b,https://x.org\n"  # 2
        b"d1,again,b,\n"  # 3
        b",no docno,b,\n"  # 4
        b"d3,a,b,javascript:alert(1)\n"  # 5
        b"d4,too,few\n"  # 6
        b'd5,"unclosed,b,\n'  # 7
    )
    assert errors_of(formats.read_documents, data) == [
        "f:3: docno 'd1' already appears on line 2",
        "f:4: empty docno",
        "f:5: url 'javascript:alert(1)' is not an http(s) address",
        "f:6: expected 4 fields as in the header, found 3",
        "f:7: not valid CSV: unexpected end of data; reading stopped here",
    ]


def test_unknown_or_repeated_columns_are_refused():
    assert errors_of(formats.read_documents, b"docno,body,url,url\nd1,x,,\n", fmt="csv") == [
        "f:1: unknown column 'body' (expected docno, title, text, url)",
        "f:1: column 'url' appears twice",
    ]
    assert errors_of(formats.read_documents, b'{"doc_id": "d1"}\n') == [
        "f:1: unknown field 'doc_id' (expected docno, title, text, url)",
        "f:1: missing 'docno'",
    ]


def test_a_csv_field_longer_than_the_csv_modules_default_limit_is_read():
    text = "x" * 300_000
    records = formats.read_documents(f"docno,text\nd1,{text}\n".encode(), fmt="csv")
    assert records[0].text == text


@pytest.mark.parametrize(
    ("first_line", "expected"),
    [(b'{"docno": 1}', "jsonl"), (b"docno\ttext", "tsv"), (b"docno,text", "csv")],
)
def test_document_format_is_detected_from_the_first_line(first_line, expected):
    assert formats.detect_document_format(first_line + b"\n", "docs.txt") == expected


def test_a_single_column_document_file_is_told_apart_by_its_extension():
    assert formats.read_documents(b"docno\nd1\n", name="ids.csv") == [
        DocumentRecord("d1", "", "", "", 2)
    ]
    [error] = errors_of(formats.read_documents, b"docno\nd1\n", name="ids.txt")
    assert "cannot tell the format" in error


# --- pairs ------------------------------------------------------------------------------------


def test_pairs_are_qid_docno_per_line_with_comments_and_any_ascii_whitespace():
    data = b"# pool for round 2\n1 d1\n\n1\t\td2  \r\n"
    assert formats.read_pairs(data, name="pairs.txt") == [
        PairRecord("1", "d1", 2),
        PairRecord("1", "d2", 4),
    ]


def test_pair_errors_hint_at_qrels_and_run_files():
    data = b"1 d1\n1 d1\n1 0 d2 1\n1 Q0 d3 1 2.5 run\n2\n"
    assert errors_of(formats.read_pairs, data) == [
        "f:2: pair '1' 'd1' already appears on line 1",
        "f:3: expected 2 fields (qid docno), found 4 (a qrels line?)",
        "f:4: expected 2 fields (qid docno), found 6 (a run line? pool runs on the pool page)",
        "f:5: expected 2 fields (qid docno), found 1",
    ]


@pytest.mark.parametrize(
    "header", [b"qid docno", b"QID\tDOCNO", b"topic_id doc_id", b"query_id docid", b"topic docno"]
)
def test_a_pairs_file_may_start_with_a_header_naming_its_columns(header):
    data = b"# pool\n" + header + b"\n1 d1\n"
    assert formats.read_pairs(data, name="pool.tsv") == [PairRecord("1", "d1", 3)]


def test_only_the_first_data_line_of_a_pairs_file_can_be_a_header():
    data = b"1 d1\nqid docno\n"
    assert formats.read_pairs(data, name="pool.tsv") == [
        PairRecord("1", "d1", 1),
        PairRecord("qid", "docno", 2),  # a pair like any other: the caller's topics decide
    ]
    assert errors_of(formats.read_pairs, b"qid docno grade\n1 d1\n") == [
        "f:1: expected 2 fields (qid docno), found 3"
    ]


@pytest.mark.parametrize(
    ("header", "line"), [(b"qid docno grade", b"1 d1 2"), (b"qid iter docno rel", b"1 0 d1 2")]
)
def test_a_gold_file_may_start_with_a_header_naming_its_columns(header, line):
    assert formats.read_gold(header + b"\n" + line + b"\n", name="gold.tsv") == [
        formats.GoldRecord("1", "d1", 2, 2)
    ]
    # A number where the grade's name would be: a line of data, refused for its qid's sake
    # by the caller, not skipped.
    assert formats.read_gold(b"qid docno 2\n", name="gold.tsv") == [
        formats.GoldRecord("qid", "docno", 2, 1)
    ]


def test_the_callers_check_joins_the_files_own_problems_in_line_order():
    """A field-count problem, a repeat and a topic the caller does not know: one answer."""
    data = b"1 d1\n1 d1 extra\n1099 d2\n1 d1\n7 d3\n"

    def unknown_topics(records):
        return [(r.line, f"topic {r.qid!r} is unknown") for r in records if r.qid != "1"]

    assert errors_of(formats.read_pairs, data, check=unknown_topics) == [
        "f:2: expected 2 fields (qid docno), found 3",
        "f:3: topic '1099' is unknown",
        "f:4: pair '1' 'd1' already appears on line 1",
        "f:5: topic '7' is unknown",
    ]


def test_the_callers_check_counts_toward_the_10000_error_stop():
    data = b"".join(b"9 d%d\n" % i for i in range(10_005))
    with pytest.raises(TrecFormatError) as caught:
        formats.read_pairs(data, name="p", check=lambda rs: [(r.line, "unknown") for r in rs])
    assert caught.value.total == 10_000
    assert caught.value.stopped_at == 10_000
    assert len(caught.value.errors) == 51  # the first 50 listed, then where checking stopped


def test_an_empty_pairs_file_is_an_error():
    assert errors_of(formats.read_pairs, b"# only a comment\n") == ["f:0: file has no pairs"]


# --- shared: error cap, input ----------------------------------------------------------------


def test_errors_are_capped_in_line_order_and_all_counted():
    data = b"".join(b"%d\n" % i for i in range(120))
    with pytest.raises(TrecFormatError) as caught:
        formats.read_pairs(data, name="p", max_errors=5)
    error = caught.value
    assert error.total == 120
    assert [e.line for e in error.errors] == [1, 2, 3, 4, 5]
    assert str(error).endswith("... and 115 more errors")


def test_reading_stops_at_the_10000th_error_and_says_where():
    # A gzip of one bad line repeated can expand to millions of lines: reading stops at the
    # cap shared with evaluation.trec's readers, so it costs the work of its first lines.
    data = gzip.compress(b'{"qid": 1}\n' * 50_000)
    with pytest.raises(TrecFormatError) as caught:
        formats.read_topics(data, name="t.jsonl")
    error = caught.value
    assert (error.total, error.stopped_at, len(error.errors)) == (10_000, 10_000, 51)
    assert str(error.errors[0]) == "t.jsonl:1: missing 'title' (the query)"
    assert str(error.errors[-1]) == (
        "t.jsonl:10000: checking stopped at this line after 10,000 errors; the lines after it "
        "were not checked"
    )


def test_json_nested_deeper_than_the_cap_is_refused_before_decoding():
    deep = b'{"qid": "1", "title": "q", "x": ' + b"[" * 33 + b"]" * 33 + b"}\n"
    ok = b'{"qid": "2", "title": "q", "x": ' + b"[" * 31 + b"]" * 31 + b"}\n"
    assert errors_of(formats.read_topics, deep + ok) == [
        "f:1: not valid JSON: nested too deeply (more than 32 levels of arrays and objects)",
        "f:2: unknown field 'x' (expected qid, title, query, description, narrative)",
    ]


def test_input_may_be_a_path_or_a_binary_file(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_bytes(b"1 d1\n")
    assert formats.read_pairs(path) == [PairRecord("1", "d1", 1)]
    with path.open("rb") as file:
        assert formats.read_pairs(file) == [PairRecord("1", "d1", 1)]
    with pytest.raises(TrecFormatError, match=r"pairs\.txt:1: expected 2 fields"):
        formats.read_pairs(b"x\n", name="pairs.txt")
    with pytest.raises(ValueError, match="binary mode"), path.open() as text_file:
        formats.read_pairs(text_file)
    with pytest.raises(ValueError, match="not int"):
        formats.read_pairs(3)


def test_gzip_is_recognised_by_content_and_bad_gzip_is_reported():
    assert formats.read_pairs(gzip.compress(b"1 d1\n") + gzip.compress(b"1 d2\n")) == [
        PairRecord("1", "d1", 1),
        PairRecord("1", "d2", 2),
    ]
    assert errors_of(formats.read_pairs, gzip.compress(b"1 d1\n" * 100)[:-4]) == [
        "f:0: gzip stream is truncated"
    ]
    assert errors_of(formats.read_pairs, b"\x1f\x8b\x08\x00garbage-garbage") == [
        "f:0: not a valid gzip file"
    ]


def test_the_size_limit_counts_decompressed_bytes():
    bomb = gzip.compress(b"1 d1\n" * 1_000_000)
    assert errors_of(formats.read_pairs, bomb, max_bytes=1000) == [
        "f:0: file is larger than the limit of 1000 bytes (after decompression)"
    ]
    assert formats.read_pairs(b"1 d1\n", max_bytes=5) == [PairRecord("1", "d1", 1)]


def test_a_nul_byte_is_an_error():
    assert errors_of(formats.read_pairs, b"1 d\x001\n") == ["f:1: line contains a NUL byte"]


def test_errors_found_at_the_end_of_a_trec_topic_still_come_first_under_the_cap():
    # The missing <num> of the topic opened on line 1 is only known at its </top> (line 4),
    # after the unknown tag on line 2 was reported.
    data = b"<top>\n<con> x\n<title> a\n</top>\n"
    with pytest.raises(TrecFormatError) as caught:
        formats.read_topics(data, name="f", max_errors=1)
    assert [str(e) for e in caught.value.errors] == ["f:1: topic has no <num>"]
    assert caught.value.total == 2


def test_blank_lines_before_the_first_record_keep_their_numbers():
    data = b"\n  \r\n\ndocno,text\nd1,x\nd1,y\n"
    assert errors_of(formats.read_documents, data) == ["f:6: docno 'd1' already appears on line 5"]
    assert formats.read_documents(data[:-5]) == [DocumentRecord("d1", "", "x", "", 5)]


def test_a_file_too_large_is_reported_as_such_even_when_its_format_is_unknown():
    bomb = gzip.compress(b"1 dog walking\n" * 100_000)
    assert errors_of(formats.read_topics, bomb, name="q.txt", max_bytes=1000) == [
        "q.txt:0: file is larger than the limit of 1000 bytes (after decompression)"
    ]


def test_a_byte_order_mark_only_counts_at_the_very_start():
    assert formats.read_pairs(b"\xef\xbb\xbf1 d1\n") == [PairRecord("1", "d1", 1)]
    # Anywhere else it is data (U+FEFF is not whitespace), as in run and qrels files.
    assert formats.read_pairs(b"1 d1\n\xef\xbb\xbf1 d2\n")[1] == PairRecord("\ufeff1", "d2", 2)


def test_formats_imports_no_django():
    probe = (
        "import sys, annotation.formats; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework'}))"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]", (
        f"annotation.formats loads {result.stdout.strip()}; it must stay pure (no Django)"
    )


# --- hostile lines: length caps, repeated JSON keys, huge numbers ----------------------------


def test_a_topic_line_longer_than_the_cap_is_refused_with_its_line_and_never_kept_whole():
    data = b"1\tfine\n2\t" + b"q" * (10 * 1024 * 1024) + b"\n3\tfine too\n"
    assert errors_of(formats.read_topics, data) == [
        f"f:2: line is longer than {formats.MAX_LINE_BYTES:,} bytes"
    ]


def test_the_line_cap_counts_bytes_without_the_line_end_and_can_be_set():
    limit = formats.MAX_LINE_BYTES
    exact = b"1\t" + b"q" * (limit - 2)
    # A line of exactly the limit is read (its query is then refused for its own cap).
    assert errors_of(formats.read_topics, exact + b"\r\n") == [
        f"f:1: query is longer than {text_limits.QUERY:,} characters"
    ]
    assert errors_of(formats.read_topics, b"0\tok\n" + exact + b"q\n") == [
        f"f:2: line is longer than {limit:,} bytes"
    ]
    assert errors_of(formats.read_topics, b"1\tabcdef\n", fmt="tsv", max_line_bytes=5) == [
        "f:1: line is longer than 5 bytes"
    ]
    with pytest.raises(ValueError, match="max_line_bytes"):
        formats.read_topics(b"1\tq\n", max_line_bytes=0)


def test_a_long_line_in_gzip_is_refused_like_a_plain_one():
    data = gzip.compress(b'{"qid": "1", "title": "' + b"x" * 200_000 + b'"}\n')
    assert errors_of(formats.read_topics, data) == [
        f"f:1: line is longer than {formats.MAX_LINE_BYTES:,} bytes"
    ]


def test_documents_may_have_long_lines_up_to_their_own_cap():
    text = "t" * 500_000
    [record] = formats.read_documents(f'{{"docno": "d1", "text": "{text}"}}\n'.encode())
    assert record.text == text
    too_long = b"docno\ttext\nd1\t" + b"t" * formats.MAX_DOCUMENT_LINE_BYTES + b"\n"
    assert errors_of(formats.read_documents, too_long) == [
        f"f:2: line is longer than {formats.MAX_DOCUMENT_LINE_BYTES:,} bytes"
    ]


def test_long_pair_and_gold_lines_are_refused_but_long_comments_are_skipped():
    comment = b"# " + b"c" * 100_000 + b"\n"
    assert formats.read_pairs(comment + b"1 d1\n") == [PairRecord("1", "d1", 2)]
    long_pair = b"1 " + b"d" * 100_000 + b"\n"
    assert errors_of(formats.read_pairs, long_pair) == [
        f"f:1: line is longer than {formats.MAX_LINE_BYTES:,} bytes"
    ]
    assert errors_of(formats.read_gold, b"1 d1 2\n" + long_pair) == [
        f"f:2: line is longer than {formats.MAX_LINE_BYTES:,} bytes"
    ]


def test_a_long_first_line_still_tells_the_format_and_is_reported():
    # Detection sees the long line's first byte ("{"), so the message is the line's length,
    # not "cannot tell the format".
    data = b'{"qid": "' + b"1" * 70_000 + b'"}\n'
    assert errors_of(formats.read_topics, data) == [
        f"f:1: line is longer than {formats.MAX_LINE_BYTES:,} bytes"
    ]


def test_a_long_first_line_that_hides_the_format_is_named_with_the_format_error():
    data = b"1\t" + b"q" * 70_000 + b"\n"
    errors = errors_of(formats.read_topics, data, name="topics.txt")
    assert errors[0].startswith("topics.txt:0: cannot tell the format of the file")
    assert errors[1:] == [f"topics.txt:1: line is longer than {formats.MAX_LINE_BYTES:,} bytes"]
    # With a name that tells the format, only the line is wrong.
    assert errors_of(formats.read_topics, data, name="topics.tsv") == [
        f"topics.tsv:1: line is longer than {formats.MAX_LINE_BYTES:,} bytes"
    ]


def test_a_repeated_json_key_is_refused_naming_the_key_instead_of_keeping_the_last():
    assert errors_of(formats.read_topics, b'{"qid": "1", "qid": "2", "title": "q"}\n') == [
        "f:1: duplicate key 'qid' (a key may appear once per object)"
    ]
    data = b'{"docno": "d1", "text": "a"}\n{"docno": "d2", "text": "a", "text": "b", "url": null, "url": null}\n'
    assert errors_of(formats.read_documents, data) == [
        "f:2: duplicate keys 'text', 'url' (a key may appear once per object)"
    ]


def test_a_repeated_key_inside_a_nested_value_is_refused_too():
    assert errors_of(formats.read_documents, b'{"docno": "d1", "title": {"a": 1, "a": 2}}\n') == [
        "f:1: duplicate key 'a' (a key may appear once per object)"
    ]


def test_a_number_too_long_to_convert_is_an_error_not_a_crash():
    data = b'{"qid": ' + b"7" * 5000 + b', "title": "q"}\n'
    assert errors_of(formats.read_topics, data) == [
        "f:1: not valid JSON: a number has too many digits"
    ]


def test_non_finite_json_numbers_are_not_ids():
    assert errors_of(formats.read_topics, b'{"qid": NaN, "title": "q"}\n') == [
        "f:1: qid must be a string or an integer, found a number"
    ]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_file_is_refused_asking_for_utf8(encoding):
    data = "1\tcheap flights\n".encode(encoding)
    if encoding == "utf-16":  # with a byte-order mark: told at once, plain or gzip
        for payload in (data, gzip.compress(data)):
            assert errors_of(formats.read_topics, payload) == [
                "f:0: file is UTF-16 text (it starts with a UTF-16 byte-order mark); "
                "save it as UTF-8"
            ]
    else:  # without one, every line holds NUL bytes
        assert "line contains a NUL byte" in errors_of(formats.read_topics, data, fmt="tsv")[0]


def test_a_generous_line_cap_costs_no_memory_up_front():
    # The stand-in for a long line is only built when one is met (evaluation/trec/source.py).
    assert formats.read_topics(b"1\tq\n", max_line_bytes=2**40) == [
        TopicRecord("1", "q", "", "", 1)
    ]


# --- judgments made elsewhere: the JSON line readers --------------------------------------


def test_judgment_json_lines_name_unknown_fields_and_bad_lines_per_format():
    jsonl = (
        b'{"qid": "1", "docno": "d1", "judge": "ann", "grade": 2, "mood": "x", "why": 1}\n'
        b"[1]\n"
        b'{"qid": "1", "docno": "d2", "judge": "ann"}\n'
    )
    assert errors_of(formats.read_judgments, jsonl, fmt="jsonl") == [
        "f:1: unknown fields 'mood', 'why' (expected qid, docno, judge, grade, note, seconds, "
        "judged_at)",
        "f:2: expected a JSON object, found a list",
        "f:3: missing 'grade'",
    ]
    umbrela = (
        b'{"model": "m", "judgment": 2, "result_status": 1, "query": "q", "passage": "p", '
        b'"colour": "red"}\n'
        b"not json\n"
    )
    assert errors_of(formats.read_judgments, umbrela, fmt="umbrela") == [
        "f:1: unknown UMBRELA field 'colour'",
        "f:2: not valid JSON: Expecting value (column 1)",
    ]
    # autojudge-annotate lines carry many keys of their own: none is refused as unknown.
    autojudge = b'{"topic_id": "1", "docid": "d1", "username": "u", "rating": "High", "x": 1}\n'
    parsed = formats.read_judgments(autojudge, name="f", fmt="autojudge")
    assert [(r.qid, r.docno, r.judge, r.label) for r in parsed.records] == [
        ("1", "d1", "u", "High")
    ]


# --- free text caps (common.text_limits; issue 27) ----------------------------------------


def test_a_topics_query_description_and_narrative_are_capped_with_their_lines():
    query, text = text_limits.QUERY, text_limits.TOPIC_TEXT
    jsonl = (
        b'{"qid": "1", "title": "ok"}\n'
        + b'{"qid": "2", "title": "'
        + b"q" * (query + 1)
        + b'"}\n'
        + b'{"qid": "3", "title": "ok", "narrative": "'
        + b"n" * (text + 1)
        + b'"}\n'
    )
    assert errors_of(formats.read_topics, jsonl, max_line_bytes=1 << 20) == [
        f"f:2: query is longer than {query:,} characters",
        f"f:3: narrative is longer than {text:,} characters",
    ]
    trec = (
        b"<top>\n<num> Number: 7\n<title> fine\n<desc> Description:\n"
        + b"d " * (text // 2 + 1)
        + b"\n<narr> Narrative: short\n</top>\n"
    )
    assert errors_of(formats.read_topics, trec) == [
        f"f:4: description is longer than {text:,} characters"
    ]


def test_topic_texts_at_their_caps_are_read():
    line = (
        b'{"qid": "1", "title": "'
        + b"q" * text_limits.QUERY
        + b'", "description": "'
        + b"d" * text_limits.TOPIC_TEXT
        + b'"}\n'
    )
    (topic,) = formats.read_topics(line, max_line_bytes=1 << 20)
    assert (len(topic.query), len(topic.description)) == (text_limits.QUERY, text_limits.TOPIC_TEXT)
