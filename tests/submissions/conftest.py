"""Fixtures of the submission tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.submissions.helpers import CONFIG, FIXTURES, Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A fresh project under a temporary folder."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(FIXTURES / "questions.jsonl", root / "questions.jsonl")
    (root / "gamut.toml").write_text(CONFIG, encoding="utf-8")
    (root / "submissions").mkdir()
    return Project(root)
