"""What a provider's batch API must do, and how requests are split within its limits."""

from __future__ import annotations

import contextlib
import json
import re
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from scoring.errors import BackendError, BatchError, ErrorKind, GamutError
from scoring.jsonl import JsonlLimits, parse_line
from scoring.judge.backends import Backend, Completion, JudgeRequest, JudgeSettings, Turn

#: How far back (seconds, by either clock) a batch whose id was never recorded is looked for: a
#: batch runs at most 24 h, and clocks may differ by minutes.
FIND_WINDOW_S = 26 * 3600
#: Where the provider keeps no metadata (a batch is shown to be the record's by the custom ids of
#: its results), how far apart the provider's clock and this machine's may be, either way.
FIND_SKEW_S = 3600
#: Pages of a provider's batch listing (100 batches each, newest first) that a sweep for
#: batches no ledger row names reads.
SWEEP_PAGES = 10
SWEEP_PAGE_SIZE = 100

#: Result kinds other than a reply: ``rejected`` (the provider refused the request: not
#: resubmitted in this run), ``api_error`` (a transient error), ``expired`` and ``canceled``
#: (never processed; resubmitted without counting an attempt).
#: ``bad_line`` (a result line that is not a result, but names its id) is a failure too.
RESUBMIT_KINDS = frozenset({"api_error", "expired", "canceled"})


@dataclass(frozen=True, slots=True)
class BatchLine:
    """One request of a batch: its custom id and its serialized form (one JSON line, no
    newline), as the provider's batch format wants it."""

    custom_id: str
    size: int
    data: bytes


class BatchResult(NamedTuple):
    """One result line: a completion, or an error of one of the kinds above (a tuple: one is
    made per result line, and a frozen dataclass costs a microsecond more to make)."""

    custom_id: str
    completion: Completion | None = None
    error_kind: str = ""
    message: str = ""
    raw: str = ""


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """A batch's state at the provider."""

    state: str
    finished: bool
    failed: bool = False
    message: str = ""


class Found(NamedTuple):
    """What :meth:`BatchBackend.find` knows of the batch a ``submitting`` record names."""

    batch_ids: tuple[str, ...] = ()
    waiting: bool = False


class Listed(NamedTuple):
    """A batch as the provider's listing shows it: its id, and whether it has finished."""

    batch_id: str
    finished: bool


def pages_of(first: Any, pages: int) -> Iterator[Any]:
    """The items of at most ``pages`` pages of an SDK listing, from its first page on (the SDKs'
    ``has_next_page``/``get_next_page``: OpenAI's ``after``, Anthropic's ``after_id`` cursor)."""
    page = first
    for n in range(1, pages + 1):
        yield from page.data
        if n == pages or not page.has_next_page():
            return
        page = page.get_next_page()


@dataclass(frozen=True, slots=True)
class Limits:
    """A provider's per-batch limits."""

    max_requests: int
    max_bytes: int


#: The share of a provider's stated byte limit a batch fills: room for what is not counted per
#: line (the multipart envelope of an upload, the JSON array around Anthropic's requests).
BYTE_LIMIT_MARGIN = 0.95


def stated_megabytes(mb: int) -> int:
    """The bytes a batch may hold under a provider's limit of ``mb`` MB: decimal megabytes, as
    the providers state them (200 MB is 200,000,000 bytes, not 200 MiB), less the margin."""
    return int(mb * 1_000_000 * BYTE_LIMIT_MARGIN)


#: A provider's word for an error (a type or code such as ``invalid_request_error``): kept
#: when rubrics are held; anything else in its place is dropped.
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
#: A provider's message in a failure is cut here (it may quote the whole request).
MAX_MESSAGE_CHARS = 500


def error_text(
    status: int | None,
    word: str,
    message: str,
    *,
    held: bool,
    redact: Callable[[str], str],
) -> str:
    """What a failed request's result says, as printed and stored: ``HTTP 400: word: message``."""
    word = word if _WORD.fullmatch(word) else ""
    head = ": ".join(x for x in (f"HTTP {status}" if status is not None else "", word) if x)
    if held:
        return (head or "error") + " (the provider's message is not shown: rubrics are held)"
    text = redact(message)
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS] + " [cut]"
    return ": ".join(x for x in (head, text) if x) or "error (no message)"


#: Longest result line read from a provider, in bytes (a reply is capped at 256 KB).
MAX_RESULT_LINE_BYTES = 1 << 20
_RESULT_LIMITS = JsonlLimits(max_line_bytes=MAX_RESULT_LINE_BYTES)
_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([0-9a-f]{64})"')


def read_result_line(
    raw: str | bytes,
    where: str,
    parse: Callable[[Any, str], BatchResult],
    notes: list[str],
) -> BatchResult | None:
    """One line of a provider's result file, parsed within limits (depth, size) by ``parse``."""
    data = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else raw
    value, wrong = parse_line(data, _RESULT_LIMITS)
    if wrong is None:
        try:
            return parse(value, data.decode("utf-8", "replace"))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # the exception's class only: its text quotes the line (a held check, with held
            # rubrics), and this note is printed
            wrong = f"its fields are not a result's: {type(exc).__name__}"
    m = _CUSTOM_ID.search(data[:4096])
    if m is None:
        notes.append(f"{where} is not a result ({wrong}) and names no custom_id: skipped")
        return None
    return BatchResult(m[1].decode(), None, "bad_line", f"{where} is not a result ({wrong})")


class BatchBackend(Backend):
    """A backend with a batch mode: the provider's batch API, through a synchronous SDK client
    (``_batches``, made on first use), and the body a batch line carries.

    ``held``: rubrics are held, so a provider error keeps its class, HTTP status and error word
    only. ``notes``: result lines the reading had to skip, for people (never request text).
    """

    limits: Limits
    held: bool = False

    def __init__(self, name: str, judge: JudgeSettings, api_key: str | None, root: Path) -> None:
        super().__init__(name, judge, api_key, root)
        self.notes: list[str] = []

    def _sdk_error(self) -> type[Exception]:
        """The SDK's base error class (its module imported when a call is made)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def _call(self, what: str) -> Iterator[None]:
        """An SDK or file error inside as a :class:`BatchError` saying ``what`` failed, key
        redacted; with held rubrics, its class and HTTP status only."""
        try:
            yield
        except (self._sdk_error(), OSError) as exc:
            if not self.held:
                raise BatchError(self.redact(f"{what}: {type(exc).__name__}: {exc}")) from None
            status = getattr(exc, "status_code", None)
            brief = BackendError(
                ErrorKind.API_ERROR,
                "",
                error_class=type(exc).__name__,
                status=status if isinstance(status, int) else None,
            ).brief()
            raise BatchError(
                f"{what}: {brief} (the provider's message is not shown: rubrics are held)"
            ) from None

    def _read(
        self, lines: Iterable[str], where: str, parse: Callable[[Any, str], BatchResult]
    ) -> Iterator[BatchResult]:
        """The results of a provider's result file (``where``: its name, for notes)."""
        for n, raw in enumerate(lines, 1):
            if raw.strip():
                res = read_result_line(raw, f"{where} line {n}", parse, self.notes)
                if res is not None:
                    yield res

    @abstractmethod
    def batch_body(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> dict[str, Any]:
        """The request body a batch line carries: the same one ``complete`` sends."""

    @abstractmethod
    def line(self, custom_id: str, body: dict[str, Any]) -> BatchLine:
        """Serialize one request (``body`` from :meth:`batch_body`)."""

    @abstractmethod
    def submit(self, lines: list[BatchLine], tag: str) -> str:
        """Create one batch of ``lines`` (within :attr:`limits`); returns its id. ``tag`` names
        the chunk, so that a batch created by a run killed before recording it can be found."""

    @abstractmethod
    def find(
        self, tag: str, since: float, ids: frozenset[str], known: frozenset[str] = frozenset()
    ) -> Found:
        """The batch created for the chunk ``tag`` of ``ids`` at ``since`` (this machine's epoch
        seconds), only when shown to carry exactly those requests; ``known``: ids the ledger already
        records."""

    @abstractmethod
    def listed(self, pages: int, size: int) -> Iterator[Listed]:
        """The batches on the account that may be this project's, newest first, from at most
        ``pages`` pages of ``size`` batches of the provider's listing."""

    @abstractmethod
    def status(self, batch_id: str) -> BatchStatus:
        """The batch's state."""

    @abstractmethod
    def results(self, batch_id: str) -> Iterator[BatchResult]:
        """Every result of a finished batch (also the partial results of an expired or
        cancelled one), streamed."""

    def close_batches(self) -> None:
        """Close the synchronous SDK client, if one was made."""
        client = self.__dict__.pop("_batches", None)
        if client is not None:
            client.close()


def batch_backend(backend: Backend) -> BatchBackend:
    """``backend`` as a batch-mode backend."""
    if not isinstance(backend, BatchBackend):
        raise GamutError(
            f"judge {backend.name!r}: provider {backend.judge.provider!r} has no batch mode"
        )
    return backend


def json_line(obj: dict[str, Any]) -> bytes:
    """One compact JSON line (ASCII, non-ASCII characters escaped; no newline)."""
    return json.dumps(obj, separators=(",", ":")).encode()


def split(
    lines: Iterable[BatchLine], limits: Limits, overhead: int = 1
) -> Iterator[list[BatchLine]]:
    """Chunks of ``lines`` in order, each within ``limits`` (``overhead`` bytes per line); a line
    over the byte limit is its own chunk (the provider's refusal names it)."""
    chunk: list[BatchLine] = []
    size = 0
    for ln in lines:
        n = ln.size + overhead
        if chunk and (len(chunk) >= limits.max_requests or size + n > limits.max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append(ln)
        size += n
    if chunk:
        yield chunk
