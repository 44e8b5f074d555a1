"""Every command and option of `gamut` has help text (ARCHITECTURE.md, "The command line")."""

from __future__ import annotations

import click
from click.testing import CliRunner

from gamut.cli import main


def _walk(
    cmd: click.Command, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    out = [(path, cmd)]
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            assert sub is not None, name
            out.extend(_walk(sub, (*path, name)))
    return out


def test_every_command_and_option_has_help() -> None:
    missing = []
    for path, cmd in _walk(main):
        if not (cmd.help or "").strip():
            missing.append(" ".join(path) or "gamut")
        for p in cmd.params:
            if isinstance(p, click.Option) and not (p.help or "").strip():
                missing.append(f"{' '.join(path)} {p.opts[0]}")
        result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
    assert not missing, f"commands/options without help text: {missing}"
