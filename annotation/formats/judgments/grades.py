"""A file's grades put on the campaign's scale: the importer's mapping, read from its
text, and the grade each label of the file stands for."""

from __future__ import annotations

import re

_INTEGER = re.compile(r"[+-]?[0-9]{1,5}")


def parse_mapping(text: str) -> dict[str, int]:
    """``"0:0, 1:1, 2:1, 3:2, 4:3"`` or ``"Perfect=3; Mostly Good=2"`` (entries separated by
    commas, semicolons or new lines; label and grade by the last ``:`` or ``=``) as
    {label folded to lower case: grade}. ValueError naming the entry at fault."""
    mapping: dict[str, int] = {}
    for entry in re.split(r"[,;\n]", text or ""):
        if not entry.strip():
            continue
        cut = max(entry.rfind(":"), entry.rfind("="))
        label, grade = entry[:cut].strip(), entry[cut + 1 :].strip()
        if cut < 0 or not label or _INTEGER.fullmatch(grade) is None:
            raise ValueError(
                f"mapping entry {entry.strip()!r} is not 'grade in the file: grade on the scale'"
            )
        key = label.casefold()
        if key in mapping:
            raise ValueError(f"mapping gives {label!r} twice")
        mapping[key] = int(grade)
    return mapping


def map_grade(label: str, mapping: dict[str, int] | None, grades: list[int]) -> int | None:
    """The grade on the scale for the file's ``label``, or None when there is none: through
    ``mapping`` when given (every label must be in it), else the label itself when it is an
    integer of the scale."""
    if mapping:
        grade = mapping.get(label.strip().casefold())
    elif _INTEGER.fullmatch(label.strip()):
        grade = int(label)
    else:
        grade = None
    return grade if grade in grades else None
