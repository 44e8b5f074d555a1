"""The ``gamut`` command line: a thin layer over the library."""

from __future__ import annotations

import click

from scoring import __version__
from scoring.cli import rubric as _rubric
from scoring.cli import schema as _schema


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gamut")
def main() -> None:
    """GAMUT leaderboard: compile rubrics, judge responses, score them and build the site."""


main.add_command(_rubric.rubric)
main.add_command(_schema.schema)
