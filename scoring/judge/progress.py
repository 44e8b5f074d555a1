"""Progress of judge runs: the sink protocol, and plain lines for logs and CI."""

from __future__ import annotations

import sys
import time
from typing import IO, Protocol


class ProgressSink(Protocol):
    """Receives progress events from a judge run."""

    def start(self, judge: str, total: int, cache_hits: int) -> None:
        """A judge starts ``total`` calls; ``cache_hits`` checks already had verdicts."""

    def advance(self, judge: str, ok: bool, n: int = 1) -> None:
        """``n`` (response, check) pairs finished, with a verdict (``ok``) or a failure."""

    def close(self) -> None:
        """The run is over."""


class NullProgress:
    """Shows nothing."""

    def start(self, judge: str, total: int, cache_hits: int) -> None:
        """Ignore."""

    def advance(self, judge: str, ok: bool, n: int = 1) -> None:
        """Ignore."""

    def close(self) -> None:
        """Ignore."""


class ProgressCount:
    """Counts of one judge's run, for progress displays."""

    __slots__ = ("done", "failed", "hits", "last", "t0", "total")

    def __init__(self, total: int, hits: int) -> None:
        self.total, self.hits, self.done, self.failed = total, hits, 0, 0
        self.t0 = self.last = time.monotonic()


class PlainProgress:
    """One line per judge every ``every_s`` seconds, and at the end (for logs and CI)."""

    def __init__(self, stream: IO[str] | None = None, every_s: float = 10.0) -> None:
        self._stream = stream or sys.stderr
        self._every = every_s
        self._c: dict[str, ProgressCount] = {}

    def _line(self, judge: str) -> None:
        c = self._c[judge]
        el = max(time.monotonic() - c.t0, 1e-9)
        print(
            f"judge {judge}: {c.done}/{c.total} checks done, {c.failed} failed, "
            f"{c.hits} cache hits, {c.done / el:.1f}/s",
            file=self._stream,
            flush=True,
        )

    def start(self, judge: str, total: int, cache_hits: int) -> None:
        """Print the plan."""
        self._c[judge] = ProgressCount(total, cache_hits)
        print(
            f"judge {judge}: {total} checks to judge, {cache_hits} cache hits",
            file=self._stream,
            flush=True,
        )

    def advance(self, judge: str, ok: bool, n: int = 1) -> None:
        """Count, and print a line when it is time."""
        c = self._c[judge]
        c.done += n
        c.failed += 0 if ok else n
        now = time.monotonic()
        if now - c.last >= self._every:
            c.last = now
            self._line(judge)

    def close(self) -> None:
        """Print the final line of each judge."""
        for judge in self._c:
            self._line(judge)
