"""trec_eval's other input files, read with the same rules and errors as runs and qrels.

    prefs        (-R prefs)        qid  jg  jsg  docno  level     preferences by judgment group
                                                                  (jg) and subgroup (jsg)
    qrels_prefs  (-R qrels_prefs)  qid  jg   docno  level         a qrels file read as
                                                                  preferences (jg = iteration)
    qrels_jg     (-R qrels_jg)     qid  jg   docno  grade         a qrels file whose iteration
                                                                  field names the judgment group
    zscores      (-Z)              qid  measure  mean  stddev     per-topic means and standard
                                                                  deviations of measures

The byte-level rules are those of the run and qrels readers (evaluation.trec): plain or gzip,
UTF-8, fields separated by runs of C's whitespace, blank lines and lines starting with ``#``
skipped (trec_eval 10.0 skips such comments; 9.0.8 has none), at most 65,536 bytes a line.
Each line has exactly the listed fields. ``level``, ``mean`` and ``stddev`` are decimal numbers
(``[+-]?digits[.digits][e[+-]digits]``, finite), where trec_eval's atof would read ``2.5abc`` as
2.5; ``grade`` is an integer. A z-score file's ``mean`` and ``stddev`` may also be ``nan`` or
``inf`` (any case, signed, ``infinity`` too), as printf writes a statistic of values that
include one: trec_eval's own test file for -Z holds ``nan``, and the z-scores computed with it
are NaN as trec_eval's are. A line repeating another's key (all fields but the numbers) is
an error where trec_eval would count a preference twice, or pick one of two z-scores at random.

Every problem is reported as ``path:line: message``, the file is all-or-nothing, and no line is
looped over in Python unless it is reported or suspect (invalid UTF-8, NUL, too long): the
lines are split and checked with polars expressions, and the reference checker
:func:`evaluation.trec.grammar.check_line` (the one for runs and qrels too) gives the reported
lines their messages.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from .errors import MAX_ERRORS, ErrorLog, TrecFormatError, check_max_errors
from .grammar import (
    FLOAT,
    INT,
    INT_PATTERN,
    NON_FINITE_PATTERN,
    SCORE_PATTERN,
    STATISTIC,
    check_line,
    duplicate_message,
)
from .source import BOM, MAX_LINE_BYTES, display_name, whole_input

__all__ = [
    "PREFS",
    "QRELS_JG",
    "QRELS_PREFS",
    "REL_FORMATS",
    "ZSCORES",
    "FieldsFormat",
    "check_line",
    "read_prefs",
    "read_qrels_jg",
    "read_qrels_prefs",
    "read_zscores",
]

# The relevance inputs evaluate's -R names: qrels (read_qrels) and three of this module's.
REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")

_WHITESPACE_TO_SPACES = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")


@dataclass(frozen=True)
class FieldsFormat:
    """One file format: its fields in file order, which are numbers, which form the key."""

    kind: str  # as in "file has no prefs lines"
    names: tuple[str, ...]
    numbers: tuple[tuple[str, str], ...]  # (field, "int", "float" or "statistic")
    key: tuple[str, ...]  # string fields that may not repeat together
    extra_fields = False  # every line has exactly the listed fields (grammar.check_line)

    @property
    def n_fields(self) -> int:
        return len(self.names)

    @property
    def usage(self) -> str:
        return " ".join(self.names)

    @property
    def schema(self) -> dict[str, type[pl.DataType]]:
        kinds = dict(self.numbers)
        return {
            name: {INT: pl.Int64, FLOAT: pl.Float64, STATISTIC: pl.Float64}.get(
                kinds.get(name), pl.String
            )
            for name in self.names
        }


PREFS = FieldsFormat(
    "prefs",
    ("qid", "jg", "jsg", "docno", "level"),
    (("level", FLOAT),),
    ("qid", "jg", "jsg", "docno"),
)
QRELS_PREFS = FieldsFormat(
    "qrels", ("qid", "jg", "docno", "level"), (("level", FLOAT),), ("qid", "jg", "docno")
)
QRELS_JG = FieldsFormat(
    "qrels", ("qid", "jg", "docno", "grade"), (("grade", INT),), ("qid", "jg", "docno")
)
ZSCORES = FieldsFormat(
    "z-score",
    ("qid", "measure", "mean", "stddev"),
    (("mean", STATISTIC), ("stddev", STATISTIC)),
    ("qid", "measure"),
)


def read_prefs(source, *, name=None, max_errors=MAX_ERRORS, max_bytes=None) -> pl.DataFrame:
    """A preferences file (``-R prefs``) as a frame: qid, jg, jsg, docno (String) and level
    (Float64), in file order. ``source``, ``name``, ``max_errors`` and ``max_bytes`` are those
    of :func:`evaluation.trec.read_run`; raises :class:`TrecFormatError` listing every
    problem."""
    return read_fields(PREFS, source, name=name, max_errors=max_errors, max_bytes=max_bytes)


def read_qrels_prefs(source, *, name=None, max_errors=MAX_ERRORS, max_bytes=None) -> pl.DataFrame:
    """A qrels file read as preferences (``-R qrels_prefs``): qid, jg (the iteration field),
    docno, level (Float64: trec_eval reads it with atof)."""
    return read_fields(QRELS_PREFS, source, name=name, max_errors=max_errors, max_bytes=max_bytes)


def read_qrels_jg(source, *, name=None, max_errors=MAX_ERRORS, max_bytes=None) -> pl.DataFrame:
    """A qrels file with judgment groups (``-R qrels_jg``): qid, jg (the iteration field),
    docno, grade (Int64). A docno may appear once per (qid, jg)."""
    return read_fields(QRELS_JG, source, name=name, max_errors=max_errors, max_bytes=max_bytes)


def read_zscores(source, *, name=None, max_errors=MAX_ERRORS, max_bytes=None) -> pl.DataFrame:
    """A z-score file (``-Z``): qid, measure (a printed name such as P_10), mean, stddev."""
    return read_fields(ZSCORES, source, name=name, max_errors=max_errors, max_bytes=max_bytes)


# --- reading --------------------------------------------------------------------------------


def read_fields(
    fmt: FieldsFormat, source, *, name=None, max_errors=MAX_ERRORS, max_bytes=None
) -> pl.DataFrame:
    """Read ``source`` in format ``fmt`` (one of PREFS, QRELS_PREFS, QRELS_JG, ZSCORES)."""
    name = display_name(source, name)
    check_max_errors(max_errors)
    with whole_input(source, name=name, max_bytes=max_bytes) as data:
        raw = bytes(data)
    raw = raw.removeprefix(BOM)
    # Whitespace becomes spaces byte for byte, so lengths stay; invalid UTF-8 becomes U+FFFD,
    # which makes its line suspect (the reference checker then sees the original bytes).
    text = raw.translate(_WHITESPACE_TO_SPACES).decode("utf-8", errors="replace").split("\n")
    if text and text[-1] == "":
        text.pop()
    lines = pl.DataFrame({"text": text}, schema={"text": pl.String})
    del text
    t = pl.col("text")
    stripped = t.str.strip_chars(" ")
    lines = (
        lines.lazy()
        .with_row_index("number", offset=1)
        .with_columns(
            suspect=t.str.contains(r"[\x00\x{FFFD}]") | (t.str.len_bytes() > MAX_LINE_BYTES),
            text=stripped,
        )
        .filter(pl.col("suspect") | ((t != "") & ~t.str.starts_with("#")))
        .collect()
    )
    raw_lines: list[bytes] | None = None

    def raw_line(number: int) -> bytes:
        nonlocal raw_lines
        if raw_lines is None:
            raw_lines = raw.split(b"\n")
        return raw_lines[number - 1]

    rows = _fields(fmt, lines.filter(~pl.col("suspect")))
    # Numbers the grammar accepts but polars did not parse go to the reference checker too.
    numbers = lines.filter("suspect").get_column("number").to_list()
    numbers += rows.filter("unparsed").get_column("number").to_list()
    rows = rows.filter(~pl.col("unparsed"))
    del lines
    suspects = [
        (number, checked)
        for number in sorted(numbers)
        if (checked := check_line(fmt, raw_line(number))) is not None
    ]
    checked_keys = pl.DataFrame(
        [(number, *checked.key) for number, checked in suspects if checked.key is not None],
        schema={"number": pl.UInt32, **dict.fromkeys(fmt.key, pl.String)},
        orient="row",
    )
    keyed = pl.concat([rows.filter("shape").select("number", *fmt.key), checked_keys])
    firsts = keyed.with_columns(first=pl.col("number").min().over(fmt.key)).filter(
        pl.col("number") != pl.col("first")
    )
    problems = pl.concat(
        [
            rows.filter(pl.col("problems") > 0).select("number", "problems"),
            pl.DataFrame(
                [(n, len(c.problems)) for n, c in suspects if c.problems],
                schema={"number": pl.UInt32, "problems": pl.Int64},
                orient="row",
            ),
        ],
        how="diagonal_relaxed",
    )
    errors = (
        problems.join(firsts.select("number", "first"), on="number", how="full", coalesce=True)
        .with_columns(
            errors=pl.col("problems").fill_null(0) + pl.col("first").is_not_null().cast(pl.Int64)
        )
        .sort("number")
    )
    if errors.height == 0:
        if rows.height + len(suspects) == 0:
            raise TrecFormatError([(name, 0, f"file has no {fmt.kind} lines")])
        return _assemble(fmt, rows, suspects)
    log = ErrorLog(name, max_errors)
    for number, first in errors.select("number", "first").iter_rows():
        if len(log.errors) >= max_errors:
            break
        checked = check_line(fmt, raw_line(number))
        messages = list(checked.problems) if checked else []
        if first is not None and checked and checked.key:
            messages.append(duplicate_message(fmt, checked.key, first))
        for message in messages:
            log.add(number, message)
    raise TrecFormatError(log.errors, int(errors.get_column("errors").sum()))


def _fields(fmt: FieldsFormat, lines: pl.DataFrame) -> pl.DataFrame:
    """The content lines split into fields: number, shape (right field count), problems (how
    many errors, duplicates aside) and the fields, numbers parsed (null when bad)."""
    n = len(fmt.names)
    kinds = dict(fmt.numbers)
    parts = pl.col("text").str.replace_all(" {2,}", " ").str.split(" ")
    frame = lines.lazy().select("number", parts.alias("parts"))
    columns, bad, unparsed = [], [], []
    for i, field in enumerate(fmt.names):
        text = pl.col("parts").list.get(i, null_on_oob=True)
        kind = kinds.get(field)
        if kind is None:
            columns.append(text.alias(field))
        elif kind == INT:
            value = text.cast(pl.Int64, strict=False)
            columns.append(value.alias(field))
            bad.append(~text.str.contains(INT_PATTERN) | value.is_null())
            unparsed.append(text.str.contains(INT_PATTERN) & value.is_null())
        else:
            value = text.cast(pl.Float64, strict=False)
            columns.append(value.alias(field))
            if kind == STATISTIC:
                shaped = text.str.contains(SCORE_PATTERN) | text.str.contains(NON_FINITE_PATTERN)
                bad.append(~shaped | value.is_null())
            else:
                shaped = text.str.contains(SCORE_PATTERN)
                bad.append(~shaped | ~value.is_finite().fill_null(False))
            unparsed.append(shaped & value.is_null())
    shape = pl.col("parts").list.len() == n
    problems = pl.when(shape).then(
        pl.sum_horizontal([b.cast(pl.Int64) for b in bad]) if bad else pl.lit(0, pl.Int64)
    )
    return frame.select(
        "number",
        shape.alias("shape"),
        problems.otherwise(1).cast(pl.Int64).alias("problems"),
        (shape & pl.any_horizontal(unparsed)).fill_null(False).alias("unparsed"),
        *columns,
    ).collect()


def _assemble(fmt: FieldsFormat, rows: pl.DataFrame, suspects: list) -> pl.DataFrame:
    frame = rows.select("number", *fmt.names).cast(fmt.schema)
    if suspects:
        checked = pl.DataFrame(
            [(number, *checked.values) for number, checked in suspects],
            schema={"number": frame.schema["number"], **fmt.schema},
            orient="row",
        )
        frame = pl.concat([frame, checked]).sort("number")
    return frame.drop("number")
