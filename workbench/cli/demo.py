"""``gamut-workbench demo``: write the demo data or a paper-scale synthetic project."""

from __future__ import annotations

from pathlib import Path

import click

from gamut.cli._common import config_option, get_project, handle_errors, out_console
from workbench.synthetic.demo import DEMO_SEED, generate_demo
from workbench.synthetic.paper import write_paper_scale


@click.group()
def demo() -> None:
    """Synthetic models, responses and judges (everything they write is synthetic)."""


@demo.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder to write the project into (never commit it).",
)
@click.option(
    "--questions",
    "n_questions",
    type=click.IntRange(1),
    default=1813,
    show_default=True,
    help="Number of questions.",
)
@click.option(
    "--models",
    "n_models",
    type=click.IntRange(1),
    default=14,
    show_default=True,
    help="Number of synthetic submissions (each in both settings).",
)
@click.option(
    "--judges",
    "n_judges",
    type=click.IntRange(1, 3),
    default=3,
    show_default=True,
    help="Number of replay judges; the first is primary.",
)
@click.option(
    "--checks",
    "checks_per_question",
    type=click.IntRange(5),
    default=35,
    show_default=True,
    help="Mean compiled checks per question.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@handle_errors
def paper(out_dir: Path, **sizes: int) -> None:
    """Write a paper-scale synthetic project (config, questions, rubrics, submissions, verdicts)."""
    out_console.print(f"wrote {write_paper_scale(out_dir, **sizes)}")


@demo.command("write")
@config_option
@click.option("--seed", type=int, default=DEMO_SEED, show_default=True, help="Random seed.")
@handle_errors
def write(config_path: Path, seed: int) -> None:
    """Write the demo's synthetic submissions and judge replay files (byte-identical on rerun)."""
    written = generate_demo(get_project(config_path), seed=seed)
    out_console.print(f"wrote {len(written)} files (synthetic models, responses and judges)")
