"""Errors in TREC-style files: one :class:`LineError` per problem, one :class:`TrecFormatError`
per file, and the log that collects them (the first ``limit`` kept, the rest counted).

Counting stops too: a reader stops checking at the line of the file's ``MAX_ERRORS_COUNTED``-th
error (:class:`CheckingStopped`), so that a file of millions of bad lines (a few megabytes of
gzip can expand to hundreds of megabytes of one repeated line) costs the work and memory of
its first errors, not of all of them. The error then ends with a note on that line saying so
(``STOPPED``), and its total counts the errors found up to there."""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "EXTRA_FIELDS",
    "MAX_ERRORS",
    "MAX_ERRORS_COUNTED",
    "RANK_NOT_INTEGER",
    "STOPPED",
    "CheckingStopped",
    "ErrorLog",
    "LineError",
    "Notice",
    "NoticeLog",
    "TrecFormatError",
    "check_max_errors",
    "count_limit",
    "show",
]

MAX_ERRORS = 50  # errors listed (file:line: problem); the rest are counted
MAX_ERRORS_COUNTED = 10_000  # errors counted: checking stops at the line of the last one
STOPPED = (
    "checking stopped at this line after {count:,} errors; the lines after it were not checked"
)
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
    counts them all; ``str()`` gives one ``path:line: message`` per line.

    ``stopped_at``: the line where checking stopped (see the module's doc), else None. Then
    ``errors`` ends with one more entry, the ``STOPPED`` note on that line, which ``total``
    does not count: every consumer that lists ``errors`` shows it."""

    def __init__(
        self, errors: list[LineError], total: int | None = None, stopped_at: int | None = None
    ) -> None:
        self.errors = [LineError(*error) for error in errors]
        self.stopped_at = stopped_at
        listed = len(self.errors) - (stopped_at is not None)
        self.total = listed if total is None else total
        # args stay (errors, total, stopped_at) so that the exception survives pickling.
        super().__init__(self.errors, self.total, stopped_at)

    @property
    def more(self) -> int:
        """How many errors were counted but not listed."""
        return self.total - len(self.errors) + (self.stopped_at is not None)

    def __str__(self) -> str:
        lines = [str(error) for error in self.errors]
        note = lines.pop() if self.stopped_at is not None else None
        rest = self.more
        if rest > 0:
            lines.append(f"... and {rest} more error{'s' if rest > 1 else ''}")
        if note is not None:
            lines.append(note)
        return "\n".join(lines)


class CheckingStopped(Exception):
    """Raised by ErrorLog.add once the log has counted its ``count_limit`` errors: the
    reader stops reading there and raises ``log.error()``."""


def count_limit(max_errors: int) -> int:
    """How many errors a reader listing ``max_errors`` counts before it stops."""
    return max(max_errors, MAX_ERRORS_COUNTED)


class ErrorLog:
    """Keeps the first ``limit`` errors and counts the rest up to ``count_limit(limit)``:
    the ``add`` that reaches it raises CheckingStopped (after logging its error), and the
    reader stops there (``stopped_at``)."""

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        self.count_limit = count_limit(limit)
        self.errors: list[LineError] = []
        self.total = 0
        self.stopped_at: int | None = None

    def add(self, line: int, message: str) -> None:
        self.total += 1
        if len(self.errors) < self.limit:
            self.errors.append(LineError(self.name, line, message))
        if self.total >= self.count_limit:
            self.stop(line)

    def stop(self, line: int) -> None:
        """Stop checking at ``line``: raises CheckingStopped."""
        self.stopped_at = line
        raise CheckingStopped

    def fail(self, message: str) -> None:
        """Record a file-level error; it goes first (line 0) and is always kept."""
        self.errors = [LineError(self.name, 0, message), *self.errors[: self.limit - 1]]
        self.total += 1

    def error(self) -> TrecFormatError:
        """The TrecFormatError of what was logged (with the STOPPED note if it stopped)."""
        errors = list(self.errors)
        if self.stopped_at is not None:
            message = STOPPED.format(count=self.total)
            errors.append(LineError(self.name, self.stopped_at, message))
        return TrecFormatError(errors, self.total, self.stopped_at)

    def raise_if_any(self) -> None:
        if self.total:
            raise self.error()


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
