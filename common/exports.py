"""CSV downloads that a spreadsheet opens safely: a text cell that would start a formula
(``=``, ``+``, ``-``, ``@``, tab, carriage return) gets a leading apostrophe (OWASP's advice
against CSV injection). Numbers are written as they are."""

import csv
from collections.abc import Iterable

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value):
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_csv(out, header: list[str], rows: Iterable[Iterable]) -> None:
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_safe(value) for value in row])
