"""``gamut submission new | validate | check``: submitters' tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from gamut.cli._common import (
    config_flag,
    config_option,
    emit,
    err_console,
    fail,
    get_project,
    handle_errors,
    out_console,
)
from scoring.errors import summarise
from scoring.submissions import new_submission
from scoring.submissions.formats import SUBMISSION_ID_RULE, is_submission_id
from scoring.submissions.layout import display_path

if TYPE_CHECKING:
    from gamut.project import Project
    from scoring.errors import PlaceholderError


def _check_id(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not is_submission_id(value):
        raise click.BadParameter(f"{value!r} is not a valid submission id: {SUBMISSION_ID_RULE}")
    return value


@click.group()
def submission() -> None:
    """Submitters' tools: scaffold, validate and check a submission before a pull request."""


@submission.command()
@click.argument("submission_id", metavar="ID", callback=_check_id)
@config_option
@handle_errors
def new(submission_id: str, config_path: Path) -> None:
    """Create <submissions>/ID/ with a commented submission.yaml to fill in.

    ID: 3 to 64 characters of lowercase letters, digits, '-', '_' and '.', starting with a letter
    or digit; it names your model's folder and never changes.
    """
    project = get_project(config_path)
    cfg = project.cfg
    subs_root = project.submissions_root
    folder = display_path(project.submissions.folder(submission_id).path, Path.cwd())
    c = config_flag(config_path)
    path = new_submission(subs_root, submission_id, folder, c)
    out_console.print(f"created {display_path(path, Path.cwd())}")
    rehearsal = cfg.site.demo_notice and any(
        j.unrecorded == "offline-match" for j in cfg.judges.values()
    )
    out_console.print(
        "\nNext steps:\n"
        f"  1. Fill in every TODO in {folder}/submission.yaml.\n"
        f"  2. Write the responses: gamut generate --submission {submission_id} --model MODEL{c}\n"
        "     (or run your own model over the questions of each setting, written by\n"
        f"     gamut questions export --setting multimodal --out .gamut/multimodal.jsonl{c}\n"
        f"     and --setting text_only, into {folder}/multimodal.jsonl and, optionally,\n"
        "     text_only.jsonl).\n"
        f"  3. Check everything: gamut submission validate {folder}{c}\n"
        f"     and see what the scoring will do: gamut submission check {submission_id}{c}\n"
        + (
            f"  4. This is the demo: rehearse the rest offline with gamut run{c}\n"
            "     (its judges replay stored verdicts; the offline matcher judges what they do\n"
            "     not hold), then open the site it prints and find your model on it."
            if rehearsal
            else f"  4. Commit only the files in {folder}/ and open a pull request."
        )
    )
    if not cfg.benchmark.published:
        out_console.print(
            "\nSubmissions are not open yet: the question set is not published. Until it is, "
            "fill in and validate the metadata, and rehearse every step offline with "
            "--config demo/gamut.toml."
        )


@submission.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--changed-from",
    metavar="REF",
    help="Git ref of the base branch: the changes REF...HEAD (plus untracked and uncommitted "
    "files) must touch only one submission's folder, which is then validated.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: one 'file:line: problem (fix)' per line; json: the whole report.",
)
@config_option
@handle_errors
def validate(
    paths: tuple[Path, ...], changed_from: str | None, fmt: str, config_path: Path
) -> None:
    """Check submission folders (or files in them) against the public questions.

    With no PATH and no --changed-from, every submission is checked. Every problem is reported at
    once. Exits 1 on any error; warnings (likely gaming or accidents) do not fail.
    """
    from gamut import pipeline
    from scoring.errors import PlaceholderError

    project = get_project(config_path)
    try:
        report = pipeline.validate(
            project,
            list(paths) or None,
            changed_from,
            shown_from=None if fmt == "json" else Path.cwd(),
        )
    except PlaceholderError as exc:
        if fmt == "json" or changed_from:
            raise
        _metadata_only(project, list(paths) or None, exc)
    if fmt == "json":
        emit(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        for line in summarise([*report.errors, *report.warnings]):
            out_console.print(line)
    if not report.ok:
        fail(report.summary())
    if fmt != "json":
        err_console.print(report.summary())


@submission.command()
@click.argument("submission_id", metavar="ID", callback=_check_id)
@config_option
@handle_errors
def check(submission_id: str, config_path: Path | None) -> None:
    """See what the scoring will do with submission ID, before the pull request.

    Validates it, prints the response statistics the warnings look at and sizes the judging job
    (checks, calls, estimated tokens and cost); nothing is called. Exits 1 on a validation error.
    """
    from gamut.submission_check import check_submission
    from scoring.errors import PlaceholderError

    project = get_project(config_path)
    folder = project.submissions_root / submission_id
    if not folder.is_dir():
        c = config_flag(config_path)
        root = project.submissions_root
        known = sorted(e.name for e in root.iterdir() if e.is_dir()) if root.is_dir() else []
        fail(
            f"no submission {submission_id!r}: {display_path(folder, Path.cwd())} is not a folder",
            [
                f"create it with: gamut submission new {submission_id}{c}",
                *([f"or check one of: {', '.join(known)}"] if known else []),
            ],
        )
    try:
        result = check_submission(project, submission_id)
    except PlaceholderError as exc:
        _metadata_only(project, [folder], exc)
    for line in result.lines():
        out_console.print(line)
    if not result.ok:
        fail(f"{submission_id} is not valid: fix the errors above, then check it again")


def _metadata_only(project: Project, paths: list[Path] | None, why: PlaceholderError) -> NoReturn:
    """Check what needs no question set (the metadata), print it, then stop with the reason
    the responses were not checked and what the submitter can do now."""
    from gamut.submission_check import check_metadata_only

    ids, problems = check_metadata_only(project, paths)
    for p in problems:
        out_console.print(str(p))
    errors = sum(p.severity == "error" for p in problems)
    fail(
        f"checked the metadata only ({', '.join(ids) or 'no submission'}: {errors} error(s)); "
        f"the responses cannot be checked yet: {why}"
    )
