"""``gamut comment``: the sticky pull-request comment for one submission, as markdown."""

from __future__ import annotations

from pathlib import Path

import click

from gamut.cli._common import (
    config_flag,
    config_option,
    err_console,
    get_project,
    handle_errors,
)
from scoring.storage import atomic_write_text


@click.command()
@config_option
@click.option("--submission", "submission_id", required=True, help="Submission id to report on.")
@click.option(
    "--warnings",
    "warnings_files",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    multiple=True,
    help="Validator report (`gamut submission validate --format json`, or `gamut pr take "
    "--report`) whose warnings to list (repeatable); without one, the comment says that the "
    "warnings are not listed (never that there are none).",
)
@click.option(
    "--judging",
    "judging_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Judging progress (`gamut judge --status-out`): while checks are in flight the "
    "comment says 'judging: N of M checks done'.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="Markdown file to write.",
)
@handle_errors
def comment(
    config_path: Path,
    submission_id: str,
    warnings_files: tuple[Path, ...],
    judging_file: Path | None,
    out: Path,
) -> None:
    """Render the PR comment (scores, ranks, per-domain table, warnings) from the score tables
    that `gamut score` wrote (run it first).

    The comment starts with the hidden marker <!-- gamut-score --> so a workflow can update one
    comment in place. It holds no rubric or check text.
    """
    from gamut.comment import (  # pandas: when used
        failure_causes,
        read_judging,
        read_warnings,
        render_comment,
    )

    project = get_project(config_path)
    warnings = [w for f in warnings_files for w in read_warnings(f)] if warnings_files else None
    judging = read_judging(judging_file, submission_id) if judging_file else None
    causes = {}
    if project.ledger_path.is_dir():  # `gamut judge` records failures there (ids and kinds)
        identities = [j.identity for j in project.judges(need_keys=False)]
        causes = failure_causes(project.ledger.failures(identities), submission_id)
    atomic_write_text(
        out,
        render_comment(
            project,
            submission_id,
            warnings,
            causes=causes,
            judging=judging,
            config_flag=config_flag(config_path),
        ),
    )
    err_console.print(f"wrote {out}")
