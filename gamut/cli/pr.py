"""``gamut pr``: the steps of the pull-request workflows that are not plain gamut commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from gamut.cli._common import config_option, emit, err_console, get_project, handle_errors
from gamut.pr import annotate, pack_artifact, unpack_artifact
from scoring.errors import GamutError
from scoring.submissions.formats import is_submission_id

_REPORT = click.Path(path_type=Path, dir_okay=False, exists=True)


def _report(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise GamutError(f"cannot read validator report {path}: {exc}") from None
    if not isinstance(data, dict):
        raise GamutError(
            f"{path} is not a validator report (gamut submission validate --format json)"
        )
    return data


@click.group()
def pr() -> None:
    """Pull-request workflow steps: annotations and the hand-off artifact."""


@pr.command("annotate")
@click.argument("report", type=_REPORT)
@handle_errors
def annotate_cmd(report: Path) -> None:
    """Turn a validator JSON REPORT into GitHub annotations and a step summary.

    The annotations (workflow commands) go to stdout, where the runner reads them; the summary
    is appended to $GITHUB_STEP_SUMMARY, or printed after them when that is not set.
    """
    from gamut.workflow_commands import append_step_summary

    result = annotate(_report(report))
    emit("".join(f"{c}\n" for c in result.commands))
    if not append_step_summary(result.summary):
        emit(result.summary)


@pr.command("pack")
@config_option
@click.argument("report", type=_REPORT)
@click.option("--pr", "pr_number", type=int, required=True, help="Pull request number.")
@click.option("--head-sha", required=True, help="Full sha of the pull request's head commit.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder to write the artifact into.",
)
@handle_errors
def pack(config_path: Path, report: Path, pr_number: int, head_sha: str, out: Path) -> None:
    """Write the artifact for the scoring workflow from a passing validator REPORT."""
    info = pack_artifact(get_project(config_path), _report(report), pr_number, head_sha, out)
    err_console.print(
        f"packed {info.submission_id} for PR #{info.pr_number} into {out}", markup=False
    )


@pr.command("unpack")
@config_option
@click.argument("artifact", type=click.Path(path_type=Path, file_okay=False, exists=True))
@handle_errors
def unpack(config_path: Path, artifact: Path) -> None:
    """Check an ARTIFACT folder as data and copy its submission into the submissions folder.

    Prints pr_number=, head_sha= and submission_id= lines, ready for $GITHUB_OUTPUT.
    """
    info = unpack_artifact(get_project(config_path), artifact)
    emit(info.as_outputs())


@pr.command("take")
@config_option
@click.option("--pr", "pr_number", type=int, required=True, help="Pull request number.")
@click.option(
    "--head-sha", required=True, help="Full sha of the pull request's head commit (fetched)."
)
@click.option("--base", "base", required=True, help="The base branch's commit or ref.")
@click.option(
    "--report",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the warnings here as a validator JSON report (for `gamut comment --warnings`).",
)
@handle_errors
def take(config_path: Path, pr_number: int, head_sha: str, base: str, report: Path | None) -> None:
    """Copy the pull request's submission from its head commit, read as data with git.

    The changes BASE...HEAD must all lie in one submission's folder, which must hold only
    regular files with the expected names and sizes; that folder replaces any folder of the
    same id. A change to an existing submission is a warning. Nothing from the commit is
    checked out or run. Prints pr_number=, head_sha=, submission_id= and submission_path=
    lines, ready for $GITHUB_OUTPUT.
    """
    from gamut.pr_source import take_from_commit
    from scoring.storage import atomic_write_text
    from scoring.submissions import ValidationReport

    info, warnings = take_from_commit(get_project(config_path), pr_number, head_sha, base)
    for w in warnings:
        err_console.print(f"warning: {w}")
    if report is not None:
        data = ValidationReport(problems=warnings, submissions=[info.submission_id]).to_dict()
        atomic_write_text(report, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    emit(info.as_outputs())


@pr.command("approved")
@click.option("--sha", "head_sha", required=True, help="Full sha of the pull request's head.")
@click.option("--repo", default=None, metavar="OWNER/NAME", help="[default: $GITHUB_REPOSITORY]")
@handle_errors
def approved(head_sha: str, repo: str | None) -> None:
    """Say whether a maintainer approved scoring HEAD_SHA, asking GitHub's API.

    Approved means: a run of score-submission.yml for exactly that head commit has an approval
    in state "approved" for the submission-scoring Environment. Prints approved=true, run_id=
    and approver= lines, or approved=false; exits 1 when GitHub cannot be asked. Reads
    $GH_TOKEN (or $GITHUB_TOKEN) and $GITHUB_API_URL.
    """
    from gamut.github import GitHub, approved_score_run

    found = approved_score_run(GitHub.from_env(repo), head_sha)
    emit(found.as_outputs() if found is not None else "approved=false\n")


@pr.command("claimed")
@config_option
@click.option("--pr", "pr_number", type=int, required=True, help="Pull request number.")
@click.option(
    "--submission",
    "submission_id",
    default=None,
    help="The submission id the pull request adds [default: the one folder its files change, "
    "from GitHub's API].",
)
@click.option("--repo", default=None, metavar="OWNER/NAME", help="[default: $GITHUB_REPOSITORY]")
@click.option(
    "--comment-out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="When another pull request holds the id, write the refusal comment (markdown) here.",
)
@handle_errors
def claimed(
    config_path: Path | None,
    pr_number: int,
    submission_id: str | None,
    repo: str | None,
    comment_out: Path | None,
) -> None:
    """Say whether `main` or another open pull request already holds the submission id.

    An id on `main` is never replaced by a pull request, and an open id belongs to the pull
    request whose approved scoring of that folder alone came first. Prints submission_id= and
    claimed_by= (`main`, the holder's number, or empty) lines. Reads $GH_TOKEN (or
    $GITHUB_TOKEN) and $GITHUB_API_URL.
    """
    from gamut.github import GitHub, claimed_by, submission_ids
    from gamut.pr_source import on_base, submissions_in_repo
    from scoring.storage import atomic_write_text

    project = get_project(config_path)
    gh = GitHub.from_env(repo)
    folder = submissions_in_repo(project)
    if submission_id is None:
        ids = sorted(submission_ids(gh, pr_number, folder))
        if len(ids) != 1:
            raise GamutError(
                f"PR #{pr_number} changes {len(ids)} submission folders ({', '.join(ids)}); "
                "a pull request adds exactly one submission"
            )
        submission_id = ids[0]
    if not is_submission_id(submission_id):
        raise GamutError(f"{submission_id!r} is not a valid submission id")
    holder: int | str | None = "main" if on_base(project, submission_id) else None
    if holder is None:
        holder = claimed_by(gh, pr_number, submission_id, folder)
    if holder is not None:
        held = "main" if holder == "main" else f"open PR #{holder}"
        err_console.print(
            f"submission id {submission_id!r} is already held by {held}", markup=False
        )
        if comment_out is not None:
            from gamut.comment import render_refusal

            atomic_write_text(comment_out, render_refusal(submission_id, holder, folder))
    emit(f"submission_id={submission_id}\nclaimed_by={'' if holder is None else holder}\n")
