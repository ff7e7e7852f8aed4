"""Errors in TREC-style files: one :class:`LineError` per problem, one :class:`TrecFormatError`
per file, and the log that collects them (the first ``limit`` kept, all counted)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "EXTRA_FIELDS",
    "MAX_ERRORS",
    "RANK_NOT_INTEGER",
    "ErrorLog",
    "LineError",
    "Notice",
    "NoticeLog",
    "TrecFormatError",
    "check_max_errors",
    "show",
]

MAX_ERRORS = 50
NOTICE_LINES = 5  # line numbers a notice lists

# What a run file may hold that trec_eval accepts but a user may not mean: accepted, and
# reported as a notice (never an error).
EXTRA_FIELDS = "extra_fields"
RANK_NOT_INTEGER = "rank_not_integer"
_NOTICE_TEXT = {
    EXTRA_FIELDS: "{lines} more than 6 fields: the fields after the sixth are ignored, "
    "as trec_eval ignores them",
    RANK_NOT_INTEGER: "{lines} a rank that is not an integer: the rank field is never read "
    "(documents are ranked by score, as trec_eval ranks them)",
}


class LineError(NamedTuple):
    """One problem in a file: ``str(error) == f"{path}:{line}: {message}"``.

    ``line`` counts from 1; 0 means the file as a whole.
    """

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class TrecFormatError(ValueError):
    """A file broke the grammar. ``errors`` holds the first ones in line order, ``total``
    counts them all; ``str()`` gives one ``path:line: message`` per line."""

    def __init__(self, errors: list[LineError], total: int | None = None) -> None:
        self.errors = [LineError(*error) for error in errors]
        self.total = len(self.errors) if total is None else total
        # args stay (errors, total) so that the exception survives pickling.
        super().__init__(self.errors, self.total)

    def __str__(self) -> str:
        lines = [str(error) for error in self.errors]
        rest = self.total - len(self.errors)
        if rest > 0:
            lines.append(f"... and {rest} more error{'s' if rest > 1 else ''}")
        return "\n".join(lines)


class ErrorLog:
    """Keeps the first ``limit`` errors and counts them all."""

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        self.errors: list[LineError] = []
        self.total = 0

    def add(self, line: int, message: str) -> None:
        self.total += 1
        if len(self.errors) < self.limit:
            self.errors.append(LineError(self.name, line, message))

    def fail(self, message: str) -> None:
        """Record a file-level error; it goes first (line 0) and is always kept."""
        self.errors = [LineError(self.name, 0, message), *self.errors[: self.limit - 1]]
        self.total += 1

    def raise_if_any(self) -> None:
        if self.total:
            raise TrecFormatError(self.errors, self.total)


def check_max_errors(max_errors) -> None:
    if not isinstance(max_errors, int) or isinstance(max_errors, bool) or max_errors < 1:
        raise ValueError(f"max_errors must be a positive integer, got {max_errors!r}")


def show(value: str) -> str:
    """Quote a field for a message; long fields are cut so one line cannot flood the report."""
    if len(value) > 60:
        value = value[:57] + "..."
    return repr(value)


class Notice(NamedTuple):
    """Something a file holds that we accept (as trec_eval does) but its author may not mean:
    ``code`` (EXTRA_FIELDS, RANK_NOT_INTEGER), how many lines, and the first line numbers.
    ``str(notice)`` is ``"path: 3 lines have ... (lines 4, 7, 9)"``."""

    path: str
    code: str
    count: int
    lines: tuple[int, ...]

    @property
    def message(self) -> str:
        have = "1 line has" if self.count == 1 else f"{self.count:,} lines have"
        shown = ", ".join(str(line) for line in self.lines)
        more = ", ..." if self.count > len(self.lines) else ""
        where = "line" if len(self.lines) == 1 else "lines"
        return f"{_NOTICE_TEXT[self.code].format(lines=have)} ({where} {shown}{more})"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class NoticeLog:
    """Counts the lines of each notice and keeps their first line numbers."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._counts: dict[str, int] = {}
        self._lines: dict[str, list[int]] = {}

    def add(self, code: str, line: int, count: int = 1, first: list[int] | None = None) -> None:
        """One line (or ``count`` lines whose first numbers, ascending, are ``first``)."""
        self._counts[code] = self._counts.get(code, 0) + count
        kept = self._lines.setdefault(code, [])
        kept.extend(first if first is not None else [line])
        kept.sort()
        del kept[NOTICE_LINES:]

    def notices(self) -> list[Notice]:
        return [
            Notice(self.name, code, self._counts[code], tuple(self._lines[code]))
            for code in _NOTICE_TEXT
            if self._counts.get(code)
        ]
