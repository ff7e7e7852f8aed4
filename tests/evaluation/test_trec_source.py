"""Tests for evaluation.trec.source and the readers' handling of sources: paths, bytes and file
objects, gzip (by content, concatenated members, corruption, bombs), size limits, long lines,
and the public helpers other importers reuse (iter_lines, read_bytes, line_problem).
"""

import gzip
import io
import mmap
import tracemalloc
import zlib
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from evaluation.trec import (
    TrecFormatError,
    iter_qrels,
    iter_run,
    read_qrels,
    read_run,
    source,
)
from evaluation.trec.leaderboards import LeaderboardFormatError, read_leaderboard

RUN = b"301 Q0 D1 1 2.5 bm25\n301 Q0 D2 2 1.5 bm25\n302 Q0 D1 1 -3e2 bm25\n"
QRELS = b"301 0 D1 2\n301 0 D9 0\n302 1 D1 -1\n"
NUMBERED_RUN = b"".join(b"%d Q0 D%d 1 %d.5 t\n" % (i, i * 7, i) for i in range(2000))


def errors_of(reader, iterate, data, name: str, **kwargs) -> list[str]:
    """The messages ``reader`` raises for ``data``, after checking that the streaming
    iterator raises the very same errors."""
    with pytest.raises(TrecFormatError) as caught:
        reader(data, name=name, **kwargs)
    with pytest.raises(TrecFormatError) as streamed:
        list(iterate(data, name=name, **kwargs))
    assert (streamed.value.errors, streamed.value.total) == (
        caught.value.errors,
        caught.value.total,
    ), "the reader and the streaming iterator report different errors"
    return [str(error) for error in caught.value.errors]


def run_errors(data, **kwargs) -> list[str]:
    return errors_of(read_run, iter_run, data, "run.txt", **kwargs)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def flip_middle_bytes(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0x55 for b in data[middle : middle + 8]) + data[middle + 8 :]


# --- sources, gzip and size limits ------------------------------------------------------------


def test_path_bytes_and_file_objects_read_the_same(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN)
    expected = read_run(RUN)
    for given in (path, str(path), bytearray(RUN), memoryview(RUN), io.BytesIO(RUN)):
        assert_frame_equal(read_run(given), expected)


def test_gzip_is_recognised_by_content_not_name(tmp_path):
    zipped = tmp_path / "run.txt"  # no .gz suffix
    zipped.write_bytes(gz(RUN))
    plain = tmp_path / "run.gz"  # a .gz suffix on plain text
    plain.write_bytes(RUN)
    for given in (zipped, plain, gz(RUN), io.BytesIO(gz(RUN))):
        assert_frame_equal(read_run(given), read_run(RUN))
    assert list(iter_qrels(gz(QRELS))) == list(iter_qrels(QRELS))


def test_concatenated_gzip_members_and_nul_padding_are_read_like_gzip_does():
    data = gz(RUN[:22]) + gz(RUN[22:]) + b"\x00" * 10
    assert gzip.decompress(data[:-10]) == RUN
    assert_frame_equal(read_run(data), read_run(RUN))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (gz(RUN)[:-6], "gzip stream is truncated"),
        (gz(RUN)[:12], "gzip stream is truncated"),
        (b"\x1f\x8b", "gzip stream is truncated"),
        (b"\x1f\x8b\x08\x00" + b"garbage" * 10, "not a valid gzip file"),
        (flip_middle_bytes(gz(NUMBERED_RUN)), "not a valid gzip file"),
        (gz(RUN) + b"trailing junk", "not a valid gzip file"),
    ],
)
def test_corrupt_or_truncated_gzip_is_one_file_level_error(data, message):
    assert run_errors(data) == [f"run.txt:0: {message}"]


def test_gzip_with_a_bad_checksum_is_rejected():
    data = bytearray(gz(RUN))
    data[-8] ^= 0xFF  # the CRC-32 in the trailer
    assert run_errors(bytes(data)) == ["run.txt:0: not a valid gzip file"]


def test_max_bytes_counts_decompressed_bytes():
    limit = len(RUN) - 1
    message = f"run.txt:0: file is larger than the limit of {limit} bytes (after decompression)"
    assert run_errors(RUN, max_bytes=limit) == [message]
    assert run_errors(gz(RUN), max_bytes=limit) == [message]
    assert read_run(gz(RUN), max_bytes=len(RUN)).height == 3


def test_max_bytes_applies_to_paths_and_file_objects(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN)
    for make_source in (lambda: path, lambda: io.BytesIO(RUN), lambda: io.BytesIO(gz(RUN))):
        with pytest.raises(TrecFormatError, match="larger than the limit of 10 bytes"):
            read_run(make_source(), max_bytes=10)
        with pytest.raises(TrecFormatError, match="larger than the limit of 10 bytes"):
            list(iter_run(make_source(), max_bytes=10))


def test_gzip_bomb_stops_at_the_limit_without_decompressing_everything():
    # 128 MiB of spaces compress to 128 KiB; reading must stop soon after 1 MB of output.
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 24)
    bomb = b"".join(compressor.compress(block) for _ in range(8)) + compressor.flush()
    assert len(bomb) < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(TrecFormatError, match="larger than the limit of 1000000 bytes"):
            read_run(bomb, max_bytes=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * (1 << 20), f"peak memory {peak / 2**20:.0f} MiB while refusing a bomb"


def test_a_large_gzip_expansion_is_mapped_from_a_temporary_file_not_held(monkeypatch):
    monkeypatch.setattr(source, "SPOOL_BYTES", 1000)
    data = NUMBERED_RUN  # about 40 KB
    with source.whole_input(gz(data)) as whole:
        assert isinstance(whole, mmap.mmap)
        assert whole[:] == data
        assert_frame_equal(read_run(gz(data)), read_run(data))
    assert whole.closed
    with source.whole_input(gz(data[:999])) as small:  # within SPOOL_BYTES: plain bytes
        assert small == data[:999]


def test_a_huge_line_is_rejected_without_holding_it_in_memory():
    # iter_run reads in chunks; a 30 MiB line must not be buffered whole.
    def chunks():
        yield b"1 Q0 a 1 1.0 t\n1 Q0 "
        for _ in range(30):
            yield b"x" * (1 << 20)
        yield b" 1 1.0 t\n#" + b"c" * (1 << 21) + b"\n1 Q0 b 2 0.5 t\n"

    source = io.BufferedReader(io.BytesIO(b"".join(chunks())), buffer_size=1 << 16)
    tracemalloc.start()
    try:
        lines = []
        with pytest.raises(TrecFormatError) as caught:
            lines.extend(iter_run(source))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [line.docno for line in lines] == ["a", "b"]
    assert [str(e) for e in caught.value.errors] == ["<upload>:2: line is longer than 65536 bytes"]
    assert peak < 16 * (1 << 20), f"peak memory {peak / 2**20:.0f} MiB for a 30 MiB line"


def test_long_whitespace_line_is_too_long_unless_it_turns_out_to_be_a_comment():
    pad = b" " * (3 << 20)
    data = b"1 Q0 a 1 1.0 t\n" + pad + b"\n" + pad + b"# late comment\n" + pad + b"x\n"
    assert run_errors(data) == [
        "run.txt:2: line is longer than 65536 bytes",
        "run.txt:4: line is longer than 65536 bytes",
    ]


# --- public helpers for other importers -------------------------------------------------------


def test_iter_lines_numbers_lines_from_one_without_bom_or_newline():
    data = b"\xef\xbb\xbffirst\r\n\nthird\xef\xbb\xbf\nlast"
    assert list(source.iter_lines(data)) == [
        (1, b"first\r"),
        (2, b""),
        (3, b"third\xef\xbb\xbf"),
        (4, b"last"),
    ]


def test_iter_lines_reads_gzip_paths_and_file_objects_alike(tmp_path):
    data = b"a b\nc d\n"
    path = tmp_path / "f.txt"
    path.write_bytes(gz(data))
    for given in (path, gz(data), io.BytesIO(gz(data)), data):
        assert list(source.iter_lines(given)) == [(1, b"a b"), (2, b"c d")]


def test_iter_lines_replaces_an_overlong_line_by_a_short_stand_in():
    limit = 100
    long_line = b"  #" + b"x" * (3 * source.CHUNK)  # ends in a later chunk than it starts
    lines = list(source.iter_lines(b"ok\n" + long_line + b"\nafter\n", max_line_bytes=limit))
    assert [number for number, _ in lines] == [1, 2, 3]
    stand_in = lines[1][1]
    assert limit < len(stand_in) < 2 * limit, "the long line was kept whole"
    assert stand_in.split()[0][:1] == b"#", "the stand-in lost the line's first byte"
    assert lines[2] == (3, b"after")


def test_iter_lines_without_a_limit_keeps_long_lines_whole():
    long_line = b"y" * (2 * source.CHUNK + 5)
    assert list(source.iter_lines(long_line + b"\nz", max_line_bytes=None)) == [
        (1, long_line),
        (2, b"z"),
    ]


def test_iter_chunks_gives_non_empty_chunks_of_at_most_one_mebibyte():
    data = bytes(range(256)) * 10_000
    chunks = list(source.iter_chunks(gz(data)))
    assert all(0 < len(chunk) <= source.CHUNK for chunk in chunks)
    assert b"".join(chunks) == data


def test_read_bytes_decompresses_and_drops_a_leading_bom_only():
    data = b"\xef\xbb\xbfqid\xef\xbb\xbf\n"
    assert source.read_bytes(data) == b"qid\xef\xbb\xbf\n"
    assert source.read_bytes(gz(data)) == b"qid\xef\xbb\xbf\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"x" * 11, "f.tsv:0: file is larger than the limit of 10 bytes (after decompression)"),
        (gz(b"x" * 11), "f.tsv:0: file is larger than the limit of 10 bytes (after decompression)"),
        (gz(b"x")[:-4], "f.tsv:0: gzip stream is truncated"),
        (b"\x1f\x8b" + b"junk" * 5, "f.tsv:0: not a valid gzip file"),
    ],
)
def test_read_bytes_reports_file_level_problems_on_line_zero(data, message):
    with pytest.raises(TrecFormatError) as caught:
        source.read_bytes(data, name="f.tsv", max_bytes=10)
    assert str(caught.value) == message


def test_source_helpers_check_their_arguments_before_reading():
    with pytest.raises(ValueError, match="source must be a path"):
        source.iter_lines(42)
    with pytest.raises(ValueError, match="max_bytes must be None"):
        source.iter_chunks(b"", max_bytes=-1)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"fine \xc3\xa9", None),
        (b"x" * 10, None),
        (b"x" * 10 + b"\r", None),  # a CR ending the line is not counted
        (b"x" * 11, "line is longer than 10 bytes"),
        (b"x" * 10 + b"\r\r", "line is longer than 10 bytes"),
        (b"\x00\xff" + b"x" * 20, "line is longer than 10 bytes"),  # the first problem only
        (b"a\x00\xff", "line contains a NUL byte"),
        (b"caf\xe9", "line is not valid UTF-8"),
    ],
)
def test_line_problem_names_the_first_problem_of_a_line(line, problem):
    assert source.line_problem(line, max_line_bytes=10) == problem


# --- "not a text file" (issue 28): one answer for an image, a PDF, a spreadsheet ------------

PNG = (Path(__file__).parents[1] / "data" / "hostile" / "runs" / "photo.png").read_bytes()


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (PNG, "PNG file (image/png)"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + bytes(64), "JPG file (image/jpeg)"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "PDF file (application/pdf)"),
        (b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(40), "ZIP file (application/zip)"),
    ],
)
def test_a_known_binary_format_is_not_a_text_file(head, kind):
    assert source.text_problem(head) == (
        f"not a text file: its first bytes are those of a {kind}; save the data as UTF-8 "
        "text (plain or gzip)"
    )


@pytest.mark.parametrize(
    "text",
    [
        b"BM25 Q0 d1 1 2.5 tag\n",  # a BMP signature, but text
        b"MZ1 0 d1 1\n",  # an EXE signature
        b"ID3 0 d1 1\n",  # an MP3 signature
        b"1 Q0 d\x001 1 2 tag\n",  # a stray NUL: its line's error, not the whole file's
        b"1 0 d1 1\n" * 1000 + "é".encode()[:1],  # a character cut at the head's end
        "1 0 café 1\n".encode(),
    ],
)
def test_text_that_looks_like_a_format_or_has_one_bad_byte_is_still_text(text):
    assert source.text_problem(text[: source.TEXT_HEAD]) is None


def test_every_reader_refuses_an_image_as_a_whole_from_bytes_a_path_or_gzip(tmp_path):
    path = tmp_path / "photo.png"
    path.write_bytes(PNG)
    for read, data, name in (
        (read_run, PNG, "photo.png"),
        (read_qrels, path, None),
        (read_run, gzip.compress(PNG), "photo.png.gz"),
    ):
        with pytest.raises(TrecFormatError) as refused:
            read(data, name=name)
        assert [error.line for error in refused.value.errors] == [0]
        assert "not a text file" in str(refused.value)


def test_a_leaderboard_upload_that_is_an_image_is_one_error():
    with pytest.raises(LeaderboardFormatError) as refused:
        read_leaderboard(PNG, "tot", filename="board.png")
    assert refused.value.errors == [
        "board.png:0: not a text file: its first bytes are those of a PNG file (image/png); "
        "save the data as UTF-8 text (plain or gzip)"
    ]
