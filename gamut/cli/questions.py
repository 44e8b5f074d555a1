"""``gamut questions pull | export``: the public question set a submitter runs a model on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gamut.cli._common import config_option, err_console, get_project, handle_errors, out_console
from scoring.jsonl import dumps_line
from scoring.questions import Question, Setting, load_questions
from scoring.storage import atomic_write_text


def export_record(q: Question, setting: Setting, questions_file: Path) -> dict[str, Any]:
    """One exported line: id, setting, question in the setting's form, image (an absolute path
    or URL; null in the text-only setting), domain. Nothing from the rubrics."""
    image: str | None = None
    if setting is Setting.MULTIMODAL and q.image:
        if q.image.startswith(("http://", "https://")):
            image = q.image
        else:
            image = (questions_file.parent / q.image).resolve().as_posix()
    return {
        "question_id": q.question_id,
        "setting": setting.value,
        "question": q.prompt(setting),
        "image": image,
        "domain": q.domain,
    }


@click.group()
def questions() -> None:
    """The public questions: pull them from the Hub once, export them for your own pipeline."""


@questions.command()
@config_option
@handle_errors
def pull(config_path: Path | None) -> None:
    """Download the public questions and images at the config's pinned revision, once.

    Into [store] questions (default .gamut/questions, ignored by git). An interrupted download
    continues where it stopped when run again; every file is checked against the Hub's hashes.
    """
    from gamut.public_set import pull as pull_set
    from gamut.public_set import question_set

    project = get_project(config_path)
    if question_set(project.question_source) is None:
        out_console.print(
            f"nothing to pull: {project.config_file} reads the local questions file "
            f"{project.questions_path}"
        )
        return
    result = pull_set(project.question_source)
    what = "already in the cache" if result.already else "downloaded and verified"
    out_console.print(
        f"{result.files} file(s), {result.bytes:,} bytes {what}: {result.questions}", markup=False
    )


@questions.command()
@click.option(
    "--setting",
    type=click.Choice([s.value for s in Setting]),
    required=True,
    help="multimodal: image + question that refers to the entity through the image; "
    "text_only: question that names the entity, no image.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="JSON Lines file to write: question_id, setting, question, image, domain.",
)
@config_option
@handle_errors
def export(setting: str, out: Path, config_path: Path | None) -> None:
    """Write the public question list of one setting as JSON Lines, one question a line.

    Write it outside your submission folder, e.g. under .gamut/ or /tmp (git ignores .gamut/).
    """
    path = get_project(config_path).questions_path
    qs = load_questions(path)
    s = Setting(setting)
    lines = [dumps_line(export_record(q, s, path)) for q in qs]
    atomic_write_text(out, "\n".join(lines) + "\n")
    err_console.print(f"wrote {len(lines)} {setting} questions to {out}")
