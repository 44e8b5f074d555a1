"""The ``gamut-workbench`` command line (``build ...``, ``demo ...``), shaped as ``gamut``'s: each
group imported only when it runs, with ``gamut``'s options and error handling."""

from __future__ import annotations

import click

from gamut.cli import LazyGroup
from scoring import __version__

#: name -> (module, attribute, one-line help shown by ``gamut-workbench --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "build": (
        "workbench.cli.build",
        "build",
        "Build, revise and release the benchmark's questions and rubrics.",
    ),
    "demo": (
        "workbench.cli.demo",
        "demo",
        "Regenerate the demo's synthetic data or write a paper-scale synthetic project.",
    ),
}


class WorkbenchGroup(LazyGroup):
    """``gamut-workbench``'s lazily imported groups."""

    table = COMMANDS


@click.group(cls=WorkbenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gamut-workbench")
def main() -> None:
    """The GAMUT benchmark workbench: make the questions, rubrics and synthetic data that the
    leaderboard (`gamut`) reads.

    The config file is --config, else $GAMUT_CONFIG, else ./gamut.toml.
    """


def run() -> None:
    """The ``gamut-workbench`` program (``python -m workbench`` too): :func:`main`."""
    main()
