"""The ``gamut`` command line: a thin layer over the library. Each command's module is imported
only when it runs (``gamut --help`` imports none); :data:`COMMANDS` lists them. Installed packages
add commands through ``gamut.commands`` entry points (the workbench's ``gamut build``), so this
package never imports the workbench.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

import click

from scoring import __version__

#: name -> (module, attribute, one-line help shown by ``gamut --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("gamut.cli.run", "run", "The main job: judge, score and build the site."),
    "rubric": ("gamut.cli.rubric", "rubric", "Maintainers' rubric tools: lint, compile, show."),
    "schema": ("gamut.cli.schema", "schema", "Write the JSON Schemas of every file format."),
    "questions": ("gamut.cli.questions", "questions", "The public questions: pull, export."),
    "submission": (
        "gamut.cli.submission",
        "submission",
        "Submitters' tools: new, validate, check.",
    ),
    "generate": ("gamut.cli.generate", "generate_cmd", "Run a model API into a submission."),
    "judge": ("gamut.cli.judge", "judge", "Judge every (response, check) without a verdict."),
    "export": ("gamut.cli.judge", "export", "Export engine data for analysis."),
    "ledger": ("gamut.cli.ledger", "ledger", "The verdict ledger: pull, push, merge, verify."),
    "score": ("gamut.cli.score", "score", "Write the score tables from the verdict table."),
    "site": ("gamut.cli.site", "site", "Build or preview the static leaderboard site."),
    "comment": ("gamut.cli.comment", "comment", "Render the pull-request comment."),
    "pr": ("gamut.cli.pr", "pr", "Pull-request workflow steps: annotations and the artifact."),
    "publish": ("gamut.cli.publish", "publish", "Publish the results to a Hugging Face dataset."),
    "audit": ("gamut.cli.audit", "audit", "The human audit of the judge: draw responses to label."),
}


class LazyGroup(click.Group):
    """A group whose subcommands, listed in :attr:`table`, are imported when they are used."""

    #: name -> (module, attribute, one-line help); a subclass names its own table
    table: dict[str, tuple[str, str, str]] = COMMANDS

    #: the entry-point group whose commands join the table (installed packages' own commands)
    plugins: str = "gamut.commands"

    def _plugins(self) -> dict[str, tuple[str, str, str]]:
        """The entry points' commands (a scan of the installed packages: only when asked)."""
        found = entry_points(group=self.plugins)
        return {ep.name: (ep.module, ep.attr, "") for ep in found if ep.name not in self.table}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.table, *self._plugins()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = self.table.get(cmd_name) or self._plugins().get(cmd_name)
        if entry is None:
            return None
        module, attr, _ = entry
        cmd = getattr(importlib.import_module(module), attr)
        if not isinstance(cmd, click.Command):
            raise TypeError(f"{module}.{attr} is not a click command")
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name, (_, _, brief) in sorted({**self._plugins(), **self.table}.items()):
            command = None if brief else self.get_command(ctx, name)
            rows.append((name, brief or (command.get_short_help_str(80) if command else "")))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gamut")
def main() -> None:
    """GAMUT leaderboard: compile rubrics, judge responses, score them and build the site.

    The config file is --config, else $GAMUT_CONFIG, else ./gamut.toml.
    """


def run() -> None:
    """The ``gamut`` program (``python -m gamut`` too): :func:`main`."""
    main()
