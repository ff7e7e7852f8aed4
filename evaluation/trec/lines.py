"""Reading any layout of run and qrels lines with polars, one string per line, and reporting
the errors of a broken file exactly as the line-by-line parser would (path 2 of the package
docstring), without a Python loop over every line.

The file is read a piece at a time (``PIECE_BYTES``, whole lines), so that memory holds one
piece's work (at most about 30 times its size, for the shortest lines) besides the frame of a
valid file, whatever the file's size; a memory map's pages are let go once read. Pairs repeated across pieces are found the way path 1 finds them while every
piece is valid: by sorting the 64-bit hashes of all pairs once at the end. From the first
piece with an error on, the hashes of the pairs met so far are kept sorted (``Claims``),
each with the line that claimed it first, so that every error is known in line order as the
pieces come: reading stops at the errors' cap (errors.MAX_ERRORS_COUNTED), so a file of
millions of bad lines costs the work of its first piece.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .canonical import _pieces, _release
from .errors import (
    EXTRA_FIELDS,
    NOTICE_LINES,
    RANK_NOT_INTEGER,
    CheckingStopped,
    ErrorLog,
    LineError,
    NoticeLog,
    TrecFormatError,
)
from .grammar import (
    INT_PATTERN,
    SCORE_PATTERN,
    Format,
    check_line,
    duplicate_message,
    has_duplicate_pairs,
    pair_hash,
)
from .line_claims import PIECE_BYTES, Claims, LineIndex
from .source import BOM, MAX_LINE_BYTES, has_long_line, translate

__all__ = ["PIECE_BYTES", "LineIndex", "read_any_layout"]

_WHITESPACE_TO_SPACES = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")
# Bytes that may stand in for polars' column separator when reading whole lines.
_FREE_BYTE_CANDIDATES = [bytes([b]) for b in (0, *range(1, 9), *range(14, 32), 127)]


class _GiveUp(Exception):
    """Polars cannot read the lines exactly: the line-by-line parser decides."""


def read_any_layout(
    fmt: Format,
    data,
    name,
    max_errors,
    notices: NoticeLog | None = None,
    piece_bytes: int | None = None,
) -> pl.DataFrame | None:
    """Vectorised reading of any layout (runs of whitespace, leading whitespace, indented
    comments), with exact error reports and no Python loop over every line.

    Returns the frame or raises TrecFormatError with the same errors, in the same order, as
    the line-by-line parser (which also stops at the errors' cap); returns None in the cases
    that parser has to decide (the two disagree on a line, or two pairs share a hash). Lines polars cannot judge exactly ("suspect": invalid
    UTF-8, which polars reads lossily as U+FFFD, NUL bytes, long lines, numbers the grammar
    accepts but polars does not parse) go through the reference line checker, as do the at
    most ``max_errors`` lines whose messages are reported. ``piece_bytes``: the size of the
    pieces read at a time (default PIECE_BYTES).
    """
    reading = _Reading(fmt, data, name, max_errors, notices)
    try:
        return reading.read(piece_bytes or PIECE_BYTES)
    except _GiveUp:
        return None


def _piece_rows(fmt: Format, data, start: int, end: int, number: int):
    """The content and suspect lines of ``data[start:end]`` (whole lines, the first numbered
    ``number``) with their numbers, fields (field_i, as text) and parsed values, and the
    piece's number of lines."""
    first = start == 0
    piece = data[start:end]
    _release(data, start, end)
    # All whitespace becomes spaces at byte level first (1:1, so lengths and line breaks
    # stay): far cheaper than replacing characters in polars strings.
    spaced = translate(piece, _WHITESPACE_TO_SPACES)
    collapsed = not has_long_line(piece, start=first)
    body = piece[len(BOM) :] if first and piece[: len(BOM)] == BOM else piece
    n_lines = body.count(b"\n") + (1 if body and body[-1:] != b"\n" else 0)
    del piece, body
    if collapsed and spaced.find(b"  ") >= 0:
        # Runs of spaces become one space, also at byte level (polars' regex replacement is
        # several times slower). Lines get shorter, hence only when none is too long.
        while len(shorter := spaced.replace(b"  ", b" ")) < len(spaced):
            spaced = shorter
        del shorter
    lines = _lines(spaced, first)
    if lines is None or lines.height != n_lines:
        # Without a byte free to stand in for the separator (a hostile file can hold them
        # all), or if polars split the lines otherwise, Python splits them: slower, but for
        # one piece only.
        text = (spaced.removeprefix(BOM) if first else spaced).decode("utf-8", "replace")
        split = text.split("\n")
        del text
        if split[-1] == "":
            split.pop()
        lines = pl.DataFrame({"line": split}, schema={"line": pl.String})
        del split
    del spaced
    if lines.height != n_lines:
        raise _GiveUp
    line = pl.col("line")
    stripped = line.str.strip_chars(" ")
    lines = (
        lines.lazy()
        .select(
            pl.int_range(number, number + pl.len(), dtype=pl.Int64).alias("number"),
            (line.str.contains(r"[\x00\x{FFFD}]") | (line.str.len_bytes() > MAX_LINE_BYTES)).alias(
                "suspect"
            ),
            stripped.alias("line"),
        )
        .filter(pl.col("suspect") | ((pl.col("line") != "") & ~line.str.starts_with("#")))
        .collect()
    )
    if not collapsed and lines.select(line.str.contains("  ", literal=True).any()).item():
        lines = lines.with_columns(line.str.replace_all(" {2,}", " "))
    n = fmt.n_fields
    names = fmt.raw_names
    numeric = (*fmt.ints, *fmt.floats, *fmt.free_ints)
    values = []
    for i, (field, dtype) in enumerate(zip(names, fmt.raw_types, strict=True)):
        text = pl.col(f"field_{i}")
        if field in fmt.columns:
            values.append(
                (text if dtype == pl.String else text.cast(dtype, strict=False)).alias(field)
            )
    shape = pl.col(f"field_{n - 1}").is_not_null()
    extra = pl.col(f"field_{n}").is_not_null()
    # An integer the grammar accepts but polars does not read (out of range, a polars
    # limitation) in a field read when it can be: the reference checker decides.
    unread = [
        (
            pl.col(f"field_{i}").str.contains(INT_PATTERN)
            & pl.col(f"field_{i}").cast(pl.Int64, strict=False).is_null()
        ).fill_null(False)
        for i in fmt.free_ints
    ]
    rows = (
        lines.lazy()
        .select("number", "suspect", line.str.split_exact(" ", n).alias("fields"))
        .unnest("fields")
        .select(
            "number",
            pl.any_horizontal(pl.col("suspect"), *unread).alias("suspect"),
            (shape if fmt.extra_fields else shape & ~extra).alias("shape"),
            (extra if fmt.extra_fields else pl.lit(False)).alias("extra"),
            *values,
            *(f"field_{i}" for i in numeric),  # the numbers' text, for error reports
        )
        .collect()
    )
    return rows, n_lines


def _lines(spaced: bytes, first: bool) -> pl.DataFrame | None:
    """The lines of a piece, one string each (invalid UTF-8 read as U+FFFD), read by polars
    with a byte the piece does not hold as separator; None when there is none."""
    separator = next((b for b in _FREE_BYTE_CANDIDATES if spaced.find(b) < 0), None)
    if separator is None:
        return None
    if not first:
        # Polars drops a byte-order mark at the start of what it reads: only the file's
        # first may go, so a later piece starts with a blank line, dropped below.
        spaced = b"\n" + spaced
    try:
        lines = pl.read_csv(
            spaced,
            has_header=False,
            separator=separator.decode(),
            quote_char=None,
            schema={"line": pl.String},
            empty_string_is_null=False,
            raise_if_empty=False,
            encoding="utf8-lossy",
            glob=False,
        )
    except pl.exceptions.PolarsError:
        return None
    return lines if first else lines.slice(1)


class _Reading:
    """read_any_layout's state while it reads the pieces in file order."""

    def __init__(self, fmt, data, name, max_errors, notices) -> None:
        self.fmt, self.data, self.name, self.notices = fmt, data, name, notices
        self.log = ErrorLog(name, max_errors)
        # While every piece is valid: their frames (number and the columns), not yet
        # checked for pairs repeated across pieces. Then: the pairs claimed so far.
        self.frames: list[pl.DataFrame] = []
        self.claims: Claims | None = None
        self.content = 0  # lines that are neither blank nor comments
        self._index: LineIndex | None = None

    def raw_line(self, number: int) -> bytes:
        if self._index is None:
            self._index = LineIndex(self.data)
        return self._index.line(number)

    def read(self, piece_bytes: int) -> pl.DataFrame:
        number = 1
        try:
            for start, end in _pieces(self.data, piece_bytes):
                rows, n_lines = _piece_rows(self.fmt, self.data, start, end, number)
                number += n_lines
                self._take(rows)
            if self.claims is None:
                self._check_frames(final=True)
        except CheckingStopped:
            pass
        self.log.raise_if_any()
        if self.content == 0:
            raise TrecFormatError([LineError(self.name, 0, f"file has no {self.fmt.kind} lines")])
        frames = self.frames
        frame = frames[0] if len(frames) == 1 else pl.concat(frames, rechunk=False)
        return frame.drop("number")

    def _take(self, rows: pl.DataFrame) -> None:
        """One piece's rows (_piece_rows): its frame kept while all is valid, else its errors
        logged."""
        fmt = self.fmt
        if not rows.height:
            return
        names = fmt.raw_names
        # The columns come out chunked differently; eager operations would first copy them
        # all into single chunks (over a second and a gigabyte for 7M lines), lazy ones do not.
        number_ok = [pl.col(names[i]).is_not_null() for i in fmt.ints] + [
            pl.col(names[i]).is_finite().fill_null(False) for i in fmt.floats
        ]
        clean = ~pl.col("suspect") & pl.col("shape") & pl.all_horizontal(number_ok)
        if self.claims is None and rows.lazy().select(clean.all()).collect().item():
            frame = rows.lazy().select("number", *fmt.columns).collect()
            if not has_duplicate_pairs(frame):
                self.content += frame.height
                _note(fmt, rows.lazy(), self.notices)
                self.frames.append(frame)
                return
        self._diagnose(rows)

    def _diagnose(self, rows: pl.DataFrame) -> None:
        """A piece's lines checked exactly: its frame kept when it and all before are valid,
        else its errors logged (with pairs claimed in earlier pieces)."""
        fmt = self.fmt
        # A line with the right number of fields has one problem per number that polars did
        # not parse (or, for scores, parsed as non-finite). A number that polars did not parse
        # although the grammar's pattern accepts it (out of range, or a polars limitation)
        # makes its line suspect, for the reference checker to judge.
        names = fmt.raw_names
        goods, unparsed = [], []
        for i in (*fmt.ints, *fmt.floats):
            value = pl.col(names[i])
            goods.append(
                value.is_not_null() if i in fmt.ints else value.is_finite().fill_null(False)
            )
            pattern = INT_PATTERN if i in fmt.ints else SCORE_PATTERN
            unparsed.append(pl.col(f"field_{i}").str.contains(pattern) & value.is_null())
        rows = rows.lazy().with_columns(
            problems=pl.when(pl.col("shape"))
            .then(pl.sum_horizontal((~good).cast(pl.Int64) for good in goods))
            .otherwise(1)
            .cast(pl.Int64),
        )
        unparsable = (
            rows.filter(pl.col("shape") & (pl.col("problems") > 0) & pl.any_horizontal(unparsed))
            .select("number")
            .collect()
            .to_series()
            .to_list()
        )
        if unparsable:
            rows = rows.with_columns(suspect=pl.col("suspect") | pl.col("number").is_in(unparsable))
        suspects = []
        numbers = rows.filter(pl.col("suspect")).select("number").collect().to_series().to_list()
        for number in numbers:
            checked = check_line(fmt, self.raw_line(number))
            if checked is not None:
                suspects.append((number, checked))
        plain = rows.filter(~pl.col("suspect")) if numbers else rows
        # The lines that claim a pair, with its hash.
        keys = pl.DataFrame(
            [(number, *checked.key) for number, checked in suspects if checked.key],
            schema={"number": pl.Int64, "qid": pl.String, "docno": pl.String},
            orient="row",
        )
        claiming = (
            pl.concat(
                [
                    plain.filter("shape").select("number", pair_hash().alias("hash")).collect(),
                    keys.select("number", pair_hash().alias("hash")),
                ]
            )
            .sort("number")
            .select(pl.col("number"), pl.col("hash").cast(pl.UInt64))
        )
        # Pairs repeated within the piece: exact search only among those whose hashes
        # collide.
        hashes = claiming.get_column("hash").sort()
        repeated = pl.lit(hashes.filter(hashes == hashes.shift(1)).unique()).implode()
        candidates = pl.concat(
            [
                plain.filter(pl.col("shape") & pair_hash().is_in(repeated))
                .select("number", "qid", "docno")
                .collect(),
                keys.filter(pair_hash().is_in(repeated)),
            ]
        )
        repeats = candidates.with_columns(first=pl.col("number").min().over("qid", "docno")).filter(
            pl.col("number") != pl.col("first")
        )
        problems = pl.concat(
            [
                plain.filter(pl.col("problems") > 0).select("number", "problems").collect(),
                pl.DataFrame(
                    [(number, len(checked.problems)) for number, checked in suspects],
                    schema={"number": pl.Int64, "problems": pl.Int64},
                    orient="row",
                ).filter(pl.col("problems") > 0),
            ]
        )
        self.content += plain.select(pl.len()).collect().item() + len(suspects)
        if self.claims is None:
            if not problems.height and not repeats.height:
                _note(fmt, plain, self.notices)
                if self.notices is not None:
                    for number, checked in suspects:
                        for code in checked.notes:
                            self.notices.add(code, number)
                self.frames.append(_assemble(fmt, plain, suspects))
                return
            self._check_frames()  # the pairs repeated before this piece come first
        # A pair claimed in an earlier piece: its first line is there.
        hashes = claiming.get_column("hash").to_numpy()
        earlier = pl.Series("earlier", self.claims.first(hashes), dtype=pl.Int64)
        repeats = (
            claiming.select("number", earlier)
            .filter(pl.col("earlier") > 0)
            .join(repeats.select("number", "first"), on="number", how="full", coalesce=True)
            .select("number", pl.coalesce("earlier", "first").alias("first"), "earlier")
        )
        errors = (
            problems.join(repeats, on="number", how="full", coalesce=True)
            .with_columns(
                errors=pl.col("problems").fill_null(0)
                + pl.col("first").is_not_null().cast(pl.Int64)
            )
            .sort("number")
        )
        self._log(errors)
        self.claims.add(hashes, claiming.get_column("number").to_numpy())

    def _check_frames(self, *, final: bool = False) -> None:
        """Log the pairs that the valid pieces read so far repeat across pieces (each piece
        has none repeated within it), in line order, as path 1 finds them: one sort of all
        their hashes. Unless all is valid at the end, the frames then give way to the pairs
        they claim."""
        frames = self.frames
        numbers = [frame.get_column("number").to_numpy() for frame in frames]
        hashes = [frame.select(pair_hash()).to_series().to_numpy() for frame in frames]
        numbers = np.concatenate(numbers) if numbers else np.empty(0, dtype=np.int64)
        hashes = np.concatenate(hashes) if hashes else np.empty(0, dtype=np.uint64)
        ordered = np.sort(hashes)
        repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
        if len(repeated):
            # Exact search only among the pairs whose hashes collide.
            candidates = pl.concat(
                frame.filter(pair_hash().is_in(pl.lit(pl.Series(repeated)).implode())).select(
                    "number", "qid", "docno"
                )
                for frame in frames
            )
            repeats = (
                candidates.with_columns(first=pl.col("number").min().over("qid", "docno"))
                .filter(pl.col("number") != pl.col("first"))
                .sort("number")
                .select("number", "first", earlier=pl.lit(None, dtype=pl.Int64), errors=1)
            )
            self._log(repeats)
        if not final:
            self.frames = []
            self.claims = Claims(hashes, numbers)

    def _log(self, errors: pl.DataFrame) -> None:
        """Log a piece's errors: ``errors`` has the number of each line with errors (in
        order), how many it has, the first line of its pair when it repeats one, and that
        line again in ``earlier`` when it is in an earlier piece. The first lines logged get
        their messages from the reference checker; the rest are only counted, up to the
        cap."""
        fmt, log = self.fmt, self.log
        listed = 0
        room = log.limit - len(log.errors)
        if room > 0:
            head = errors.select("number", "errors", "first", "earlier").head(room)
            for number, count, first, earlier in head.iter_rows():
                checked = check_line(fmt, self.raw_line(number))
                messages = list(checked.problems) if checked else []
                if first is not None and checked and checked.key:
                    if earlier is not None:
                        before = check_line(fmt, self.raw_line(earlier))
                        if before is None or before.key != checked.key:
                            raise _GiveUp  # two pairs with one hash
                    messages.append(duplicate_message(fmt, checked.key, first))
                if len(messages) != count:  # the two implementations disagree: trust the reference
                    raise _GiveUp
                for message in messages:
                    log.add(number, message)
                listed += 1
        counts = errors.get_column("errors").slice(listed)
        if not len(counts):
            return
        room = log.count_limit - log.total
        if counts.sum() < room:
            log.total += int(counts.sum())
            return
        at = int((counts.cum_sum() >= room).arg_max())
        log.total = log.count_limit
        log.stop(int(errors.get_column("number")[listed + at]))


def _note(fmt: Format, rows: pl.LazyFrame, notices: NoticeLog | None) -> None:
    """Log the notices of vectorised rows: extra fields, free integers that are not ones."""
    if notices is None:
        return
    found = [(EXTRA_FIELDS, pl.col("extra"))]
    found += [
        (RANK_NOT_INTEGER, pl.col(fmt.raw_names[i]).is_null() & pl.col(f"field_{i}").is_not_null())
        for i in fmt.free_ints
    ]
    counts = rows.select(
        *(condition.sum().alias(code) for code, condition in found),
        *(
            pl.col("number").filter(condition).head(NOTICE_LINES).implode().alias(f"{code}_lines")
            for code, condition in found
        ),
    ).collect()
    for code, _ in found:
        count = int(counts.get_column(code).item())
        if count:
            first = counts.get_column(f"{code}_lines").item().to_list()
            notices.add(code, first[0], count, first)


def _assemble(fmt: Format, plain: pl.LazyFrame, suspects: list) -> pl.DataFrame:
    """The frame (number and the columns) of a valid piece from its vectorised rows and its
    reference-checked ones."""
    frame = plain.select("number", *fmt.columns).collect()
    if suspects:
        checked = pl.DataFrame(
            [(number, *checked.values) for number, checked in suspects],
            schema={"number": pl.Int64, **fmt.schema},
            orient="row",
        )
        frame = pl.concat([frame, checked]).sort("number")
    return frame
