"""The one JSON Lines reader of the engine, and the line writer that matches it.

Every JSON Lines file a submitter controls (response files, and ``gamut generate``'s own output)
is read here, so the validator, the judge, the scorer and the generator agree on what a line is:

- lines end at ``\\n`` only (an optional ``\\r`` before it is dropped); U+2028, U+2029, form feeds
  and other characters that :meth:`str.splitlines` would split on stay inside their line;
- each line is strict UTF-8 and one JSON value; raw control characters inside strings are
  accepted by the parser (the response checks report them), ``NaN`` and ``Infinity`` are not;
- the file, each line and the nesting depth have limits, checked before anything is parsed, so a
  hostile file costs at most its size in memory and never a ``RecursionError``.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from scoring.errors import Problem

#: Deepest nesting of arrays and objects accepted in one line (a response line needs 1).
MAX_DEPTH = 32
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))


@dataclass(frozen=True)
class JsonlLimits:
    """What one JSON Lines file may hold.

    Attributes:
        max_file_bytes: largest file; a larger one is rejected unread.
        max_line_bytes: largest line (UTF-8 bytes).
        max_depth: deepest nesting of arrays and objects in a line.
    """

    max_file_bytes: int = 8 * 1024 * 1024
    max_line_bytes: int = 1024 * 1024
    max_depth: int = MAX_DEPTH


@dataclass(frozen=True, slots=True)
class JsonlLine:
    """One parsed line and its 1-based line number."""

    line: int
    value: Any


@dataclass
class JsonlFile:
    """What a JSON Lines file holds, and every problem found while reading it.

    Attributes:
        lines: the lines that parsed, in file order (an iterator, read once, when the file was
            read with ``report``).
        problems: one per unreadable line (or one for the whole file); empty when the file was
            read with ``report``, which receives them instead.
        empty: True when the file holds nothing but whitespace.
        unreadable: True when the file as a whole was refused (too large, UTF-16, unreadable).
    """

    lines: Iterable[JsonlLine] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    empty: bool = False
    unreadable: bool = False


def size_text(n: int) -> str:
    """A byte count as ``1.5 MB`` or ``12.0 KB``."""
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.1f} KB"


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in one JSON text (brackets in strings ignored)."""
    opened = raw.count(b"[") + raw.count(b"{")
    if opened <= 1:
        return opened
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    if not brackets:
        return 0
    return max(0, *accumulate(1 if c in b"[{" else -1 for c in brackets))


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


#: One decoder for every line (``json.loads`` with options builds a new one per call).
_DECODER = json.JSONDecoder(strict=False, parse_constant=_reject_constant)


def parse_line(raw: bytes, limits: JsonlLimits) -> tuple[Any, str | None]:
    """Parse one line (without its newline): ``(value, None)`` or ``(None, what is wrong)``."""
    if len(raw) > limits.max_line_bytes:
        return None, (
            f"line is {size_text(len(raw))}, over the {size_text(limits.max_line_bytes)} limit"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start + 1} of the line)"
    depth = json_depth(raw)
    if depth > limits.max_depth:
        return None, f"nested {depth} levels deep (at most {limits.max_depth})"
    try:
        if text.startswith("\ufeff"):  # json.loads names a byte order mark; the decoder does not
            return json.loads(text, strict=False, parse_constant=_reject_constant), None
        return _DECODER.decode(text), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg} (column {exc.colno})"
    except (ValueError, RecursionError) as exc:  # NaN/Infinity, an integer of 4,300+ digits
        return None, f"not valid JSON: {exc}"


def split_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` for each line of ``data``: split at ``\\n``, ``\\r`` dropped."""
    start, n, end = 0, 0, len(data)
    while start < end:
        stop = data.find(b"\n", start)
        if stop < 0:
            stop = end
        n += 1
        yield n, data[start:stop].removesuffix(b"\r")
        start = stop + 1


def read_jsonl(
    path: Path,
    display: str,
    fix: str,
    limits: JsonlLimits | None = None,
    *,
    blank_lines: bool = True,
    what: str = "",
    size_fix: str = "shorten the file",
    report: Callable[[Problem], None] | None = None,
) -> JsonlFile:
    """Read a JSON Lines file within ``limits``, every problem found at once.

    Args:
        path: the file.
        display: its name in problems.
        fix: the fix offered for a line that is not valid JSON (what a line should look like).
        limits: size and depth limits (default :class:`JsonlLimits`).
        blank_lines: report blank lines as problems (True) or skip them.
        what: what the file is, for the size message (e.g. "a response file").
        size_fix: the fix offered for a file over the size limit.
        report: receives each problem as it is found; the lines are then parsed as they are
            iterated, so a file of many lines is never held parsed in memory all at once.

    Returns:
        The parsed lines and the problems. A file over the size limit, in UTF-16 or unreadable
        gives one problem and no lines; a UTF-8 byte order mark is reported and skipped.
    """
    limits = limits or JsonlLimits()
    out = JsonlFile()
    sink = report or out.problems.append

    def problem(line: int | None, msg: str, fix_: str) -> None:
        sink(Problem(display, line, msg, fix_))

    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            data = b"" if size > limits.max_file_bytes else f.read(limits.max_file_bytes + 1)
    except OSError as exc:
        problem(None, f"cannot read the file: {exc.strerror or exc}", "check the path")
        out.unreadable = True
        return out
    if size > limits.max_file_bytes or len(data) > limits.max_file_bytes:
        problem(
            None,
            f"file is {size_text(max(size, len(data)))}, over the "
            f"{size_text(limits.max_file_bytes)} limit" + (f" for {what}" if what else ""),
            size_fix,
        )
        out.unreadable = True
        return out
    if not data.strip():
        out.empty = True
        return out
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        problem(1, "file is UTF-16, not UTF-8", "save the file as UTF-8 without a BOM")
        out.unreadable = True
        return out
    if data.startswith(codecs.BOM_UTF8):
        problem(
            1, "file starts with a UTF-8 byte order mark (BOM)", "save it as UTF-8 without a BOM"
        )
        data = data[len(codecs.BOM_UTF8) :]

    def parsed() -> Iterator[JsonlLine]:
        for n, raw in split_lines(data):
            if not raw or raw.isspace():  # blank (what strip() would empty), without the copy
                if blank_lines:
                    problem(n, "empty line", "remove the empty line")
                continue
            value, wrong = parse_line(raw, limits)
            if wrong is not None:
                problem(n, wrong, fix)
                continue
            yield JsonlLine(n, value)

    out.lines = parsed() if report is not None else list(parsed())
    return out


def dumps_line(obj: Any) -> str:
    """One JSON line (no newline) that :func:`read_jsonl` reads back and no line splitter breaks.

    Non-ASCII text stays readable UTF-8, except U+2028 and U+2029 (line breaks to
    :meth:`str.splitlines` and to JavaScript), which are escaped.
    """
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


__all__ = [
    "MAX_DEPTH",
    "JsonlFile",
    "JsonlLimits",
    "JsonlLine",
    "dumps_line",
    "json_depth",
    "parse_line",
    "read_jsonl",
    "size_text",
    "split_lines",
]
