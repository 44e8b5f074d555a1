"""``gamut generate``: run a model API over the public questions into a submission."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from gamut.cli._common import (
    config_flag,
    config_option,
    err_console,
    fail,
    get_project,
    handle_errors,
    out_console,
)
from gamut.model_runner.plan import GenerateOptions, GenerateResult
from gamut.model_runner.progress import reporter_for
from gamut.model_runner.runner import generate
from scoring.errors import GamutError
from scoring.judge import providers
from scoring.layout import SubmissionFolder
from scoring.questions import Setting


def _tokens_line(result: GenerateResult) -> str:
    tin = sum(s.input_tokens for s in result.stats.values())
    tout = sum(s.output_tokens for s in result.stats.values())
    return f"tokens used: {tin:,} in, {tout:,} out ({tin + tout:,} total)"


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty() and not os.environ.get("CI")


def _ask_model_name(folder: SubmissionFolder) -> str | None:
    """On a terminal, ask for the leaderboard name while submission.yaml has none; else None."""
    if not _interactive():
        return None
    from gamut.model_runner.provenance import read_metadata

    data, _ = read_metadata(folder.metadata)
    current = (data or {}).get("model_name")
    if isinstance(current, str) and current.strip() and not current.upper().startswith("TODO"):
        return None
    answer: str = click.prompt(
        "Name to show on the leaderboard (model_name in submission.yaml; "
        "press Enter to fill it in later)",
        default="",
        show_default=False,
    )
    return answer.strip() or None


@click.command("generate")
@click.option(
    "--submission",
    "submission_id",
    required=True,
    help="Submission id: the folder under the config's submissions path.",
)
@click.option("--model", required=True, help="Model name as the API knows it.")
@click.option(
    "--provider",
    type=click.Choice(providers.generators()),
    default="openai",
    show_default=True,
    help="API protocol: OpenAI-compatible chat completions (OpenAI, Gemini, vLLM, "
    "Ollama) or Anthropic Messages.",
)
@click.option(
    "--base-url",
    default=None,
    help="API base URL, e.g. http://localhost:8000/v1 for a local server.",
)
@click.option(
    "--api-key-env",
    default=None,
    help="Environment variable holding the API key [default: OPENAI_API_KEY or ANTHROPIC_API_KEY].",
)
@click.option(
    "--setting",
    "settings",
    multiple=True,
    type=click.Choice([s.value for s in Setting]),
    help="Setting to generate; repeat for both [default: both].",
)
@click.option(
    "--system-prompt",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="File with a system prompt (its SHA-256 is recorded).",
)
@click.option(
    "--temperature",
    type=click.FloatRange(0, 2),
    default=None,
    help="Sampling temperature [default: 0 for chat completions; the Anthropic Messages API "
    "takes none].",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(1),
    default=2048,
    show_default=True,
    help="Largest number of tokens per answer.",
)
@click.option(
    "--max-tokens-param",
    type=click.Choice(["max_completion_tokens", "max_tokens"]),
    default=None,
    help="OpenAI-compatible providers: the request key that carries --max-tokens [default: "
    "max_completion_tokens, OpenAI's current name; max_tokens for a server that knows only "
    "the old one].",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1024),
    default=8,
    show_default=True,
    help="Calls in flight at once.",
)
@click.option(
    "--limit",
    type=click.IntRange(1),
    default=None,
    help="Only the first N questions (a quick trial).",
)
@click.option(
    "--deadline",
    "deadline_s",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Stop after this many seconds; unanswered questions are listed.",
)
@click.option(
    "--request-timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds before one HTTP call is retried.",
)
@click.option(
    "--max-retries",
    type=click.IntRange(0, 20),
    default=6,
    show_default=True,
    help="Retries per call (429 and 5xx honour Retry-After; exponential backoff).",
)
@config_option
@handle_errors
def generate_cmd(
    submission_id: str,
    settings: tuple[str, ...],
    system_prompt: Path | None,
    config_path: Path | None,
    **options: Any,
) -> None:
    """Run a model over the public questions into SUBMISSION's response files (resumable).

    Writes <submissions>/ID/multimodal.jsonl and/or text_only.jsonl, one answer a line as it
    arrives; a rerun answers only what is missing. Before any call, checks the API key variable,
    existing files and every image, listing all problems. Records how the answers were produced
    in submission.yaml. Exits 1 if any question is left unanswered (listed at the end).
    """
    project = get_project(config_path)
    folder = project.submissions.folder(submission_id)
    model_name = _ask_model_name(folder)
    prompt = None
    if system_prompt is not None:
        try:
            prompt = system_prompt.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GamutError(f"cannot read --system-prompt {system_prompt}: {exc}") from None
    every = (Setting.MULTIMODAL, Setting.TEXT_ONLY)
    chosen = GenerateOptions(
        submission_id=submission_id,
        settings=tuple(Setting(s) for s in settings) or every,
        system_prompt=prompt,
        model_name=model_name,
        **options,  # the other options are GenerateOptions' fields, by name
    )
    try:
        with reporter_for(err_console.console) as reporter:
            result = generate(project, chosen, reporter)
    except KeyboardInterrupt:
        fail(
            "interrupted: every answer received so far is saved; "
            "rerun the same command to continue",
            code=130,
        )
    for s in result.stats.values():
        out_console.print(
            f"{s.setting.value}: {s.done} answered now, {s.skipped} already, "
            f"{s.failed} failed -> {result.files[s.setting]}",
            markup=False,
        )
    out_console.print(_tokens_line(result) + f" in {result.elapsed_s:.1f}s")
    if result.failures:
        fail(
            f"{len(result.failures)} question(s) left unanswered "
            "(rerun the same command to retry only these):",
            [f"{f.setting.value} {f.question_id}: {f.reason}" for f in result.failures],
        )
    out_console.print(_next_step(folder, config_path))


def _todo_fields(data: object, at: str = "") -> list[str]:
    """The fields of parsed metadata whose value is still a TODO placeholder."""
    if isinstance(data, dict):
        return [f for k, v in data.items() for f in _todo_fields(v, f"{at}{k}.")]
    if isinstance(data, str) and data.strip().upper().startswith("TODO"):
        return [at.rstrip(".")]
    return []


def _next_step(folder: SubmissionFolder, config_path: Path | None) -> str:
    """What to do after a generate run: the TODO fields left, if any, then validation."""
    from gamut.model_runner.provenance import read_metadata
    from scoring.submissions.formats import METADATA_FILE
    from scoring.submissions.layout import display_path

    data, _ = read_metadata(folder.metadata)
    shown = display_path(folder.path, Path.cwd())
    validate = f"`gamut submission validate {shown}{config_flag(config_path)}`"
    todo = _todo_fields(data)
    if not todo:
        return f"next: run {validate}"
    name = (
        " (model_name is the name people know the model by, not the API's id)"
        if "model_name" in todo
        else ""
    )
    return (
        f"next: replace the TODO values of {', '.join(todo)} in {shown}/{METADATA_FILE}{name}, "
        f"then run {validate}"
    )
