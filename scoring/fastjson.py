"""JSON read by orjson where it gives what the standard library gives, else by the standard library,
so a faster parse never changes a text's meaning. orjson refuses raw control characters in
strings, lone surrogates and ``1e400`` (those go to the standard library) and reads integers past
64 bits as floats (so a text with a run of 19 digits does too)."""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson

#: What :func:`loads` returns for a text it leaves to the standard library.
MISS: Final = object()
#: Every digit as ``0``, every other byte as ``x``: a run of 19 digits is then a plain substring
#: search, several times faster than a regular expression over a line.
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x78 for b in range(256))
_RUN = b"0" * 19
_LONG_INT = re.compile(r"\d{19}")


def loads(data: bytes | str) -> Any:
    """The value of ``data`` as the standard library reads it, or :data:`MISS` when orjson
    cannot say (the text is not JSON to orjson, or holds a long digit run): the caller then
    parses it with the standard library, with its own limits and messages."""
    if isinstance(data, bytes):
        if _RUN in data.translate(_DIGITS):
            return MISS
    elif _LONG_INT.search(data) is not None:
        return MISS
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return MISS


#: U+2028 and U+2029 in UTF-8.
_LS, _PS = "\u2028".encode(), "\u2029".encode()


def dumps_line(obj: Any) -> bytes:
    """One compact JSON line (no newline) of ``obj``, UTF-8, U+2028 and U+2029 escaped (line
    breaks to :meth:`str.splitlines` and to JavaScript), as
    :func:`scoring.jsonl.dumps_line` writes them. A value orjson refuses (a lone
    surrogate in a string, an integer beyond 64 bits) is written by the standard library,
    non-ASCII characters escaped."""
    try:
        data = orjson.dumps(obj)
    except orjson.JSONEncodeError:
        return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
    if data.isascii():
        return data
    return data.replace(_LS, b"\\u2028").replace(_PS, b"\\u2029")
