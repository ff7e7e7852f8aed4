"""JSON request bodies, bounded: the API's JSON parser.

DRF's own JSONParser reads the whole stream (it bypasses Django's DATA_UPLOAD_MAX_MEMORY_SIZE,
which only guards ``request.body`` and forms) and hands it to ``json.load``, whose decoder
recurses once per nesting level: a body of 5,000 ``[`` raises RecursionError, a 500. Here a
body is read up to DATA_UPLOAD_MAX_MEMORY_SIZE (one byte more is a 413) and its nesting is
measured before it is decoded (deeper than MAX_DEPTH is a 400), so neither can happen. No
body the API documents nests deeper than 4. An object that gives a key twice is a 400 naming
the key (config/json_keys.py): the json module would keep the last value silently.
"""

import json
import re

import numpy as np
from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils.json import strict_constant

from config.json_keys import RepeatedKeys, unique_keys
from config.permissions import BODY_TOO_LARGE, PayloadTooLarge

__all__ = ["MAX_DEPTH", "TOO_DEEP", "BoundedJSONParser", "nesting_depth"]

MAX_DEPTH = 32
TOO_DEEP = "JSON parse error - the body nests arrays and objects deeper than {limit} levels."
NOT_TEXT = "JSON parse error - the body is not {encoding} text (byte {start})."

# A JSON string (escapes included): brackets inside strings do not nest anything. Its
# closing quote is optional, so that each string is one match and the text is scanned once:
# required, every quote of a body of unclosed strings began a scan to its end (40 KB of \"
# took 10 s, a 10 MB body hours).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)


def nesting_depth(text: str, *, stop_above: int | None = None) -> int:
    """How deeply ``text``'s arrays and objects nest (0 for a scalar), counted without
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


class BoundedJSONParser(JSONParser):
    """JSONParser with a size limit (413) and a depth limit (400), each with a clear message."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(raw) > limit:
            raise PayloadTooLarge(BODY_TOO_LARGE.format(limit=limit))
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as error:
            raise ParseError(NOT_TEXT.format(encoding=encoding, start=error.start)) from None
        if nesting_depth(text, stop_above=MAX_DEPTH) > MAX_DEPTH:
            raise ParseError(TOO_DEEP.format(limit=MAX_DEPTH))
        try:
            return json.loads(text, parse_constant=strict_constant, object_pairs_hook=unique_keys)
        except RecursionError:  # cannot happen below MAX_DEPTH; never a 500 if it did
            raise ParseError(TOO_DEEP.format(limit=MAX_DEPTH)) from None
        except RepeatedKeys as repeated:
            raise ParseError(f"JSON parse error - {repeated}.") from None
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
