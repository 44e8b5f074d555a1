"""JSON read by orjson wherever it gives what the standard library's reader gives, and by the
standard library everywhere else, so a faster parse never changes what a text means.

orjson refuses what the engine's readers accept (raw control characters inside strings, lone
surrogate escapes, ``1e400``) and those texts go to the standard library; the one difference in
what it accepts, integers beyond 64 bits (read as floats), is avoided by giving the standard
library every text with a run of 19 digits.
"""

from __future__ import annotations

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


__all__ = ["MISS", "loads"]
