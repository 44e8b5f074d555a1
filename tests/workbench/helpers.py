"""Shared set-up of the workbench tests: a config whose workbench is in a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from workbench.cli import main


def write_config(root: Path, workbench: str = "wb") -> Path:
    cfg = root / "gamut.toml"
    cfg.write_text(
        '[benchmark]\nquestions = "q.jsonl"\nrubrics = "rubrics"\n\n'
        f'[workbench]\ndir = "{workbench}"\n',
        encoding="utf-8",
    )
    return cfg


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
