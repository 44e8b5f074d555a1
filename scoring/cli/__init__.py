"""The ``gamut`` command line: a thin layer over the library."""

from __future__ import annotations

import click

from scoring import __version__
from scoring.cli import comment as _comment
from scoring.cli import generate as _generate
from scoring.cli import judge as _judge
from scoring.cli import pr as _pr
from scoring.cli import publish as _publish
from scoring.cli import questions as _questions
from scoring.cli import rubric as _rubric
from scoring.cli import run as _run
from scoring.cli import schema as _schema
from scoring.cli import score as _score
from scoring.cli import site as _site
from scoring.cli import submission as _submission


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gamut")
def main() -> None:
    """GAMUT leaderboard: compile rubrics, judge responses, score them and build the site."""


main.add_command(_rubric.rubric)
main.add_command(_schema.schema)
main.add_command(_questions.questions)
main.add_command(_submission.submission)
main.add_command(_generate.generate_cmd)
main.add_command(_publish.publish)
main.add_command(_comment.comment)
main.add_command(_pr.pr)
main.add_command(_score.score)
main.add_command(_run.run)
main.add_command(_site.site)
main.add_command(_judge.judge)
main.add_command(_judge.export)
