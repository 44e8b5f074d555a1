"""Every command and option of `gamut` and `gamut-workbench` has help text (ARCHITECTURE.md,
"The command line"), and each program lists its own commands only."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from gamut.cli import main
from workbench.cli import main as workbench_main


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


@pytest.mark.parametrize("program", [main, workbench_main], ids=["gamut", "gamut-workbench"])
def test_every_command_and_option_has_help(program: click.Group) -> None:
    missing = []
    walked = _walk(program)
    assert len(walked) > 10  # the lazy groups were opened
    for path, cmd in walked:
        if not (cmd.help or "").strip():
            missing.append(" ".join(path) or "(the program)")
        for p in cmd.params:
            if isinstance(p, click.Option) and not (p.help or "").strip():
                missing.append(f"{' '.join(path)} {p.opts[0]}")
        result = CliRunner().invoke(program, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
    assert not missing, f"commands/options without help text: {missing}"


def _listed(program: click.Group) -> set[str]:
    """The command names ``--help`` prints under "Commands:"."""
    out = CliRunner().invoke(program, ["--help"]).output.split("Commands:\n", 1)[1]
    return {
        line.split()[0] for line in out.splitlines() if line.startswith("  ") and line[2] != " "
    }


def test_the_workbench_build_is_a_gamut_command_found_by_its_entry_point() -> None:
    # SPEC section 12 names `gamut build ...`; the synthetic-data tools stay the workbench's own
    ours, theirs = _listed(main), _listed(workbench_main)
    assert "run" in ours and "build" in ours and "demo" not in ours
    assert theirs == {"build", "demo"}
    result = CliRunner().invoke(main, ["build", "status", "--help"])
    assert result.exit_code == 0 and "Usage: main build status" in result.output
