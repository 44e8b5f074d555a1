"""The one JSON Lines reader of the engine, and the line writer that matches it.

Every JSON Lines file a submitter controls is read here, so validator, judge, scorer and generator
agree on what a line is: lines end at ``\\n`` only (a ``\\r`` before it is dropped; U+2028 and
the like stay inside); each line is strict UTF-8 and one JSON value (no ``NaN``/``Infinity``);
file size, line size and nesting depth are checked before parsing, so a hostile file costs at most
its size and never a ``RecursionError``. ``stream=True`` reads a file larger than memory should
hold in blocks (``gamut judge --import-batch``); ``max_problems`` stops a file's reading early.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, TypeVar

from pydantic import ValidationError

from scoring import fastjson
from scoring.errors import NotRegularFileError, Problem, ProblemsError
from scoring.storage import open_regular

T = TypeVar("T")
#: Deepest nesting of arrays and objects accepted in one line (a response line needs 1).
MAX_DEPTH = 32
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # a run at a time, not a byte
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
#: What :meth:`bytes.isspace` calls whitespace: a line of nothing else is blank.
_BLANK = re.compile(rb"[ \t\n\r\x0b\x0c]*")
#: Bytes read at a time by a streaming read.
BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class JsonlLimits:
    """Limits of one JSON Lines file (``max_problems``: stop after so many; None: read all)."""

    max_file_bytes: int = 8 * 1024 * 1024
    max_line_bytes: int = 1024 * 1024
    max_depth: int = MAX_DEPTH
    max_problems: int | None = None


class JsonlLine(NamedTuple):
    """One parsed line and its 1-based number (a tuple: cheaper than a dataclass per line)."""

    line: int
    value: Any


@dataclass
class JsonlFile:
    """What a JSON Lines file holds, and every problem found reading it.

    ``lines`` is an iterator (read once) and ``problems`` stays empty when read with ``report``;
    ``unterminated`` is the last line's number when it lacks a newline; ``stopped_at`` where
    ``max_problems`` stopped it. A streamed file knows ``empty``, ``unterminated`` and
    ``stopped_at`` only once its lines are read to the end.
    """

    lines: Iterable[JsonlLine] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    empty: bool = False
    unreadable: bool = False
    unterminated: int | None = None
    stopped_at: int | None = None


def size_text(n: int) -> str:
    """A byte count as ``1.5 MB`` or ``12.0 KB``."""
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.1f} KB"


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in one JSON text (brackets in strings ignored)."""
    opened = raw.count(b"[") + raw.count(b"{")
    if opened <= 1:
        return opened
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    return max([0, *accumulate(1 if c in b"[{" else -1 for c in brackets)])


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
    # brackets are counted before any parser recurses: only a line of many is measured
    opened = raw.count(b"[") + raw.count(b"{")
    depth = json_depth(raw) if opened > limits.max_depth else 0
    if depth <= limits.max_depth and not raw.startswith(codecs.BOM_UTF8):
        value = fastjson.loads(raw)  # valid UTF-8 and JSON, as the decoder below reads it
        if value is not fastjson.MISS:
            return value, None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start + 1} of the line)"
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


def stream_lines(
    f: _Capped, first: bytes, max_line: int, skip_blank: bool
) -> Iterator[tuple[int, bytes | None, int, bool]]:
    """``(line number, line, its length, ends with a newline)`` for each line of an open file whose
    first bytes ``first`` were read, a block at a time. A line over ``max_line`` is ``None`` (at
    most a block of it in memory); ``skip_blank`` skips runs of blank lines in one step."""
    buf, pos, n, eof = first, 0, 0, False
    while True:
        if skip_blank:
            m = _BLANK.match(buf, pos)
            end = m.end() if m else pos
            last_nl = buf.rfind(b"\n", pos, end)
            if last_nl >= 0:
                n += buf.count(b"\n", pos, last_nl + 1)
                pos = last_nl + 1
        nl = buf.find(b"\n", pos)
        if nl < 0 and eof:  # the last line, without a newline
            if pos >= len(buf) or (skip_blank and buf[pos:].isspace()):
                return
            nl = len(buf)
        if nl >= 0:
            n += 1
            size = nl - pos
            line = buf[pos:nl].removesuffix(b"\r") if size <= max_line + 1 else None
            yield n, line, size, nl < len(buf)
            pos = nl + 1
            continue
        if len(buf) - pos > max_line:  # a line over the limit: read to its end, keep none of it
            size = len(buf) - pos
            while True:
                more = f.read(BLOCK_BYTES)
                k = more.find(b"\n")
                if not more or k >= 0:
                    break
                size += len(more)
            n += 1
            yield n, None, size + max(k, 0), bool(more)
            if not more:
                return
            buf, pos = more[k + 1 :], 0
            continue
        more = f.read(BLOCK_BYTES)
        eof = not more
        buf, pos = buf[pos:] + more, 0


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
    stream: bool = False,
    links: bool = False,
) -> JsonlFile:
    """Read a JSON Lines file within ``limits``, every problem found at once.

    ``display`` names it in problems; ``fix`` is offered for a bad line, ``size_fix`` for a file
    over the limit (``what`` names the file there). ``blank_lines`` reports blank lines (else
    skipped). ``report`` receives each problem as found, and the lines are then parsed as
    iterated; ``stream`` (needs ``report``) reads a block at a time. ``links`` follows a symbolic
    link to a regular file (the project's own inputs); else anything but a regular file is refused
    by name. A file too large, in UTF-16 or unreadable gives one problem and no lines; a UTF-8 BOM
    is reported and skipped.
    """
    if stream and report is None:
        raise ValueError("a streamed read needs report")
    r = _Reading(display, limits or JsonlLimits(), report, (what, size_fix))
    cap = r.limits.max_file_bytes
    try:
        f = open_regular(path, links=links)
    except NotRegularFileError as exc:
        return r.refuse(None, str(exc.strerror), "replace it with a regular file")
    except OSError as exc:
        return r.cannot_read(exc)
    keep_open = False
    try:
        size = os.fstat(f.fileno()).st_size
        data = b"" if size > cap else f.read(BLOCK_BYTES if stream else cap + 1)
        if max(size, len(data)) > cap:
            return r.too_large(max(size, len(data)))
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            return r.refuse(1, "file is UTF-16, not UTF-8", "save the file as UTF-8 without a BOM")
        if not stream and not data.strip():
            r.out.empty = True
            return r.out
        if data.startswith(codecs.BOM_UTF8):
            r.problem(1, "file starts with a UTF-8 byte order mark (BOM)", _NO_BOM)
            data = data[len(codecs.BOM_UTF8) :]
        keep_open = stream
    except OSError as exc:
        return r.cannot_read(exc)
    finally:
        if not keep_open:
            f.close()
    # a whole read has all its bytes already: the rest of the "file" is empty
    rest = _Capped(f if stream else io.BytesIO(), cap - len(data))
    lines = r.lines(rest, data, fix, blank_lines)
    r.out.lines = lines if report is not None else list(lines)
    return r.out


_NO_BOM = "save it as UTF-8 without a BOM"


class _Reading:
    """One file being read: its problems (counted), the file's account, and its lines."""

    def __init__(
        self,
        display: str,
        limits: JsonlLimits,
        report: Callable[[Problem], None] | None,
        size_words: tuple[str, str],
    ) -> None:
        self.display, self.limits, self.size_words, self.count = display, limits, size_words, 0
        self.out = JsonlFile()
        self.sink = report or self.out.problems.append

    def problem(self, line: int | None, msg: str, fix: str) -> None:
        self.count += 1
        self.sink(Problem(self.display, line, msg, fix))

    def refuse(self, line: int | None, msg: str, fix: str) -> JsonlFile:
        """The file refused as a whole: one problem, no lines."""
        self.problem(line, msg, fix)
        self.out.unreadable = True
        return self.out

    def cannot_read(self, exc: OSError) -> JsonlFile:
        return self.refuse(None, f"cannot read the file: {exc.strerror or exc}", "check the path")

    def too_large(self, size: int) -> JsonlFile:
        what, size_fix = self.size_words
        limit = size_text(self.limits.max_file_bytes)
        for_ = f" for {what}" if what else ""
        return self.refuse(
            None, f"file is {size_text(size)}, over the {limit} limit{for_}", size_fix
        )

    def lines(self, f: _Capped, first: bytes, fix: str, blank_lines: bool) -> Iterator[JsonlLine]:
        """The parsed lines of a file (``first`` bytes, then ``f``), each other line a problem,
        stopping at ``max_problems`` of them."""
        out, limits, blank = self.out, self.limits, True
        cap = limits.max_problems
        try:
            for n, raw, length, newline in stream_lines(
                f, first, limits.max_line_bytes, not blank_lines
            ):
                if not newline:
                    out.unterminated = n
                if raw is not None and (not raw or raw.isspace()):  # blank, without a copy
                    if not blank_lines:
                        continue
                    self.problem(n, "empty line", "remove the empty line")
                elif raw is None:
                    blank = False
                    over = size_text(limits.max_line_bytes)
                    self.problem(n, f"line is {size_text(length)}, over the {over} limit", fix)
                else:
                    blank = False
                    value, wrong = parse_line(raw, limits)
                    if wrong is None:
                        yield JsonlLine(n, value)
                        continue
                    self.problem(n, wrong, fix)
                if cap is not None and self.count >= cap:
                    out.stopped_at = n
                    return
            if f.over:
                self.too_large(limits.max_file_bytes + 1)
            out.empty = blank and not f.over
        except OSError as exc:
            self.cannot_read(exc)
        finally:
            f.close()


def validated(
    lines: Iterable[tuple[int | None, Any]],
    parse: Callable[[Any], T],
    display: str,
    fix: str,
    problems: list[Problem],
) -> Iterator[tuple[int | None, T]]:
    """``(line, parse(value))`` for each pair ``parse`` accepts; what it refuses (a pydantic
    ``ValidationError``, with ``fix``, or a :class:`ProblemsError`) goes to ``problems``."""
    for line, value in lines:
        try:
            yield line, parse(value)
        except ValidationError as exc:
            problems += Problem.of_validation(exc, display, line, fix)
        except ProblemsError as err:
            problems += (replace(p, file=display, line=line) for p in err.problems)


class _Capped:
    """A file that reads nothing past ``left`` more bytes (a growing file or a device stays within
    the limit); ``over`` says it would have."""

    def __init__(self, f: BinaryIO, left: int) -> None:
        self._f, self._left, self.over = f, left, False

    def read(self, n: int) -> bytes:
        if self._left <= 0:
            self.over = self.over or bool(self._f.read(1))
            return b""
        data = self._f.read(min(n, self._left))
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._f.close()


def dumps_line(obj: Any) -> str:
    """One JSON line (no newline) that :func:`read_jsonl` reads back: UTF-8, with U+2028 and U+2029
    (line breaks to :meth:`str.splitlines` and JavaScript) escaped."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
