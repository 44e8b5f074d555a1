"""Progress: a live bar per setting on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io

from rich.console import Console

from gamut.model_runner.plan import SettingStats
from gamut.model_runner.progress import PlainReporter, RichReporter, describe, reporter_for
from scoring.questions import Setting


def _stats(done: int, failed: int = 0) -> SettingStats:
    s = SettingStats(
        Setting.MULTIMODAL,
        total=120,
        skipped=20,
        done=done,
        failed=failed,
        input_tokens=12_345,
        output_tokens=2_000_000,
    )
    s.started -= 10.0  # ten seconds in
    return s


def test_plain_lines_carry_done_failed_rate_eta_and_tokens() -> None:
    line = describe(_stats(50, 2))
    assert line.startswith("multimodal: 50/100 answered, 2 failed, 20 already done")
    assert "/s" in line and "ETA" in line and "12.3k in / 2.00M out" in line


def test_plain_reporter_is_quiet_between_steps_and_speaks_at_the_end() -> None:
    buf = io.StringIO()
    rep = PlainReporter(Console(file=buf, width=200), every_s=3600)
    for done in range(101):
        rep.update(_stats(done))
    rep.update(_stats(100))
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("multimodal: 0/100") and lines[-1].startswith("multimodal: 100/100")
    assert 10 <= len(lines) <= 12  # one line per 10%, not one per answer


def test_a_terminal_gets_a_live_bar() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=160)
    rep = reporter_for(console)
    assert isinstance(rep, RichReporter)
    with rep:
        rep.update(_stats(40, 3))
    out = buf.getvalue()
    assert "multimodal" in out and "43/100" in out and "3 failed" in out and "tokens" in out
    assert isinstance(reporter_for(Console(file=io.StringIO())), PlainReporter)
