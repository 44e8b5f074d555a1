"""``gamut judge`` and ``gamut export verdicts``: the LLM judge's command line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gamut.cli._common import config_option, err_console, fail, handle_errors, out_console
from gamut.config import load_config
from gamut.project import Project
from scoring.questions import Setting

if TYPE_CHECKING:
    from scoring.judge.outcome import Failure

#: Failures listed one by one before the rest are only counted.
MAX_LISTED = 50
#: A listed failure is cut here (a provider error message may quote the request).
MAX_CHARS = 300


@click.command()
@click.option(
    "--judge",
    "judges",
    multiple=True,
    metavar="NAME",
    help="Judge to run (repeatable; default: every judge in the config).",
)
@click.option(
    "--submission",
    "submissions",
    multiple=True,
    metavar="ID",
    help="Submission to judge (repeatable; default: every submission).",
)
@click.option(
    "--setting",
    "settings",
    multiple=True,
    type=click.Choice([s.value for s in Setting]),
    help="Setting to judge (repeatable; default: both).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Count the calls that would be made and estimate their tokens; call nothing.",
)
@click.option(
    "--deadline",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Stop starting calls after this long; the rest wait for the next run.",
)
@config_option
@handle_errors
def judge(
    judges: tuple[str, ...],
    submissions: tuple[str, ...],
    settings: tuple[str, ...],
    dry_run: bool,
    deadline: float | None,
    config_path: Path | None,
) -> None:
    """Judge every (response, check) that has no verdict yet, then write the verdict table.

    Verdicts are committed to the working index as they arrive and shipped to the ledger, so an
    interrupted run loses only its calls in flight. One run at a time per ledger. Exits 1 when
    any check ended without a verdict (they are listed, and retried by the next run); the
    verdicts obtained are kept.
    """
    from gamut import pipeline

    names = list(judges) or None
    project = Project(load_config(config_path, require_keys=False if dry_run else (names or True)))
    report = pipeline.judge(
        project,
        names,
        list(submissions) or None,
        [Setting(s) for s in settings] or None,
        dry_run=dry_run,
        deadline_s=deadline,
    )
    for note in report.notes:
        err_console.print(f"note: {note}", markup=False)
    for line in report.summary_lines():
        out_console.print(line)
    if dry_run:
        total = sum(s.planned for s in report.judges.values())
        out_console.print(
            f"dry run: {total} call(s) would be made; nothing was called", markup=False
        )
        return
    path = pipeline.write_verdicts(project)
    out_console.print(f"verdict table: {path}")
    failures = report.failures
    unfinished = sum(s.unfinished for s in report.judges.values())
    if failures or unfinished:
        listed = [f for f in failures if not _replay_miss(project, f)]
        fail(
            f"{len(failures)} check(s) failed, {unfinished} not attempted; "
            "run `gamut judge` again to retry them:",
            # One line per replay judge and submission it lacks; then each other failure (ids,
            # kind and the provider's message; never the reply).
            [*replay_gaps(project, failures), *(str(f) for f in listed)],
            limit=MAX_LISTED,
            width=None if not listed else MAX_CHARS,
        )


def _replay_miss(project: Project, f: Failure) -> bool:
    judge = project.cfg.judges.get(f.judge)
    return judge is not None and judge.provider == "replay" and f.kind == "rejected"


def replay_gaps(project: Project, failures: list[Failure]) -> list[str]:
    """One line per (replay judge, submission) whose replay file lacks verdicts, not one per check.

    A replay judge only knows the submissions its replay file was made for (the demo's synthetic
    models); a new submission needs a real judge.
    """
    missed = Counter((f.judge, f.submission_id) for f in failures if _replay_miss(project, f))
    if not missed:
        return []
    total = Counter(
        (name, u.submission_id)
        for u in project.units([sid for _, sid in missed]).units
        if u.response.strip()  # an empty response is scored without the judge
        for name in {n for n, _ in missed}
        for _ in u.checks
    )
    lines = []
    for (name, sid), n in sorted(missed.items()):
        judge = project.cfg.judges[name]
        if n >= total[(name, sid)]:
            what = f"knows none of the {n:,} checks of submission {sid!r}"
        else:
            what = f"has no stored verdict for {n:,} checks of submission {sid!r}"
        lines.append(
            f"replay judge {name!r} ({judge.replay}) {what}: a replay judge only repeats the "
            "verdicts stored for the submissions it was made for; judge a new submission with "
            "a real judge (the live gamut.toml) or regenerate the replay file"
        )
    return lines


@click.group()
def export() -> None:
    """Export engine data for analysis."""


@export.command("verdicts")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Output file; the format follows the extension (.parquet, .csv or .jsonl).",
)
@config_option
@handle_errors
def export_verdicts_cmd(out: Path, config_path: Path | None) -> None:
    """Write every verdict of the current submissions and rubrics to a file.

    Columns: submission_id, setting, judge, judge_id, question_id, check_id, kind, tier,
    secondary, verdict; plus rationale and check_text only when rubrics are public.
    """
    from gamut import pipeline
    from scoring.judge import export_verdicts

    project = Project(load_config(config_path))
    n = export_verdicts(pipeline.verdict_table(project, judge_ids=True), out)
    err_console.print(f"wrote {n} verdict(s) to {out}")


__all__ = ["export", "judge"]
