"""How deeply structured text from outside may nest: one cap for JSON request bodies
(config/json_bodies.py), JSON lines in uploaded files (annotation.formats, leaderboard
imports), backups, and the YAML of a run's ir_metadata header (evaluation.trec.metadata).

Decoders recurse once per level (``json.loads``, PyYAML's composer) and PyYAML's scanner does
work per open level on every token, so a few kilobytes of ``[`` can take minutes or end in
RecursionError. Each reader measures the nesting before decoding and refuses deeper text.
No document the project reads or writes nests deeper than about six.

Pure: no Django, so the pure readers can use it.
"""

import re

import numpy as np

__all__ = ["MAX_DEPTH", "nesting_depth"]

MAX_DEPTH = 32

# A JSON string (escapes included): brackets inside strings do not nest anything. Its
# closing quote is optional, so that each string is one match and the text is scanned once:
# required, every quote of a body of unclosed strings began a scan to its end (40 KB of \"
# took 10 s, a 10 MB body hours).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)


def nesting_depth(text: str, *, stop_above: int | None = None) -> int:
    """How deeply JSON ``text``'s arrays and objects nest (0 for a scalar), counted without
    decoding it, in time linear in its length; at most ``stop_above`` + 1 when given.
    Malformed text gets a number too (its brackets outside strings are counted, a closing
    one never below 0), which the decoder then refuses anyway."""
    # As UTF-8 bytes: no byte of a character outside ASCII is a bracket's.
    codes = np.frombuffer(_STRING.sub("", text).encode("utf-8", "surrogatepass"), np.uint8)
    opening = (codes == ord("[")) | (codes == ord("{"))
    closing = (codes == ord("]")) | (codes == ord("}"))
    steps = opening[opening | closing].astype(np.int64) * 2 - 1
    if not len(steps):
        return 0
    level = np.cumsum(steps)
    # The depth never goes below 0 ("]]" then "[" is depth 1): the walk reflected at 0 is the
    # plain running sum minus its lowest point so far (when that is below 0).
    deepest = int((level - np.minimum(np.minimum.accumulate(level), 0)).max())
    return deepest if stop_above is None else min(deepest, stop_above + 1)
