"""The shipped demo config (``demo/gamut.toml``) moved to another folder, for tests.

Its inputs (questions, rubrics, submissions, replay files) keep pointing at ``demo/``; its outputs
(verdict cache, results, site) land beside the new file instead of at the repository root.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "demo"
DEMO_CONFIG = DEMO / "gamut.toml"

_INPUT = re.compile(r'^(questions|rubrics|submissions|replay|audit) = "([^"/][^"]*)"', re.M)


def demo_config_text(text: str | None = None) -> str:
    """The demo config's text with absolute input paths and outputs relative to its new folder."""
    text = DEMO_CONFIG.read_text(encoding="utf-8") if text is None else text
    text = _INPUT.sub(lambda m: f'{m[1]} = "{(DEMO / m[2]).as_posix()}"', text)
    out = text.replace('= "../', '= "')
    assert '"../' not in out
    return out


def write_demo_config(root: Path, text: str | None = None) -> Path:
    """Write the moved demo config as ``root/gamut.toml`` and return its path."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "gamut.toml"
    path.write_text(demo_config_text(text), encoding="utf-8")
    return path
