"""``gamut comment``: the sticky pull-request comment for one submission, as markdown."""

from __future__ import annotations

from pathlib import Path

import click

from gamut.cli._common import config_option, err_console, get_config, handle_errors
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
    "--report`) whose warnings to list (repeatable).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="Markdown file to write.",
)
@handle_errors
def comment(
    config_path: Path, submission_id: str, warnings_files: tuple[Path, ...], out: Path
) -> None:
    """Render the PR comment (scores, ranks, per-domain table, warnings) from the score tables.

    The comment starts with the hidden marker <!-- gamut-score --> so a workflow can update one
    comment in place. It holds no rubric or check text.
    """
    from gamut.comment import failure_causes, read_warnings, render_comment  # pandas: when used
    from gamut.project import Project

    project = Project(get_config(config_path))
    warnings = [w for f in warnings_files for w in read_warnings(f)]
    causes = {}
    if project.ledger_path.is_dir():  # `gamut judge` records failures there (ids and kinds)
        identities = [j.identity for j in project.judges(need_keys=False)]
        causes = failure_causes(project.ledger.failures(identities), submission_id)
    atomic_write_text(out, render_comment(project.cfg, submission_id, warnings, causes))
    err_console.print(f"wrote {out}")
