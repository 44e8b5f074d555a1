"""Progress output: plain lines when not on a terminal (CI), a rich bar on one."""

from __future__ import annotations

import io

from rich.console import Console

from gamut.progress import RichProgress, default_progress
from scoring.judge.progress import PlainProgress


def test_plain_lines_for_logs() -> None:
    out = io.StringIO()
    p = PlainProgress(out, every_s=0.0)
    p.start("gpt", 3, cache_hits=5)
    p.advance("gpt", True)
    p.advance("gpt", False)
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "judge gpt: 3 checks to judge, 5 cache hits"
    assert lines[-1].startswith("judge gpt: 2/3 checks done, 1 failed, 5 cache hits")


def test_default_is_plain_off_a_terminal_and_rich_on_one() -> None:
    assert isinstance(default_progress(Console(file=io.StringIO())), PlainProgress)
    term = Console(file=io.StringIO(), force_terminal=True, width=120)
    bar = default_progress(term)
    assert isinstance(bar, RichProgress)
    bar.start("gpt", 2, cache_hits=1)
    bar.advance("gpt", True)
    bar.advance("gpt", False)
    bar.close()
    text = term.file.getvalue()  # type: ignore[attr-defined]
    assert "gpt" in text and "2/2" in text and "failed 1" in text
