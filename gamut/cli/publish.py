"""``gamut publish hf``: results and verdicts to a Hugging Face dataset, as one commit."""

from __future__ import annotations

from pathlib import Path

import click

from gamut.cli._common import config_option, get_project, handle_errors, out_console


@click.group()
def publish() -> None:
    """Publish the leaderboard and verdict files."""


@publish.command("hf")
@config_option
@click.option(
    "--repo",
    "repo_id",
    default=None,
    help="Dataset ORG/NAME on the Hub (default: publish.hf_dataset in the config).",
)
@click.option(
    "--token-env",
    default="HF_TOKEN",
    show_default=True,
    help="Environment variable holding a token with write access.",
)
@click.option("--private", is_flag=True, help="Create the dataset as private if it is new.")
@click.option("--dry-run", is_flag=True, help="List the files that would be uploaded; upload none.")
@handle_errors
def hf(
    config_path: Path, repo_id: str | None, token_env: str, private: bool, dry_run: bool
) -> None:
    """Upload the site's downloads folder (score tables, questions, responses, verdicts, the
    Every Eval Ever export, the Croissant description, the dataset card) in one commit.

    The endpoint is GAMUT_HF_ENDPOINT or HF_ENDPOINT, else https://huggingface.co. Rubric and
    check text are never uploaded unless benchmark.rubrics_public is true.
    """
    from gamut.publish import publish_files, publish_results  # pandas, pyarrow: lazily
    from scoring.errors import GamutError

    project = get_project(config_path)
    repo = repo_id or project.cfg.publish.hf_dataset
    if not repo:
        raise GamutError("no dataset named: pass --repo ORG/NAME or set publish.hf_dataset")
    if dry_run:
        for f in publish_files(project, repo):
            out_console.print(f"{f.path_in_repo}	{len(f.data)} bytes")
        return
    url = publish_results(project, repo, token_env=token_env, private=private)
    out_console.print(f"published to {repo}: {url}")
