"""annotation.formats.read_gold: gold grades as ``qid docno grade`` or TREC qrels lines,
strict and all-or-nothing like the other readers.

Pure: no database, no Django.
"""

import gzip

import pytest

from annotation import formats
from annotation.formats import GoldRecord
from evaluation.trec import TrecFormatError


def errors_of(data: bytes, **options) -> list[str]:
    with pytest.raises(TrecFormatError) as caught:
        formats.read_gold(data, name="g", **options)
    return [str(error) for error in caught.value.errors]


def test_three_field_lines_with_comments_blank_lines_and_any_ascii_whitespace():
    data = b"# calibration set\n1 d1 2\n\n1\t d2  0 \r\n2 d3 -1\n"
    assert formats.read_gold(data, name="gold.txt") == [
        GoldRecord("1", "d1", 2, 2),
        GoldRecord("1", "d2", 0, 4),
        GoldRecord("2", "d3", -1, 5),
    ]


def test_trec_qrels_lines_ignore_the_iteration_field():
    data = gzip.compress(b"301 0 FBIS3-10082 1\n301 Q0 FBIS3-10169 0\n")
    assert formats.read_gold(data, name="gold.qrels.gz") == [
        GoldRecord("301", "FBIS3-10082", 1, 1),
        GoldRecord("301", "FBIS3-10169", 0, 2),
    ]


def test_the_first_line_fixes_the_layout_and_every_problem_is_listed_with_its_line():
    data = b"1 d1 2\n1 0 d2 1\n1 d1 3\n2 d3 x\n2 d4 2.5\n2 d5 999999\n9\n1 d6 +3\n"
    assert errors_of(data) == [
        "g:2: expected 3 fields (qid docno grade) as on line 1, found 4",
        "g:3: pair '1' 'd1' already appears on line 1",
        "g:4: grade 'x' is not an integer",
        "g:5: grade '2.5' is not an integer",
        "g:6: grade '999999' is out of range",
        "g:7: expected 3 fields (qid docno grade) as on line 1, found 1",
    ]


def test_a_line_of_neither_layout_before_any_good_line_names_both():
    assert errors_of(b"1 d1\n1 0 d1 2\n") == [
        "g:1: expected 3 fields (qid docno grade) or 4 (qid iter docno grade), found 2"
    ]


def test_a_run_file_is_not_a_gold_file():
    [error] = errors_of(b"1 Q0 d1 1 2.5 bm25\n")
    assert error == "g:1: expected 3 fields (qid docno grade) or 4 (qid iter docno grade), found 6"


def test_a_huge_number_is_out_of_range_without_being_parsed():
    assert errors_of(b"1 d1 " + b"9" * 5000 + b"\n") == [
        "g:1: grade '999999999999999999999999999999999999999999999999999999999...' is out of range"
    ]


@pytest.mark.parametrize("data", [b"", b"# only a comment\n\n"])
def test_an_empty_gold_file_is_an_error(data):
    assert errors_of(data) == ["g:0: file has no gold grades"]


def test_ids_follow_the_database_limits():
    data = b"1 " + b"d" * 256 + b" 1\n"
    assert errors_of(data) == [f"g:1: docno '{'d' * 57}...' is longer than 255 characters"]


def test_the_size_limit_applies_after_decompression():
    data = gzip.compress(b"1 d1 1\n" * 1000)
    [error] = errors_of(data, max_bytes=100)
    assert error.startswith("g:0: ")
