"""Progress of judge runs on a terminal: a rich bar per judge; plain lines when not a terminal."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from scoring.judge.progress import PlainProgress, ProgressCount, ProgressSink


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
        self._c: dict[str, ProgressCount] = {}
        self._p.start()

    def start(self, judge: str, total: int, cache_hits: int) -> None:
        """Add a bar."""
        self._c[judge] = ProgressCount(total, cache_hits)
        self._tasks[judge] = self._p.add_task(
            judge, total=total, hits=cache_hits, failed=0, rate=""
        )

    def advance(self, judge: str, ok: bool, n: int = 1) -> None:
        """Move the bar."""
        c = self._c[judge]
        c.done += n
        c.failed += 0 if ok else n
        rate = c.done / max(time.monotonic() - c.t0, 1e-9)
        self._p.update(self._tasks[judge], advance=n, failed=c.failed, rate=f"{rate:.1f}/s")

    def close(self) -> None:
        """Stop drawing."""
        self._p.stop()


def default_progress(console: Console | None = None) -> ProgressSink:
    """A rich bar when the console (default: the CLI's stderr) is a terminal, else plain lines."""
    if console is None:
        from gamut.cli._common import err_console

        console = err_console.console
    return RichProgress(console) if console.is_terminal else PlainProgress(console.file)


def plain_progress() -> ProgressSink:
    """Plain lines on the command line's stderr console, terminal or not (short side runs)."""
    from gamut.cli._common import err_console

    return PlainProgress(err_console.console.file)
