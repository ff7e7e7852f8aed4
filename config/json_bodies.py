"""JSON request bodies, bounded: the API's JSON parser.

DRF's own JSONParser reads the whole stream (it bypasses Django's DATA_UPLOAD_MAX_MEMORY_SIZE,
which only guards ``request.body`` and forms) and hands it to ``json.load``, whose decoder
recurses once per nesting level: a body of 5,000 ``[`` raises RecursionError, a 500. Here a
body is read up to DATA_UPLOAD_MAX_MEMORY_SIZE (one byte more is a 413) and its nesting is
measured before it is decoded (deeper than MAX_DEPTH, common/nesting.py, is a 400), so
neither can happen. No body the API documents nests deeper than 4. An object that gives a
key twice is a 400 naming the key (common/json_keys.py): the json module would keep the last
value silently.
"""

import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils.json import strict_constant

from accounts.permissions import BODY_TOO_LARGE, PayloadTooLarge
from common.json_keys import RepeatedKeys, unique_keys
from common.nesting import MAX_DEPTH, nesting_depth

__all__ = ["MAX_DEPTH", "TOO_DEEP", "BoundedJSONParser", "nesting_depth"]

TOO_DEEP = "JSON parse error - the body nests arrays and objects deeper than {limit} levels."
NOT_TEXT = "JSON parse error - the body is not {encoding} text (byte {start})."


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
