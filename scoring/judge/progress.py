"""Progress display for judge runs: a rich bar on a terminal, plain lines elsewhere (CI)."""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)


class ProgressSink(Protocol):
    """Receives progress events from a judge run."""

    def start(self, judge: str, total: int, cache_hits: int) -> None:
        """A judge starts ``total`` calls; ``cache_hits`` checks already had verdicts."""

    def advance(self, judge: str, ok: bool) -> None:
        """One (response, check) finished, with a verdict (``ok``) or a failure."""

    def close(self) -> None:
        """The run is over."""


class NullProgress:
    """Shows nothing."""

    def start(self, judge: str, total: int, cache_hits: int) -> None:
        """Ignore."""

    def advance(self, judge: str, ok: bool) -> None:
        """Ignore."""

    def close(self) -> None:
        """Ignore."""


class _Count:
    __slots__ = ("done", "failed", "hits", "last", "t0", "total")

    def __init__(self, total: int, hits: int) -> None:
        self.total, self.hits, self.done, self.failed = total, hits, 0, 0
        self.t0 = self.last = time.monotonic()


class PlainProgress:
    """One line per judge every ``every_s`` seconds, and at the end (for logs and CI)."""

    def __init__(self, stream: TextIO | None = None, every_s: float = 10.0) -> None:
        self._stream = stream or sys.stderr
        self._every = every_s
        self._c: dict[str, _Count] = {}

    def _line(self, judge: str) -> None:
        c = self._c[judge]
        el = max(time.monotonic() - c.t0, 1e-9)
        print(
            f"judge {judge}: {c.done}/{c.total} calls done, {c.failed} failed, "
            f"{c.hits} cache hits, {c.done / el:.1f}/s",
            file=self._stream,
            flush=True,
        )

    def start(self, judge: str, total: int, cache_hits: int) -> None:
        """Print the plan."""
        self._c[judge] = _Count(total, cache_hits)
        print(
            f"judge {judge}: {total} calls to make, {cache_hits} cache hits",
            file=self._stream,
            flush=True,
        )

    def advance(self, judge: str, ok: bool) -> None:
        """Count, and print a line when it is time."""
        c = self._c[judge]
        c.done += 1
        c.failed += not ok
        now = time.monotonic()
        if now - c.last >= self._every:
            c.last = now
            self._line(judge)

    def close(self) -> None:
        """Print the final line of each judge."""
        for judge in self._c:
            self._line(judge)


class RichProgress:
    """A rich progress bar per judge with rate, ETA, cache hits and failures."""

    def __init__(self, console: Console) -> None:
        self._p = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            TextColumn("hits {task.fields[hits]}  [red]failed {task.fields[failed]}"),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._c: dict[str, _Count] = {}
        self._p.start()

    def start(self, judge: str, total: int, cache_hits: int) -> None:
        """Add a bar."""
        self._c[judge] = _Count(total, cache_hits)
        self._tasks[judge] = self._p.add_task(
            judge, total=total, hits=cache_hits, failed=0, rate=""
        )

    def advance(self, judge: str, ok: bool) -> None:
        """Move the bar."""
        c = self._c[judge]
        c.done += 1
        c.failed += not ok
        rate = c.done / max(time.monotonic() - c.t0, 1e-9)
        self._p.update(self._tasks[judge], advance=1, failed=c.failed, rate=f"{rate:.1f}/s")

    def close(self) -> None:
        """Stop drawing."""
        self._p.stop()


def default_progress(console: Console | None = None) -> ProgressSink:
    """A rich bar when stderr is a terminal, plain lines otherwise."""
    console = console or Console(stderr=True)
    return RichProgress(console) if console.is_terminal else PlainProgress()


__all__ = ["NullProgress", "PlainProgress", "ProgressSink", "RichProgress", "default_progress"]
