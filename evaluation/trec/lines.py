"""Reading any layout of run and qrels lines with polars, one string per line, and reporting
the errors of a broken file exactly as the line-by-line parser would (path 2 of the package
docstring), without a Python loop over every line."""

from __future__ import annotations

import bisect
import itertools

import polars as pl

from .errors import (
    EXTRA_FIELDS,
    NOTICE_LINES,
    RANK_NOT_INTEGER,
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
from .source import BOM, MAX_LINE_BYTES, has_long_line, translate

__all__ = ["LineIndex", "read_any_layout"]

_WHITESPACE_TO_SPACES = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")
# Bytes that may stand in for polars' column separator when reading whole lines.
_FREE_BYTE_CANDIDATES = [bytes([b]) for b in (0, *range(1, 9), *range(14, 32), 127)]


def read_any_layout(
    fmt: Format, data, name, max_errors, notices: NoticeLog | None = None
) -> pl.DataFrame | None:
    """Vectorised reading of any layout (runs of whitespace, leading whitespace, indented
    comments), with exact error reports and no Python loop over every line.

    Returns the frame or raises TrecFormatError with the same errors, in the same order, as
    the line-by-line parser; returns None when polars cannot read the lines (no free byte to
    use as separator) and that parser has to decide. Lines polars cannot judge exactly
    ("suspect": invalid UTF-8, which polars reads lossily as U+FFFD, NUL bytes, long lines,
    numbers the grammar accepts but polars does not parse) go through the reference line
    checker, as do the at most ``max_errors`` lines whose messages are reported.
    """
    separator = next((b for b in _FREE_BYTE_CANDIDATES if data.find(b) < 0), None)
    if separator is None:
        return None
    # All whitespace becomes spaces at byte level first (1:1, so lengths and line breaks
    # stay): far cheaper than replacing characters in polars strings.
    spaced = translate(data, _WHITESPACE_TO_SPACES)
    collapsed = not has_long_line(data)
    if collapsed and spaced.find(b"  ") >= 0:
        # Runs of spaces become one space, also at byte level (polars' regex replacement is
        # several times slower). Lines get shorter, hence only when none is too long.
        while len(shorter := spaced.replace(b"  ", b" ")) < len(spaced):
            spaced = shorter
        del shorter
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
    del spaced
    n_lines = lines.height
    line = pl.col("line")
    stripped = line.str.strip_chars(" ")
    lines = (
        lines.lazy()
        .select(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("number"),
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
    del lines
    # The columns come out chunked differently; eager operations would first copy them all
    # into single chunks (over a second and a gigabyte for 7M lines), lazy ones do not.
    number_ok = [pl.col(names[i]).is_not_null() for i in fmt.ints] + [
        pl.col(names[i]).is_finite().fill_null(False) for i in fmt.floats
    ]
    clean = ~pl.col("suspect") & pl.col("shape") & pl.all_horizontal(number_ok)
    if rows.height and rows.lazy().select(clean.all()).collect().item():
        frame = rows.lazy().select(fmt.columns).collect()
        if not has_duplicate_pairs(frame):
            _note(fmt, rows.lazy(), notices)
            return frame
    return _diagnose(fmt, data, n_lines, rows, name, max_errors, notices)


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


class LineIndex:
    """The bytes of line k of the input, split as the reference parser splits lines, found
    through per-block newline counts rather than a list of every line's offset."""

    _BLOCK = 1 << 16

    def __init__(self, data) -> None:
        self.data = data
        self.first = len(BOM) if data[: len(BOM)] == BOM else 0
        counts = (
            data[start : start + self._BLOCK].count(b"\n")
            for start in range(0, len(data), self._BLOCK)
        )
        self.newlines = list(itertools.accumulate(counts))  # newlines up to each block's end
        total = self.newlines[-1] if self.newlines else 0
        after_last = data.rfind(b"\n") + 1 if total else self.first
        self.count = total + (1 if len(data) > after_last else 0)

    def line(self, number: int) -> bytes:
        start = self.first
        if number > 1:
            # Jump to the block holding newline number - 1, then step through that block.
            block = bisect.bisect_left(self.newlines, number - 1)
            start = block * self._BLOCK
            for _ in range(number - 1 - (self.newlines[block - 1] if block else 0)):
                start = self.data.find(b"\n", start) + 1
        end = self.data.find(b"\n", start)
        return bytes(self.data[start : end if end >= 0 else len(self.data)])


def _diagnose(fmt, data, n_lines, rows, name, max_errors, notices) -> pl.DataFrame | None:
    """Exact errors for read_any_layout (see there). ``rows`` holds the content and suspect
    lines with their numbers, fields (field_i, as text) and parsed values."""
    index = LineIndex(data)
    if index.count != n_lines:  # polars split the lines differently from us: let Python decide
        return None
    raw_line = index.line

    # A line with the right number of fields has one problem per number that polars did not
    # parse (or, for scores, parsed as non-finite). A number that polars did not parse although
    # the grammar's pattern accepts it (out of range, or a polars limitation) makes its line
    # suspect, for the reference checker to judge.
    names = fmt.raw_names
    goods, unparsed = [], []
    for i in (*fmt.ints, *fmt.floats):
        value = pl.col(names[i])
        goods.append(value.is_not_null() if i in fmt.ints else value.is_finite().fill_null(False))
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
        checked = check_line(fmt, raw_line(number))
        if checked is not None:
            suspects.append((number, checked))
    plain = rows.filter(~pl.col("suspect")) if numbers else rows
    # Duplicates: exact search only among pairs whose hashes collide.
    keys = pl.DataFrame(
        [(number, *checked.key) for number, checked in suspects if checked.key],
        schema={"number": pl.Int64, "qid": pl.String, "docno": pl.String},
        orient="row",
    )
    plain_hashes = plain.filter("shape").select(pair_hash()).collect().to_series()
    hashes = pl.concat([plain_hashes, keys.select(pair_hash()).to_series()]).sort()
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
    errors = (
        problems.join(repeats.select("number", "first"), on="number", how="full", coalesce=True)
        .with_columns(
            errors=pl.col("problems").fill_null(0) + pl.col("first").is_not_null().cast(pl.Int64)
        )
        .sort("number")
    )
    if errors.height == 0:
        if plain.select(pl.len()).collect().item() + len(suspects) == 0:
            raise TrecFormatError([LineError(name, 0, f"file has no {fmt.kind} lines")])
        _note(fmt, plain, notices)
        if notices is not None:
            for number, checked in suspects:
                for code in checked.notes:
                    notices.add(code, number)
        return _assemble(fmt, plain, suspects)
    log = ErrorLog(name, max_errors)
    for number, count, first in errors.select("number", "errors", "first").iter_rows():
        if len(log.errors) >= max_errors:
            break
        checked = check_line(fmt, raw_line(number))
        messages = list(checked.problems) if checked else []
        if first is not None and checked and checked.key:
            messages.append(duplicate_message(*checked.key, first))
        if len(messages) != count:  # the two implementations disagree: trust the reference
            return None
        for message in messages:
            log.add(number, message)
    raise TrecFormatError(log.errors, int(errors.get_column("errors").sum()))


def _assemble(fmt: Format, plain: pl.LazyFrame, suspects: list) -> pl.DataFrame:
    """The frame of a valid file from its vectorised rows and its reference-checked ones."""
    frame = plain.select("number", *fmt.columns).collect()
    if suspects:
        checked = pl.DataFrame(
            [(number, *checked.values) for number, checked in suspects],
            schema={"number": pl.Int64, **fmt.schema},
            orient="row",
        )
        frame = pl.concat([frame, checked]).sort("number")
    return frame.drop("number")
