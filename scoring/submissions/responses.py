"""One response file (``multimodal.jsonl`` / ``text_only.jsonl``) read and checked line by line."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from scoring.errors import Problem
from scoring.submissions.report import ERROR, WARNING, Limits

_LINE_FORMAT = 'write one JSON object per line: {"question_id": "...", "response": "..."}'
_KEYS = ("question_id", "response")
# Control characters (Unicode category Cc) other than newline and tab, and unpaired surrogates.
_BAD_CHAR = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


@dataclass
class Response:
    """One response and the line it is on."""

    line: int
    text: str


@dataclass
class ResponseFile:
    """What a response file holds, and what is wrong with it.

    Attributes:
        responses: by question id, the first response given for it.
        problems: every error and warning found in the file.
    """

    responses: dict[str, Response] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.1f} KB"


def _bad_char(text: str) -> str | None:
    """Describe the first forbidden character in ``text``, or None when there is none."""
    m = _BAD_CHAR.search(text)
    if m is None:
        return None
    code = ord(m.group())
    kind = "an unpaired surrogate" if 0xD800 <= code <= 0xDFFF else "control character"
    return f"{kind} U+{code:04X} (character {m.start() + 1})"


def _read_limited(path: Path, limit: int) -> bytes | None:
    """The file's bytes, or None when it holds more than ``limit`` (never reads past it)."""
    with path.open("rb") as f:
        data = f.read(limit + 1)
    return None if len(data) > limit else data


def read_response_file(
    path: Path,
    display: str,
    setting: str,
    question_ids: Collection[str] | None,
    limits: Limits,
) -> ResponseFile:
    """Read and check one response file, reporting every problem at once.

    Args:
        path: the file (its caller has made sure it is a regular file, not a symlink).
        display: the file name used in problems (relative to the repository root).
        setting: ``multimodal`` or ``text_only``, for messages.
        question_ids: the public question ids of the setting, or None to skip the id checks.
        limits: the size limits.

    Returns:
        The responses by question id and the problems found.
    """
    out = ResponseFile()

    def problem(
        line: int | None, msg: str, fix: str, qid: str | None = None, sev: str = ERROR
    ) -> None:
        out.problems.append(Problem(display, line, msg, fix, question_id=qid, severity=sev))

    size = path.stat().st_size
    data = None if size > limits.max_file_bytes else _read_limited(path, limits.max_file_bytes)
    if data is None:
        problem(
            None,
            f"file is {_size(max(size, limits.max_file_bytes + 1))}, over the "
            f"{_size(limits.max_file_bytes)} limit for a response file",
            f"shorten the responses; each may hold at most {_size(limits.max_response_bytes)}",
        )
        return out
    if not data.strip():
        problem(
            None,
            "empty file: it holds no responses",
            f"{_LINE_FORMAT}, one for every public question; `gamut generate` writes this file",
        )
        return out
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        problem(1, "file is UTF-16, not UTF-8", "save the file as UTF-8 without a BOM")
        return out
    if data.startswith(codecs.BOM_UTF8):
        problem(
            1,
            "file starts with a UTF-8 byte order mark (BOM)",
            "save the file as UTF-8 without a BOM",
        )
        data = data[len(codecs.BOM_UTF8) :]

    known = None if question_ids is None else frozenset(question_ids)
    first_line: dict[str, int] = {}
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for n, raw in enumerate(lines, 1):
        raw = raw.removesuffix(b"\r")
        if not raw.strip():
            problem(n, "empty line", "remove the empty line")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problem(
                n, f"not valid UTF-8 (byte {exc.start + 1} of the line)", "save the file as UTF-8"
            )
            continue
        try:
            obj = json.loads(text, strict=False)
        except json.JSONDecodeError as exc:
            problem(n, f"not valid JSON: {exc.msg} (column {exc.colno})", _LINE_FORMAT)
            continue
        if not isinstance(obj, dict):
            problem(n, f"not a JSON object (found {type(obj).__name__})", _LINE_FORMAT)
            continue
        extra = sorted(set(obj) - set(_KEYS))
        if extra:
            problem(
                n,
                "unexpected key(s): " + ", ".join(repr(k) for k in extra),
                "keep only question_id and response",
            )
        missing = [k for k in _KEYS if k not in obj]
        if missing:
            problem(n, "missing key(s): " + ", ".join(repr(k) for k in missing), _LINE_FORMAT)
        qid, resp = obj.get("question_id"), obj.get("response")
        if "question_id" in obj and not isinstance(qid, str):
            problem(n, f"question_id must be a string (found {json.dumps(qid)})", _LINE_FORMAT)
        if "response" in obj and not isinstance(resp, str):
            problem(
                n,
                f"response must be a string (found {type(resp).__name__})",
                'write the model\'s answer as a JSON string; use "" if it gave none',
                qid if isinstance(qid, str) else None,
            )
        if not isinstance(qid, str):
            continue
        if known is not None and qid not in known:
            problem(
                n,
                f"unknown question_id {qid!r}",
                f"answer only the public {setting} questions; `gamut questions export` lists them",
            )
            continue
        if qid in first_line:
            problem(
                n,
                f"question_id {qid!r} answered again (first on line {first_line[qid]})",
                "keep exactly one response per question",
                qid,
            )
            continue
        first_line[qid] = n
        if not isinstance(resp, str):
            continue
        bad = _bad_char(resp)
        if bad is not None:
            problem(
                n,
                f"response contains {bad}",
                "remove it; the only control characters allowed are newline and tab",
                qid,
            )
        n_bytes = len(resp.encode("utf-8", errors="surrogatepass"))
        if n_bytes > limits.max_response_bytes:
            problem(
                n,
                f"response is {_size(n_bytes)}, over the {_size(limits.max_response_bytes)} limit",
                "shorten it, e.g. by limiting the model's output tokens",
                qid,
            )
        if not resp.strip():
            problem(
                n,
                "empty response: it scores 'missing' on every check",
                "check that the model really gave no answer",
                qid,
                WARNING,
            )
        out.responses[qid] = Response(n, resp)

    if question_ids is not None:
        absent = [q for q in question_ids if q not in first_line]
        if absent:
            shown = ", ".join(absent[:10]) + (
                f" and {len(absent) - 10} more" if len(absent) > 10 else ""
            )
            problem(
                None,
                f"{len(absent)} {setting} question(s) have no response: {shown}",
                "add one line for each; `gamut generate` resumes where it stopped",
            )
    return out
