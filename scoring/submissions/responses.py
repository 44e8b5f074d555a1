"""One response file (``multimodal.jsonl`` / ``text_only.jsonl``) read and checked line by line."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from scoring.errors import Problem
from scoring.jsonl import JsonlLimits, read_jsonl, size_text
from scoring.submissions.formats import ResponseUsage
from scoring.submissions.report import ERROR, WARNING, Limits

#: Problems listed per response file; the rest are counted in one more problem.
MAX_PROBLEMS_PER_FILE = 200
_LINE_FORMAT = 'write one JSON object per line: {"question_id": "...", "response": "..."}'
_KEYS = ("question_id", "response")
_KEY_SET = frozenset(_KEYS)
#: The optional key: the provider's token counts of the response (``ResponseUsage``).
USAGE_KEY = "usage"
_WITH_USAGE = _KEY_SET | {USAGE_KEY}
_USAGE_FORMAT = (
    'write "usage": {"input_tokens": N, "output_tokens": N} (whole numbers, 0 or more), '
    "or leave it out"
)
# Control characters (Unicode category Cc) other than newline and tab, and unpaired surrogates.
_BAD_CHAR = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


@dataclass
class Response:
    """One response and the line it is on; ``usage``: the tokens (input, output) its line
    records (``gamut generate`` writes them), None when it records none."""

    line: int
    text: str
    usage: tuple[int, int] | None = None


@dataclass
class ResponseFile:
    """What a response file holds (the first response to each question id), and its problems."""

    responses: dict[str, Response] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def jsonl_limits(limits: Limits) -> JsonlLimits:
    """The reader's limits for a response file: a line may hold one response, fully escaped."""
    return JsonlLimits(
        max_file_bytes=limits.max_file_bytes,
        max_line_bytes=max(1024 * 1024, 8 * limits.max_response_bytes),
    )


def _bad_char(text: str) -> str | None:
    """Describe the first forbidden character in ``text``, or None when there is none."""
    m = _BAD_CHAR.search(text)
    if m is None:
        return None
    code = ord(m.group())
    kind = "an unpaired surrogate" if 0xD800 <= code <= 0xDFFF else "control character"
    return f"{kind} U+{code:04X} (character {m.start() + 1})"


def _usage(
    obj: dict[str, object], line: int, qid: str, problem: Callable[..., None]
) -> tuple[int, int] | None:
    """The line's token counts, checked by :class:`~scoring.submissions.formats.ResponseUsage`
    (one rule for the reader and the published schema); a bad value is a problem."""
    if USAGE_KEY not in obj:
        return None
    from pydantic import ValidationError

    try:
        usage = ResponseUsage.model_validate(obj[USAGE_KEY])
    except ValidationError:
        shown = json.dumps(obj[USAGE_KEY])
        problem(line, f"usage is not two token counts (found {shown[:80]})", _USAGE_FORMAT, qid)
        return None
    return usage.input_tokens, usage.output_tokens


def _shape(obj: dict[str, object]) -> Iterator[tuple[str, str, str | None]]:
    """(message, fix, question id) for what is wrong with a line's keys and their types."""
    qid, resp = obj.get("question_id"), obj.get("response")
    keys = obj.keys()
    if keys != _KEY_SET and keys != _WITH_USAGE:  # checked one by one only when wrong
        extra = sorted(set(obj) - _WITH_USAGE)
        if extra:
            yield (
                "unexpected key(s): " + ", ".join(repr(k) for k in extra),
                "keep only question_id, response and (optionally) usage",
                None,
            )
        missing = [k for k in _KEYS if k not in obj]
        if missing:
            yield "missing key(s): " + ", ".join(repr(k) for k in missing), _LINE_FORMAT, None
    if "question_id" in obj and not isinstance(qid, str):
        yield f"question_id must be a string (found {json.dumps(qid)[:60]})", _LINE_FORMAT, None
    if "response" in obj and not isinstance(resp, str):
        yield (
            f"response must be a string (found {type(resp).__name__})",
            'write the model\'s answer as a JSON string; use "" if it gave none',
            qid if isinstance(qid, str) else None,
        )


def _text(resp: str, max_bytes: int) -> Iterator[tuple[str, str, str]]:
    """(message, fix, severity) for what is wrong with a response's text."""
    bad = _bad_char(resp)
    if bad is not None:
        fix = "remove it; the only control characters allowed are newline and tab"
        yield f"response contains {bad}", fix, ERROR
    # a response of at most max_bytes // 4 characters is within the limit however encoded (a
    # character is at most 4 bytes): only longer ones are encoded to be measured
    n_bytes = 0 if len(resp) <= max_bytes // 4 else len(resp.encode("utf-8", "surrogatepass"))
    if n_bytes > max_bytes:
        yield (
            f"response is {size_text(n_bytes)}, over the {size_text(max_bytes)} limit",
            "shorten it, e.g. by limiting the model's output tokens",
            ERROR,
        )
    if not resp or resp.isspace():  # what strip() would empty, without the copy
        yield (
            "empty response: it scores 'missing' on every check",
            "check that the model really gave no answer",
            WARNING,
        )


def _summary(display: str, setting: str, unlisted: list[str], absent: list[str]) -> list[Problem]:
    """The problems that close a file's list: how many more were not listed (``unlisted``: their
    severities), and which questions have no response."""
    out = []
    if unlisted:
        more = f"{len(unlisted)} more problem(s) in this file are not listed"
        severity = ERROR if ERROR in unlisted else WARNING
        fix = "fix the ones above and validate again"
        out.append(Problem(display, None, more, fix, severity=severity))
    if absent:
        shown = ", ".join(absent[:10]) + (
            f" and {len(absent) - 10} more" if len(absent) > 10 else ""
        )
        missing = f"{len(absent)} {setting} question(s) have no response: {shown}"
        fix = "add one line for each; `gamut generate` resumes where it stopped"
        out.append(Problem(display, None, missing, fix))
    return out


def read_response_file(
    path: Path,
    display: str,
    setting: str,
    question_ids: Collection[str] | None,
    limits: Limits,
) -> ResponseFile:
    """Read and check one response file, every problem at once (at most
    :data:`MAX_PROBLEMS_PER_FILE` listed, the rest counted); ``question_ids`` None: no id checks."""
    out = ResponseFile()
    unlisted: list[str] = []  # severities of the problems past the cap

    def report(p: Problem) -> None:
        if len(out.problems) < MAX_PROBLEMS_PER_FILE:
            out.problems.append(p)
        else:
            unlisted.append(p.severity)

    def problem(
        n: int | None, msg: str, fix: str, qid: str | None = None, sev: str = ERROR
    ) -> None:
        report(Problem(display, n, msg, fix, question_id=qid, severity=sev))

    max_bytes = limits.max_response_bytes
    size_fix = f"shorten the responses; each may hold at most {size_text(max_bytes)}"
    read = read_jsonl(path, display, _LINE_FORMAT, jsonl_limits(limits), what="a response file",
                      size_fix=size_fix, report=report)  # fmt: skip
    if read.unreadable:
        return out
    if read.empty:
        answer = f"{_LINE_FORMAT}, one for every public question; `gamut generate` writes this file"
        problem(None, "empty file: it holds no responses", answer)
        return out
    known = None if question_ids is None else frozenset(question_ids)
    first_line: dict[str, int] = {}
    for parsed in read.lines:
        n, obj = parsed.line, parsed.value
        if not isinstance(obj, dict):
            problem(n, f"not a JSON object (found {type(obj).__name__})", _LINE_FORMAT)
            continue
        for msg, fix, who in _shape(obj):
            problem(n, msg, fix, who)
        qid, resp = obj.get("question_id"), obj.get("response")
        if not isinstance(qid, str):
            continue
        if known is not None and qid not in known:
            export = "`gamut questions export` lists them"
            problem(
                n,
                f"unknown question_id {qid!r}",
                f"answer only the public {setting} questions; {export}",
            )
        elif qid in first_line:
            again = f"question_id {qid!r} answered again (first on line {first_line[qid]})"
            problem(n, again, "keep exactly one response per question", qid)
        else:
            first_line[qid] = n
            if isinstance(resp, str):
                for msg, fix, sev in _text(resp, max_bytes):
                    problem(n, msg, fix, qid, sev)
                out.responses[qid] = Response(n, resp, _usage(obj, n, qid, problem))
    absent = [q for q in question_ids or () if q not in first_line]
    out.problems += _summary(display, setting, unlisted, absent)  # past the cap: they sum it up
    return out


def read_responses(
    path: Path,
    display: str | None = None,
    limits: Limits | None = None,
) -> tuple[dict[str, str], list[Problem]]:
    """The responses of one file by question id, and its errors, read exactly as the validator
    reads them (the judge's and the scorer's reader)."""
    read = read_response_file(path, display or str(path), "", None, limits or Limits())
    errors = [p for p in read.problems if p.severity == ERROR]
    return {qid: r.text for qid, r in read.responses.items()}, errors
