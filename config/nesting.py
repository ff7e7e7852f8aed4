"""How deeply structured text from outside may nest: one cap for JSON request bodies
(config/json_bodies.py), JSON lines in uploaded files (annotation.formats, leaderboard
imports), backups, and the YAML of a run's ir_metadata header (evaluation.run_metadata).

Decoders recurse once per level (``json.loads``, PyYAML's composer) and PyYAML's scanner does
work per open level on every token, so a few kilobytes of ``[`` can take minutes or end in
RecursionError. Each reader measures the nesting before decoding and refuses deeper text.
No document the project reads or writes nests deeper than about six.

Pure: no Django, so the pure readers can use it.
"""

import re

__all__ = ["MAX_DEPTH", "nesting_depth"]

MAX_DEPTH = 32

# A JSON string (escapes included): brackets inside strings do not nest anything.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def nesting_depth(text: str, *, stop_above: int | None = None) -> int:
    """How deeply JSON ``text``'s arrays and objects nest (0 for a scalar), counted without
    decoding it; stops counting once past ``stop_above``. Malformed text gets a number too
    (its brackets outside strings are counted), which the decoder then refuses anyway."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    break
        else:
            depth = max(depth - 1, 0)
    return deepest
