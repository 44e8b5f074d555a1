"""The version has one home (``scoring.__version__``); the package metadata reads it there."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

import scoring

ROOT = Path(__file__).resolve().parents[1]


def test_the_installed_version_is_the_engines_and_pyproject_does_not_restate_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "scoring.__version__"
    assert version("gamut-leaderboard") == scoring.__version__
