"""Every named exception of the engine and the application, and the :class:`Problem` they
report. The CLI turns each into one clean message and exit code 1 (with held rubrics, an error
that may quote a prompt or a reply, ``quotes_input``, by its class only).

::

    GamutError                   bad input, configuration or state; the message says what to do
    ├── ProblemsError            every problem of one pass (each a Problem: file, line, fix)
    │   └── RubricError          a meta-rubric breaks docs/contract.md §3 (caught per file)
    ├── DiskFullError            a write found no room (the same command goes on after)
    ├── NotRegularFileError      (also an OSError) a reader met a pipe, socket, device or link
    ├── BackendError             a judge's call gave no usable reply (kind, status, raw reply)
    ├── BadReply                 a judge's reply is not a verdict object (it is asked again)
    ├── Stopped                  a judge's breaker tripped: its remaining checks wait
    ├── BatchError               a provider's batch API call failed (the next run retries)
    ├── CallFailed               gamut generate: one question got no answer (``retry``)
    ├── PlaceholderError         a config still names an unpublished dataset
    └── (gamut.workbench's own: WorkbenchError, LLMError > Deferred, SearchError)

An error has a class of its own only when code catches it apart or it carries data.
"""

from __future__ import annotations

import errno
import sys
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any


class GamutError(Exception):
    """Base class of every error the engine and the application raise."""

    #: The message may quote a prompt, a check or a reply: with held rubrics it is never shown.
    quotes_input = False


@dataclass(frozen=True)
class Problem:
    """One problem found in an input file: where it is, what is wrong, and how to fix it."""

    file: str
    line: int | None
    message: str
    fix: str = ""
    question_id: str | None = None
    item_id: str | None = None
    severity: str = "error"

    @classmethod
    def of_validation(
        cls,
        exc: Any,
        file: str,
        line: int | None,
        fix: str,
        whole: str = "",
        *,
        quote_keys: bool = True,
    ) -> list[Problem]:
        """One problem per error of a pydantic ``ValidationError`` on one input line
        (:func:`validation_messages`; ``whole`` names the line's object)."""
        return [
            cls(file, line, text, fix)
            for text in validation_messages(exc, whole, quote_keys=quote_keys)
        ]

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [where + ":"]
        if self.question_id:
            who = f"question {self.question_id}" + (
                f", item {self.item_id}" if self.item_id else ""
            )
            parts.append(who + ":")
        if self.severity != "error":
            parts.append(f"{self.severity}:")
        parts.append(self.message)
        text = " ".join(parts)
        return f"{text} ({self.fix})" if self.fix else text


def validation_messages(exc: Any, whole: str = "", *, quote_keys: bool = True) -> list[str]:
    """Each error of a pydantic ``ValidationError`` as ``path: message``.

    Paths and messages are worded from the format, except a key the format does not have, which is
    the input's text: without ``quote_keys`` it is left unnamed, so a reply that may echo held text
    is never quoted.
    """
    out = []
    for e in exc.errors(include_url=False):
        loc, msg = tuple(e["loc"]), e["msg"]
        if e["type"] == "extra_forbidden" and not quote_keys:
            loc, msg = loc[:-1], "a key the format does not have (not named here)"
        elif e["type"] in _CUSTOM_ERRORS and not quote_keys:
            msg = "a value the format does not take"
        field = ".".join(str(p) for p in loc) or whole
        out.append(f"{field}: {msg}" if field else msg)
    return out


#: pydantic's error types whose message a validator wrote, and may quote the input.
_CUSTOM_ERRORS = frozenset({"value_error", "assertion_error"})


#: A problem at this many lines of one file is said once, with its count and first lines.
REPEATS_SUMMARISED = 4
PLACES_SHOWN = 3


def summarise(problems: list[Problem]) -> list[str]:
    """The problems as printed, in order, one problem found on :data:`REPEATS_SUMMARISED` lines
    or more as one line with its count and first :data:`PLACES_SHOWN` line numbers."""
    groups: dict[tuple[object, ...], list[Problem]] = {}
    for p in problems:
        key = (p.file, p.message, p.fix, p.severity, p.question_id, p.item_id)
        groups.setdefault(key if p.line is not None else (id(p),), []).append(p)
    out = []
    for same in groups.values():
        if len(same) < REPEATS_SUMMARISED:
            out += [str(p) for p in same]
            continue
        first = ", ".join(str(p.line) for p in same[:PLACES_SHOWN])
        text = str(replace(same[0], line=None)).replace(
            f"{same[0].file}:",
            f"{same[0].file}: lines {first} and {len(same) - PLACES_SHOWN} more "
            f"({len(same)} lines in all):",
            1,
        )
        out.append(text)
    return out


class ProblemsError(GamutError):
    """Raised with every problem found in one pass, never just the first."""

    def __init__(self, problems: list[Problem], summary: str = "") -> None:
        self.problems = problems
        self.summary = summary or f"{len(problems)} problem(s) found"
        super().__init__(str(self))

    def __str__(self) -> str:
        return self.summary + ":\n" + "\n".join(f"  {p}" for p in summarise(self.problems))


class RubricError(ProblemsError):
    """A meta-rubric breaks a rule of docs/contract.md §3."""


#: The errnos of a write that found no room: disk full, quota used up, or a file-size limit.
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
#: How SQLite (SQLITE_FULL), Arrow and the C library say so when they give no errno.
_NO_ROOM_WORDS = (
    "database or disk is full",
    "no space left on device",
    "disk quota exceeded",
    "file too large",
)


class DiskFullError(GamutError):
    """A write found no room (disk, quota or file-size limit); every write is atomic, so the
    same command goes on after room is made."""

    def __init__(self, detail: str, where: str | None = None) -> None:
        self.detail = detail
        self.where = where
        at = f" writing {where}" if where else ""
        super().__init__(
            f"no room left on disk{at} ({detail}): free space (or raise the quota or file-size "
            "limit) on the filesystem that holds it, then run the same command again; nothing "
            "was left half-written, and what was finished (verdicts, ledger shards, tables "
            "already in place) is kept and not redone"
        )

    @classmethod
    def find(cls, exc: BaseException) -> DiskFullError | None:
        """The disk-full error that ``exc``, or an exception in its chain, amounts to: an
        ``OSError`` with an errno of :data:`NO_ROOM`, or one (Arrow's) or a SQLite error whose
        message says so."""
        seen: set[int] = set()
        current: BaseException | None = exc
        sqlite = sys.modules.get("sqlite3")  # never imported: no SQLite error can be here
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if isinstance(current, DiskFullError):
                return current
            text = str(current)
            if isinstance(current, OSError):
                name = current.filename if isinstance(current.filename, str) else None
                if current.errno in NO_ROOM:
                    return cls(current.strerror or errno.errorcode[current.errno], name)
                if any(w in text.lower() for w in _NO_ROOM_WORDS):
                    return cls(text[:300], name)
            elif (
                sqlite is not None
                and isinstance(current, sqlite.OperationalError)
                and "database or disk is full" in text.lower()
            ):
                return cls(f"SQLite: {text[:300]}")
            # the chain a traceback shows: the cause, else the context unless `from None`
            current = current.__cause__ or (
                None if current.__suppress_context__ else current.__context__
            )
        return None


class NotRegularFileError(GamutError, OSError):
    """A reader found a pipe, socket, device, folder or link under a file's name
    (:func:`scoring.storage.open_regular`); an ``OSError`` too, so readers name it."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file but {kind}", path)
        self.kind = kind


class ErrorKind(StrEnum):
    """Why a judge's call produced no usable reply (the value is the failure kind recorded)."""

    API_ERROR = "api_error"  # transient (429, 5xx, timeouts), retries exhausted
    REJECTED = "rejected"  # a 4xx or invalid request, or no replay row: not asked again
    BAD_BODY = "bad_body"  # the HTTP body was not usable JSON: asked again
    TOO_LARGE = "too_large"  # the reply body passed the size limit: nothing of it kept


#: HTTP statuses that ask a client to slow down: rate limited, unavailable, overloaded (529).
SLOW_DOWN = frozenset({429, 503, 529})


class BackendError(GamutError):
    """A judge's call that produced no usable reply.

    ``kind`` says why, ``raw`` is the text received, ``status`` the HTTP status, ``retry_after`` the
    provider's ``Retry-After`` seconds; ``detail`` holds the provider's error type, code and
    parameter (identifiers only, never its message: safe to print with held rubrics).
    """

    quotes_input = True

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        raw: str = "",
        *,
        error_class: str = "",
        status: int | None = None,
        retry_after: float | None = None,
        detail: str = "",
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.raw = raw
        self.error_class = error_class
        self.status = status
        self.retry_after = retry_after
        self.detail = detail

    @property
    def slow_down(self) -> bool:
        """The provider asks to slow down: rate limited (429) or overloaded (503, 529)."""
        return self.kind is ErrorKind.API_ERROR and self.status in SLOW_DOWN

    def brief(self) -> str:
        """The error's class and HTTP status only: never the provider's message, which may
        quote a held check."""
        what = self.error_class or (
            "unusable reply body" if self.kind is ErrorKind.BAD_BODY else self.kind.value
        )
        return what + (f" (HTTP {self.status})" if self.status is not None else "")


class BadReply(GamutError):
    """A judge's reply that is not a valid verdict object; ``str(exc)`` says what is wrong."""

    quotes_input = True


class Stopped(GamutError):
    """The judge's breaker has tripped: no more requests (the check stays unjudged)."""


class BatchError(GamutError):
    """A batch API call failed (after the SDK's retries; ``str(exc)`` is redacted): the next
    run takes the same step again."""


class CallFailed(GamutError):
    """``gamut generate``: one question got no answer; ``retry``: asking again may help."""

    quotes_input = True

    def __init__(self, reason: str, retry: bool = False) -> None:
        super().__init__(reason)
        self.retry = retry


class PlaceholderError(GamutError):
    """A dataset id in the config is still the placeholder of an unpublished dataset."""


__all__ = ["GamutError", "Problem", "ProblemsError"]  # the names the site may use
