"""Shared pieces of the command line: the --config option, the one error path, the one output path.

:func:`handle_errors` turns a :class:`~scoring.errors.GamutError` into one message on stderr and
exit 1. Output goes through :data:`out_console` (stdout) or :data:`err_console` (stderr), rich
markup off (user data is printed as it is, never parsed), rich imported on first print.
"""

from __future__ import annotations

import contextvars
import functools
import os
import socketserver
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import click

from gamut.config import CONFIG_ENV, DEFAULT_CONFIG
from scoring.errors import DiskFullError, GamutError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from gamut.config import GamutConfig
    from gamut.project import Project
    from scoring.submissions import ValidationReport

P = ParamSpec("P")
R = TypeVar("R")

#: Validation problems listed one by one when submissions are left out, before the rest are only
#: counted; each is cut at :data:`PROBLEM_CHARS` characters.
MAX_PROBLEMS = 20
PROBLEM_CHARS = 300
#: Where the whole list of a rejected submission's problems is.
VALIDATE_HINT = "`gamut submission validate` lists every problem with its fix"


class LazyConsole:
    """A rich console (markup, highlighting and emoji off) created on first use."""

    def __init__(self, *, stderr: bool) -> None:
        self.stderr = stderr

    @functools.cached_property
    def console(self) -> Console:
        """The rich console itself (for progress displays that take one)."""
        from rich.console import Console

        return Console(
            stderr=self.stderr, highlight=False, soft_wrap=True, markup=False, emoji=False
        )

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """``rich.console.Console.print``."""
        self.console.print(*objects, **kwargs)


err_console = LazyConsole(stderr=True)
out_console = LazyConsole(stderr=False)

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help=f"Project config file [default: ${CONFIG_ENV}, else {DEFAULT_CONFIG}].",
)


def config_flag(config_path: Path | None) -> str:
    """The `` --config PATH`` (shell-quoted) a printed hint needs to run on this command's
    config; empty for the default or ``$GAMUT_CONFIG``, which the hint's command reads too."""
    if config_path is None:
        return ""
    import shlex

    return f" --config {shlex.quote(str(config_path))}"


def styled(text: str, style: str) -> Text:
    """``text`` in a rich style, never interpreted as markup."""
    from rich.text import Text

    return Text(text, style=style)


#: The command's config holds its rubrics back: an unexpected error is then printed without its
#: message (see :func:`handle_errors`).
_HELD: contextvars.ContextVar[bool] = contextvars.ContextVar("held", default=False)


def get_config(config_path: Path | None) -> GamutConfig:
    """Load the config named by --config, ``$GAMUT_CONFIG`` or ``gamut.toml``."""
    from gamut.config import load_config

    cfg = load_config(config_path)
    _HELD.set(not cfg.benchmark.rubrics_public)
    return cfg


def get_project(config_path: Path | None) -> Project:
    """The project of the config named by --config, ``$GAMUT_CONFIG`` or ``gamut.toml``."""
    from gamut.project import Project

    return Project(get_config(config_path))


def emit(text: str) -> None:
    """Write machine-read output (JSON, GitHub workflow commands, step outputs) to stdout as is."""
    click.echo(text, nl=False)


def fail(
    message: str,
    lines: Sequence[str] = (),
    *,
    code: int = 1,
    limit: int | None = None,
    width: int | None = None,
    label: str | None = "error",
) -> NoReturn:
    """The one way a command ends with a non-zero status: ``label: message`` on stderr, then
    ``lines`` indented (at most ``limit``, the rest counted; each cut at ``width``)."""
    if label is None:
        err_console.print(message)
    else:
        err_console.print(styled(f"{label}: ", "bold red"), message, sep="")
    shown = lines if limit is None else lines[:limit]
    for line in shown:
        cut = line if width is None or len(line) <= width else line[:width] + " ..."
        err_console.print("  " + cut)
    if len(shown) < len(lines):
        err_console.print(f"  ... and {len(lines) - len(shown)} more")
    sys.exit(code)


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(repr(s) for s in ids)


def list_left_out(validation: ValidationReport, skipped: str) -> None:
    """Print the submissions that validation leaves out (and what becomes of them:
    ``skipped``), with the validator's ``file:line: problem (fix)`` errors."""
    left_out = sorted(validation.rejected)
    if not left_out:
        return
    err_console.print(
        f"left out {len(left_out)} submission(s) that fail validation ({skipped}): "
        + _ids(left_out)
    )
    errors = validation.errors
    for p in errors[:MAX_PROBLEMS]:
        err_console.print(f"  {str(p)[:PROBLEM_CHARS]}")
    if len(errors) > MAX_PROBLEMS:
        err_console.print(f"  ... and {len(errors) - MAX_PROBLEMS} more")
    err_console.print(f"  ({VALIDATE_HINT})")


def note_left_out(left_out: Sequence[str]) -> None:
    """Remind, before a command fails for another reason, which submissions were left out."""
    if left_out:
        err_console.print(
            f"\n{len(left_out)} submission(s) were left out for failing validation: "
            + _ids(left_out)
        )


def left_out_message(left_out: Sequence[str], rest: str) -> str:
    """One line naming the submissions that validation left out, and what became of the rest."""
    return f"{len(left_out)} submission(s) left out for failing validation ({rest}): " + _ids(
        left_out
    )


def warn_left_out(left_out: Sequence[str], rest: str) -> None:
    """Say, without failing, which submissions were left out (on GitHub Actions, annotated)."""
    message = left_out_message(left_out, rest)
    err_console.print(f"warning: {message} ({VALIDATE_HINT})", markup=False)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from gamut.workflow_commands import annotation

        emit(annotation("warning", f"{message} ({VALIDATE_HINT})", title="GAMUT publish") + "\n")


def fail_left_out(left_out: Sequence[str], rest: str) -> NoReturn:
    """Exit 1 naming the submissions left out, and what was done with the ``rest``."""
    fail(left_out_message(left_out, rest), [VALIDATE_HINT])


def serve_until_interrupted(server: socketserver.BaseServer, stopped: str = "") -> None:
    """Serve ``server`` until Ctrl-C, then close its socket (saying ``stopped``, if given)."""
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        if stopped:
            err_console.print(stopped)
    finally:
        server.server_close()


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn library errors, and a full disk wherever it was raised, into one clean message on
    stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        held = _HELD.set(False)  # this command's config says (get_config), not an earlier one's
        try:
            return fn(*args, **kwargs)
        except GamutError as exc:
            if not (exc.quotes_input and _HELD.get()):
                fail(str(exc))
            _unshown(exc)
        except click.ClickException:  # a usage error: click words it, from the command line
            raise
        except Exception as exc:
            full = DiskFullError.find(exc)
            if full is not None:
                fail(str(full))
            if not _HELD.get():
                raise
            _unshown(exc)
        finally:
            _HELD.reset(held)

    return wrapper


def _unshown(exc: BaseException) -> NoReturn:
    """Fail, rubrics held, on an error whose message may quote a held check: its class and
    traceback, never its text."""
    fail(
        f"internal error: {type(exc).__name__} (its message is not shown: rubrics are "
        "held); please report it with the lines below",
        [ln for f in traceback.format_tb(exc.__traceback__) for ln in f.splitlines()],
    )
