"""The bytes of an input file: paths, bytes or binary file objects, plain or gzip, size limits,
a leading byte-order mark, line splitting with bounded memory, and line-level checks (length,
NUL bytes, UTF-8). Shared by the TREC readers and the other line-oriented importers.

- Gzip is recognised by its first two bytes (1f 8b), never by the file name; concatenated
  members and NUL padding after them are read, as gzip(1) does.
- ``max_bytes`` counts decompressed bytes, and reading stops as soon as it is exceeded, so a
  gzip bomb never fills memory. Where the whole input is needed at once (:func:`whole_input`),
  a decompressed input larger than ``SPOOL_BYTES`` is written to a temporary file and mapped,
  not held in memory: the readers let the map's pages go as they read.
- A UTF-8 byte-order mark at the very start is dropped; anywhere else it is data. A file
  starting with a UTF-16 byte-order mark is refused as a whole, asking for UTF-8.
- Lines end with ``\\n`` and are numbered from 1; a ``\\r`` before the ``\\n`` stays in the line
  (the caller decides what it means).

- A file that is no text at all (an image, a PDF, a spreadsheet, an archive: its first bytes
  hold what text cannot, and the ``filetype`` library names their format) is refused as a
  whole, "not a text file", instead of an error on each of its "lines". The one home of that
  check (:func:`text_problem`) for every importer: runs, qrels, topics, documents, pairs,
  judgments, leaderboards, backups.

Problems with the input as a whole (not valid gzip, truncated, too large, not text) raise
:class:`~evaluation.trec.errors.TrecFormatError` with one error on line 0; a source of the wrong
kind raises ValueError.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import mmap
import os
import re
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from typing import IO

import filetype

from .errors import LineError, TrecFormatError

__all__ = [
    "BOM",
    "MAX_LINE_BYTES",
    "SPOOL_BYTES",
    "check_max_bytes",
    "check_source",
    "display_name",
    "has_long_line",
    "iter_chunks",
    "iter_lines",
    "joined",
    "line_problem",
    "read_bytes",
    "split_lines",
    "text_problem",
    "whole_input",
]

MAX_LINE_BYTES = 65536
SPOOL_BYTES = 16 << 20
BOM = b"\xef\xbb\xbf"
WHITESPACE = b" \t\r\x0b\x0c"  # C's isspace without \n: what separates fields
CHUNK = 1 << 20

_GZIP_MAGIC = b"\x1f\x8b"
# A file saved as UTF-16 (Windows "Unicode") starts with one of these; every other byte of
# its text is NUL, so without this check each line would only be "contains a NUL byte".
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# How much of the start of a file tells text from a known binary format (filetype reads as
# much); a byte no text holds: NUL and the C0 controls but tab, LF, VT, FF, CR and ESC.
TEXT_HEAD = 8192
_NOT_TEXT = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
# Compressed input is fed to zlib in small pieces: with an output cap, each call copies the
# input it could not consume, which would be quadratic for one large piece.
_GZIP_FEED = 1 << 16


class _SourceError(Exception):
    """The input as a whole cannot be read (bad gzip, too large); reported on line 0."""


# ---------------------------------------------------------------------------------------------
# Public helpers


def display_name(source, name: str | None) -> str:
    """What errors call the input: ``name``, else the path, else ``"<upload>"``."""
    if name is not None:
        return name
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return "<upload>"


def text_problem(head: bytes) -> str | None:
    """Why a file starting with ``head`` (its first TEXT_HEAD bytes, decompressed) is not a
    text file, or None. Only when its start holds what no text holds (a control byte or
    invalid UTF-8) and is also a format ``filetype`` knows (PNG, JPEG, PDF, XLSX, ZIP, ...):
    a text file with a stray NUL keeps its line-numbered errors, and a text file that merely
    starts like a format ("BM25 Q0 ..." is a BMP signature) is read as text."""
    head = bytes(head[:TEXT_HEAD])
    if not _NOT_TEXT.search(head):
        try:
            head.decode("utf-8")
            return None
        except UnicodeDecodeError as error:
            if error.start >= len(head) - 3:  # a character cut at the end of the head
                return None
    kind = filetype.guess(head)
    if kind is None:
        return None
    return (
        f"not a text file: its first bytes are those of a {kind.extension.upper()} file "
        f"({kind.mime}); save the data as UTF-8 text (plain or gzip)"
    )


def check_source(source) -> None:
    """ValueError unless ``source`` is a path, bytes(-like) or something with ``read``."""
    if not isinstance(source, str | os.PathLike | bytes | bytearray | memoryview) and not (
        hasattr(source, "read")
    ):
        raise ValueError(
            "source must be a path, bytes or a binary file-like object, "
            f"not {type(source).__name__}"
        )


def check_max_bytes(max_bytes) -> None:
    if max_bytes is not None and (
        not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 0
    ):
        raise ValueError(f"max_bytes must be None or a non-negative integer, got {max_bytes!r}")


def iter_chunks(
    source, *, name: str | None = None, max_bytes: int | None = None
) -> Iterator[bytes]:
    """The input's bytes, decompressed if gzip and without a leading byte-order mark, in
    chunks of at most 1 MiB (none empty). Arguments are checked at once; read problems raise
    TrecFormatError (line 0) while iterating."""
    check_source(source)
    check_max_bytes(max_bytes)
    return _reported(display_name(source, name), drop_bom(_decoded(source, max_bytes)))


def iter_lines(
    source,
    *,
    name: str | None = None,
    max_bytes: int | None = None,
    max_line_bytes: int | None = MAX_LINE_BYTES,
) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` for every line of the input, numbered from 1, without the
    ``\\n``; see :func:`split_lines` for lines longer than ``max_line_bytes``. Arguments are
    checked at once; read problems raise TrecFormatError (line 0) while iterating."""
    chunks = iter_chunks(source, name=name, max_bytes=max_bytes)
    return split_lines(chunks, max_line_bytes=max_line_bytes)


def read_bytes(source, *, name: str | None = None, max_bytes: int | None = None) -> bytes:
    """The whole input, decompressed if gzip, without a leading byte-order mark."""
    return joined(iter_chunks(source, name=name, max_bytes=max_bytes))


def split_lines(
    chunks: Iterable[bytes], *, max_line_bytes: int | None = MAX_LINE_BYTES
) -> Iterator[tuple[int, bytes]]:
    """Number the lines of a stream of chunks from 1, without their ``\\n``.

    Memory stays bounded: a line longer than ``max_line_bytes + 1`` bytes that has not ended
    within the current chunk is not kept. It comes out as a stand-in, ``max_line_bytes + 1``
    spaces followed by the line's first non-whitespace byte (a space when it has none): long
    enough for a length check to fail, and enough to tell a comment (``#``). So any line
    longer than ``max_line_bytes`` must be treated as too long without looking further than
    its first byte after the whitespace. ``None``: no limit, every line whole.
    """
    return enumerate(_lines(chunks, max_line_bytes), 1)


def line_problem(line: bytes, *, max_line_bytes: int | None = MAX_LINE_BYTES) -> str | None:
    """What is wrong with a line as a whole, first problem first, or None: longer than
    ``max_line_bytes`` (not counting a final ``\\r``), a NUL byte, not UTF-8."""
    size = len(line)
    if (
        max_line_bytes is not None
        and size > max_line_bytes
        and not (size == max_line_bytes + 1 and line[-1:] == b"\r")
    ):
        return f"line is longer than {max_line_bytes} bytes"
    if b"\x00" in line:
        return "line contains a NUL byte"
    try:
        line.decode()
    except UnicodeDecodeError:
        return "line is not valid UTF-8"
    return None


@contextlib.contextmanager
def whole_input(
    source, *, name: str | None = None, max_bytes: int | None = None
) -> Iterator[bytes | mmap.mmap]:
    """The whole (decompressed) input, copied as little as possible: its bytes, or a read-only
    memory map of a plain file, or of a temporary file holding a decompressed input larger
    than SPOOL_BYTES; a leading byte-order mark is kept. The map (and the temporary file) is
    closed on exit."""
    check_source(source)
    check_max_bytes(max_bytes)
    try:
        with _whole(source, max_bytes) as data:
            yield data
    except _SourceError as error:
        raise TrecFormatError([LineError(display_name(source, name), 0, str(error))]) from None


def drop_bom(chunks: Iterable[bytes]) -> Iterator[bytes]:
    chunks = iter(chunks)
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= len(BOM):
            break
    if head := head.removeprefix(BOM):
        yield head
    yield from chunks


def joined(chunks: Iterable[bytes]) -> bytes:
    """The chunks as one bytes object, in about its size of memory: ``b"".join`` first lists
    the chunks, then copies them, so that a 500 MB gzip expansion briefly took 1 GB."""
    buffer = io.BytesIO()
    for chunk in chunks:
        buffer.write(chunk)
    # Handed over without a copy: nothing else holds the buffer.
    return buffer.getvalue()


def slices(data, size: int = CHUNK) -> Iterator[bytes]:
    """``data`` (bytes or a memory map) in pieces of ``size`` bytes."""
    return (data[start : start + size] for start in range(0, len(data), size))


def translate(data, table: bytes) -> bytes:
    """data.translate(table), also for memory maps."""
    if isinstance(data, bytes):
        return data.translate(table)
    return b"".join(piece.translate(table) for piece in slices(data))


def has_long_line(data, max_line_bytes: int = MAX_LINE_BYTES, *, start: bool = True) -> bool:
    """Whether some line of ``data`` (bytes or a memory map) may exceed ``max_line_bytes``,
    in about len(data) / max_line_bytes steps. ``start``: ``data`` is the start of the input,
    where a byte-order mark does not count (else a piece that starts at a line start).

    Conservative: a line of exactly the limit followed by ``\\r\\n`` counts as long.
    """
    position = len(BOM) if start and data[: len(BOM)] == BOM else 0
    while len(data) - position > max_line_bytes:
        newline = data.rfind(b"\n", position, position + max_line_bytes + 1)
        if newline < 0:
            return True
        position = newline + 1
    return False


# ---------------------------------------------------------------------------------------------
# Reading and decompressing


def _reported(name: str, chunks: Iterator[bytes]) -> Iterator[bytes]:
    try:
        yield from chunks
    except _SourceError as error:
        raise TrecFormatError([LineError(name, 0, str(error))]) from None


def _check_not_utf16(head) -> None:
    """Refuse a file as a whole: UTF-16 text, or no text at all (text_problem)."""
    if head[:2] in _UTF16_BOMS:
        raise _SourceError(
            "file is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8"
        )
    if problem := text_problem(head[:TEXT_HEAD]):
        raise _SourceError(problem)


def _too_large(max_bytes: int) -> _SourceError:
    return _SourceError(f"file is larger than the limit of {max_bytes} bytes (after decompression)")


def _file_chunks(file: IO[bytes]) -> Iterator[bytes]:
    while True:
        chunk = file.read(CHUNK)
        if isinstance(chunk, str):
            raise ValueError("source must be opened in binary mode, not text mode")
        if not chunk:
            return
        yield bytes(chunk)


def _raw_chunks(source) -> Iterator[bytes]:
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as file:
            yield from _file_chunks(file)
    elif isinstance(source, bytes | bytearray | memoryview):
        yield from slices(bytes(source))
    else:
        yield from _file_chunks(source)


def _decoded(source, max_bytes: int | None) -> Iterator[bytes]:
    return _decoded_chunks(_raw_chunks(source), max_bytes)


def _decoded_chunks(raw: Iterator[bytes], max_bytes: int | None) -> Iterator[bytes]:
    """The input's bytes, decompressed if gzip, in chunks of at most 1 MiB; raises
    _SourceError as soon as more than ``max_bytes`` have come out."""
    head = b""
    for chunk in raw:
        head += chunk
        if len(head) >= 2:
            break
    chunks = itertools.chain([head], raw)
    if head.startswith(_GZIP_MAGIC):
        chunks = _gunzip(chunks)
    total = 0
    for chunk in chunks:
        if not total:
            _check_not_utf16(chunk)
        total += len(chunk)
        if max_bytes is not None and total > max_bytes:
            raise _too_large(max_bytes)
        if chunk:
            yield chunk


def _gunzip(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Decompress gzip members one after another, at most CHUNK bytes per step."""
    decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    in_member = False
    for piece in _pieces(chunks, _GZIP_FEED):
        data = piece
        while True:
            if not in_member:
                data = data.lstrip(b"\x00")
                if not data:
                    break
                in_member = True
            try:
                out = decompressor.decompress(data, CHUNK)
            except zlib.error:
                raise _SourceError("not a valid gzip file") from None
            if out:
                yield out
            if decompressor.eof:
                data = decompressor.unused_data
                decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                in_member = False
                continue
            data = decompressor.unconsumed_tail
            # A full output buffer may leave decompressed bytes pending inside zlib.
            if not data and len(out) < CHUNK:
                break
    if in_member:
        raise _SourceError("gzip stream is truncated")


def _pieces(chunks: Iterable[bytes], size: int) -> Iterator[bytes]:
    for chunk in chunks:
        if len(chunk) <= size:
            yield chunk
        else:
            view = memoryview(chunk)
            for start in range(0, len(chunk), size):
                yield bytes(view[start : start + size])


@contextlib.contextmanager
def _whole(source, max_bytes: int | None) -> Iterator[bytes | mmap.mmap]:
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as file:
            if file.peek(2)[:2] == _GZIP_MAGIC:
                with _spooled(_decoded_chunks(_file_chunks(file), max_bytes)) as data:
                    yield data
                return
            size = os.fstat(file.fileno()).st_size
            if max_bytes is not None and size > max_bytes:
                raise _too_large(max_bytes)
            if size == 0:
                yield b""
                return
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                _check_not_utf16(mapped[:TEXT_HEAD])
                yield mapped
        return
    if isinstance(source, bytes) and not source.startswith(_GZIP_MAGIC):
        if max_bytes is not None and len(source) > max_bytes:
            raise _too_large(max_bytes)
        _check_not_utf16(source)
        yield source
    else:
        with _spooled(_decoded(source, max_bytes)) as data:
            yield data


@contextlib.contextmanager
def _spooled(chunks: Iterable[bytes]) -> Iterator[bytes | mmap.mmap]:
    """The chunks as bytes, or, past SPOOL_BYTES, as a memory map of a temporary file (deleted
    on exit): a gzip expansion of hundreds of megabytes then sits in the page cache, not in
    this process's memory."""
    held: list[bytes] = []
    size = 0
    chunks = iter(chunks)
    for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        if size > SPOOL_BYTES:
            break
    else:
        yield joined(held)
        return
    with tempfile.TemporaryFile(prefix="qrelsmith-input-") as file:
        for chunk in itertools.chain(held, chunks):
            file.write(chunk)
        del held
        file.flush()
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield mapped


# ---------------------------------------------------------------------------------------------
# Splitting lines


def _lines(chunks: Iterable[bytes], max_line_bytes: int | None) -> Iterator[bytes]:
    if max_line_bytes is None:
        rest = b""
        for chunk in chunks:
            lines = (rest + chunk if rest else chunk).split(b"\n")
            rest = lines.pop()
            yield from lines
        if rest:
            yield rest
        return

    # The stand-in for a long line is made when one is met, not up front: a generous
    # max_line_bytes must not cost its size in memory for a file with no long line.
    def long_line(start: bytes) -> bytes:
        return b" " * (max_line_bytes + 1) + start

    rest = b""
    skipping = False  # discarding the tail of a long line, up to its newline
    pending_blank = False  # a long line seen so far is whitespace only
    for chunk in chunks:
        if pending_blank:
            chunk = chunk.lstrip(WHITESPACE)
            if not chunk:
                continue
            pending_blank = False
            if chunk[:1] == b"\n":
                yield long_line(b" ")
                chunk = chunk[1:]
            else:
                yield long_line(chunk[:1])
                skipping = True
        if skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            chunk = chunk[newline + 1 :]
            skipping = False
        buffer = rest + chunk if rest else chunk
        lines = buffer.split(b"\n")
        rest = lines.pop()
        yield from lines
        if len(rest) > max_line_bytes + 1:
            start = rest.lstrip(WHITESPACE)[:1]
            if start:
                yield long_line(start)
                skipping = True
            else:
                pending_blank = True
            rest = b""
    if pending_blank:
        yield long_line(b" ")
    elif rest:
        yield rest
