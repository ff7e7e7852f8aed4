"""Errors in TREC-style files: one :class:`LineError` per problem, one :class:`TrecFormatError`
per file, and the log that collects them (the first ``limit`` kept, all counted)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["MAX_ERRORS", "ErrorLog", "LineError", "TrecFormatError", "check_max_errors", "show"]

MAX_ERRORS = 50


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
