"""Shared pieces of the command line: the --config option and error handling."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

import click
from rich.console import Console

from scoring.config import DEFAULT_CONFIG, GamutConfig, load_config
from scoring.errors import GamutError

P = ParamSpec("P")
R = TypeVar("R")

err_console = Console(stderr=True, highlight=False, soft_wrap=True)
out_console = Console(highlight=False, soft_wrap=True)

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=DEFAULT_CONFIG,
    show_default=True,
    help="Project config file.",
)


def get_config(config_path: Path) -> GamutConfig:
    """Load the config named by --config (errors become exit code 1 via :func:`handle_errors`)."""
    return load_config(config_path)


def handle_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn library errors into one clean message on stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except GamutError as exc:
            err_console.print("[bold red]error:[/] ", end="")
            err_console.print(str(exc), markup=False)
            sys.exit(1)

    return wrapper
