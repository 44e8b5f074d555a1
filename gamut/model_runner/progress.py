"""Progress of a run: a rich bar per setting on a terminal, plain lines elsewhere (CI, logs)."""

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

from gamut.model_runner.plan import SettingStats


def _tokens(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


def describe(s: SettingStats) -> str:
    """One plain line: done, failed, rate, ETA and tokens of a setting."""
    left = s.todo - s.done - s.failed
    eta = f"{left / s.rate:.0f}s" if s.rate > 0 and left else "-"
    return (
        f"{s.setting.value}: {s.done}/{s.todo} answered, {s.failed} failed, "
        f"{s.skipped} already done, {s.rate:.1f}/s, ETA {eta}, "
        f"tokens {_tokens(s.input_tokens)} in / {_tokens(s.output_tokens)} out"
    )


class PlainReporter:
    """Prints a line per setting every ``every_s`` seconds or 10% of progress, and at the end."""

    def __init__(self, console: Console, every_s: float = 15.0) -> None:
        self._console = console
        self._every = every_s
        self._last: dict[str, tuple[float, int]] = {}

    def update(self, stats: SettingStats) -> None:
        """Print when enough has changed since the last line."""
        key = stats.setting.value
        now = time.monotonic()
        count = stats.done + stats.failed
        last_t, last_n = self._last.get(key, (0.0, -1))
        step = max(1, stats.todo // 10)
        finished = count == stats.todo
        if last_n < 0 or finished or now - last_t >= self._every or count - last_n >= step:
            if finished and last_n == count:
                return
            self._last[key] = (now, count)
            self._console.print(describe(stats), markup=False, highlight=False)

    def __enter__(self) -> PlainReporter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class RichReporter:
    """A live progress bar per setting: done, failed, rate, ETA and tokens."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed"),
            TextColumn("{task.fields[rate]:.1f}/s"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[tokens]} tokens"),
            console=console,
        )
        self._tasks: dict[str, TaskID] = {}

    def update(self, stats: SettingStats) -> None:
        """Move the setting's bar."""
        key = stats.setting.value
        if key not in self._tasks:
            self._tasks[key] = self._progress.add_task(
                key, total=stats.todo, failed=0, rate=0.0, tokens="0"
            )
        self._progress.update(
            self._tasks[key],
            completed=stats.done + stats.failed,
            failed=stats.failed,
            rate=stats.rate,
            tokens=_tokens(stats.input_tokens + stats.output_tokens),
        )

    def __enter__(self) -> RichReporter:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()


def reporter_for(console: Console) -> RichReporter | PlainReporter:
    """A progress bar on a terminal, plain lines otherwise."""
    return RichReporter(console) if console.is_terminal else PlainReporter(console)
