"""``gamut site build | serve``: the static leaderboard site."""

from __future__ import annotations

from pathlib import Path

import click

from gamut.cli._common import (
    config_option,
    get_project,
    handle_errors,
    out_console,
    serve_until_interrupted,
)
from scoring.errors import GamutError


@click.group()
def site() -> None:
    """Build or preview the static leaderboard site from the score tables."""


@site.command()
@config_option
@click.option("--force", is_flag=True, help="Build even when nothing it reads changed since.")
@handle_errors
def build(config_path: Path | None, force: bool) -> None:
    """Generate every page from <results>/ and build the site into [site] out.

    Run `gamut score` (or `gamut run`) first. The build starts from scratch each time, and is
    skipped when nothing it reads changed since the last build into the same folder.
    """
    from gamut import pipeline
    from generator import downloads_size

    skipped: list[Path] = []
    out = pipeline.build_site(get_project(config_path), force=force, unchanged=skipped.append)
    built = "site unchanged" if skipped else "site built"
    out_console.print(f"{built}: {out / 'index.html'}")
    n_files, n_bytes = downloads_size(out)
    out_console.print(f"downloads: {n_files} files, {n_bytes / 1e6:.1f} MB")


@site.command()
@config_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0 picks a free one).",
)
@click.option("--no-build", is_flag=True, help="Serve the site as last built, without rebuilding.")
@handle_errors
def serve(config_path: Path | None, host: str, port: int, no_build: bool) -> None:
    """Build the site (unless --no-build) and serve it until Ctrl-C."""
    from gamut import pipeline
    from generator.serve import make_server

    project = get_project(config_path)
    out = project.site_out.resolve() if no_build else pipeline.build_site(project)
    if not (out / "index.html").is_file():
        raise GamutError(f"no built site in {out}; run `gamut site build` first")
    try:
        server = make_server(out, host, port)
    except OSError as exc:
        raise GamutError(f"cannot listen on {host}:{port} ({exc}); pick another --port") from None
    bound_host, bound_port = server.server_address[:2]
    out_console.print(f"serving {out} at http://{bound_host!s}:{bound_port}/ (Ctrl-C to stop)")
    serve_until_interrupted(server, stopped="stopped")
