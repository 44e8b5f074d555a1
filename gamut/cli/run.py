"""``gamut run``: the main job. Judge what has no verdict yet, score, build the site."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gamut.cli._common import (
    config_option,
    err_console,
    fail,
    fail_left_out,
    get_project,
    handle_errors,
    list_left_out,
    note_left_out,
    out_console,
    warn_left_out,
)

if TYPE_CHECKING:
    from gamut.project import Project
    from scoring.judge import JudgeReport

MAX_LISTED = 20


@click.command("run")
@config_option
@click.option("--no-site", is_flag=True, help="Stop after scoring; do not build the site.")
@click.option(
    "--force", is_flag=True, help="Build the site even when nothing it reads changed since."
)
@click.option(
    "--left-out-ok",
    is_flag=True,
    help="Exit 0 when the only problem is submissions left out for failing validation (they "
    "are still listed, and on GitHub Actions also given as a warning annotation), so that a "
    "publish job deploys the others. Judge failures still exit 1.",
)
@handle_errors
def run(config_path: Path | None, no_site: bool, force: bool, left_out_ok: bool) -> None:
    """Judge every response/check without a verdict, score, and build the site.

    With --config demo/gamut.toml this runs the embedded demo offline (stored verdicts replayed,
    the offline matcher judging what they lack). A submission that fails validation is left
    out, a judge failure leaves its submission incomplete; the rest of the job still runs, then
    the command lists what went wrong and exits 1 (--left-out-ok: 0 for left-out ones only).
    """
    from gamut import pipeline

    project = get_project(config_path)
    result = pipeline.run(project, site=not no_site, force_site=force, notify=_report_stage)
    if result.site is not None:
        index = result.site / "index.html"
        out_console.print(f"\nThe leaderboard site is in {result.site}")
        config_arg = f" --config {config_path}" if config_path else ""
        out_console.print(
            f"  preview it:  {_gamut_command()} site serve{config_arg}"
            "   (then open http://127.0.0.1:8000/)"
        )
        out_console.print(f"  or open:     {index.as_uri()}")
    _fail_on_problems(project, result.report, list(result.left_out), left_out_ok)


def _report_stage(stage: str, result: object) -> None:
    """Print what a stage of the run produced (progress lines go to stderr)."""
    from scoring.judge import JudgeReport
    from scoring.submissions import ValidationReport
    from scoring.tables import Tables

    if stage == "validated" and isinstance(result, ValidationReport) and result.rejected:
        list_left_out(result, "not judged, not published")
    elif stage == "judged" and isinstance(result, JudgeReport):
        for line in result.summary_lines():
            err_console.print(line)
    elif stage == "verdicts":
        err_console.print(f"verdict table: {result}")
    elif stage == "scored" and isinstance(result, Tables):
        err_console.print(f"score tables: {result.out_dir}")
    elif stage == "site unchanged":
        err_console.print(f"site unchanged: {result}")


def _gamut_command() -> str:
    """The command as the user can type it: ``gamut`` on PATH, else the environment's script."""
    if shutil.which("gamut"):
        return "gamut"
    script = Path(sys.executable).parent / "gamut"
    try:
        return str(script.relative_to(Path.cwd()))
    except ValueError:
        return str(script)


def _fail_on_problems(
    project: Project, report: JudgeReport, left_out: list[str], left_out_ok: bool
) -> None:
    """Exit 1 when checks failed or submissions were left out (unless ``left_out_ok``), saying
    what to do."""
    from gamut.cli.judge import replay_gaps, replay_miss

    unfinished = sum(s.unfinished for s in report.judges.values())
    others = [f for f in report.failures if not replay_miss(project, f)]
    # one line per replay judge and submission it lacks, then each other failure
    lines = [*replay_gaps(project, report.failures), *(str(f) for f in others)]
    retry = (
        "Run `gamut run` again to retry"
        if others or unfinished
        else "A replay judge cannot retry them"
    )
    if report.failures or unfinished:
        note_left_out(left_out)
        err_console.print()
        fail(
            f"{len(report.failures)} check(s) failed, {unfinished} not attempted; "
            f"their submissions are incomplete. {retry}:",
            lines,
            limit=MAX_LISTED,
            width=300 if others else None,
        )
    if left_out and left_out_ok:
        warn_left_out(left_out, "the rest is published")
    elif left_out:
        fail_left_out(left_out, "the rest is published")
