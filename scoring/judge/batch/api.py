"""What a provider's batch API must do, and how requests are split within its limits.

A :class:`BatchAPI` submits one chunk of request lines as one batch, reports a batch's state, and
streams its results. Each request carries a ``custom_id`` derived from its cache key (see
:mod:`scoring.judge.batch.ids`), so every result maps back to exactly one (response, check).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from scoring.errors import GamutError
from scoring.judge.backends import Completion

#: How far back (seconds, by either clock) a batch whose id was never recorded is looked for: a
#: batch runs at most 24 h, and clocks may differ by minutes.
FIND_WINDOW_S = 26 * 3600
#: Where the provider keeps no metadata (the batch is matched by its request count), how far
#: the provider's clock may be behind this machine's.
FIND_SKEW_S = 3600

#: Result kinds other than a reply: ``rejected`` (the provider refused the request: not
#: resubmitted in this run), ``api_error`` (a transient error), ``expired`` and ``canceled``
#: (never processed; resubmitted without counting an attempt).
RESUBMIT_KINDS = frozenset({"api_error", "expired", "canceled"})


@dataclass(frozen=True, slots=True)
class BatchLine:
    """One request of a batch: its custom id and its serialized form (one JSON line, no
    newline), as the provider's batch format wants it."""

    custom_id: str
    size: int
    data: bytes


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One result line: a completion, or an error of one of the kinds above."""

    custom_id: str
    completion: Completion | None = None
    error_kind: str = ""
    message: str = ""
    raw: str = ""


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """A batch's state at the provider.

    Attributes:
        state: the provider's word (``in_progress``, ``completed``, ``expired``, ``ended``, ...).
        finished: no more results will appear (its results can be collected).
        failed: the batch as a whole was refused (every request in it is ``rejected``).
        message: the provider's reason when ``failed``.
    """

    state: str
    finished: bool
    failed: bool = False
    message: str = ""


@dataclass(frozen=True, slots=True)
class Limits:
    """A provider's per-batch limits."""

    max_requests: int
    max_bytes: int


class BatchError(GamutError):
    """A batch API call failed (after the SDK's retries); ``str(exc)`` is redacted. The batch
    records are unchanged, so the next run takes the same step again."""


class BatchAPI(ABC):
    """A provider's batch API for one judge.

    Args:
        redact: blanks the API key out of any text it is given (the backend's ``redact``).
    """

    limits: Limits

    def __init__(self, redact: Callable[[str], str]) -> None:
        self._redact = redact

    def _fail(self, what: str, exc: Exception) -> BatchError:
        """A provider error as a :class:`BatchError`, with the key redacted."""
        return BatchError(self._redact(f"{what}: {type(exc).__name__}: {exc}"))

    @abstractmethod
    def line(self, custom_id: str, body: dict[str, Any]) -> BatchLine:
        """Serialize one request (``body`` from the judge backend's body builder)."""

    @abstractmethod
    def submit(self, lines: list[BatchLine], tag: str) -> str:
        """Create one batch of ``lines`` (within :attr:`limits`); returns its id. ``tag`` names
        the chunk, so that a batch created by a run killed before recording it can be found."""

    @abstractmethod
    def find(
        self, tag: str, since: float, n_requests: int, known: frozenset[str] = frozenset()
    ) -> str | None:
        """The id of the batch created for the chunk ``tag`` (recorded at ``since``, epoch
        seconds by this machine's clock, which may differ from the provider's by minutes), if
        the provider has one; None when it has none. ``known``: batch ids the ledger already
        records, never the answer."""

    @abstractmethod
    def status(self, batch_id: str) -> BatchStatus:
        """The batch's state."""

    @abstractmethod
    def results(self, batch_id: str) -> Iterator[BatchResult]:
        """Every result of a finished batch (also the partial results of an expired or
        cancelled one), streamed."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


def json_line(obj: dict[str, Any]) -> bytes:
    """One compact JSON line (ASCII, non-ASCII characters escaped; no newline)."""
    return json.dumps(obj, separators=(",", ":")).encode()


def split(
    lines: Iterable[BatchLine], limits: Limits, overhead: int = 1
) -> Iterator[list[BatchLine]]:
    """Chunks of ``lines`` in order, each within ``limits`` (``overhead`` bytes per line for the
    separator). A single line larger than the byte limit is its own chunk (the provider refuses
    it, and the refusal names it)."""
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


__all__ = [
    "FIND_SKEW_S",
    "FIND_WINDOW_S",
    "RESUBMIT_KINDS",
    "BatchAPI",
    "BatchError",
    "BatchLine",
    "BatchResult",
    "BatchStatus",
    "Limits",
    "json_line",
    "split",
]
