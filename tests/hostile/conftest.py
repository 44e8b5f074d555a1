"""Fixtures of the hostile-input tests: the fake provider, a fake API key, a submissions project."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import fake_llm
from tests.judge.project import LEDGER_KEY, LEDGER_KEY_ENV
from tests.submissions.helpers import CONFIG, FIXTURES, Project


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GAMUT_TEST_KEY", "sk-GAMUTHOSTILE-1234")
    monkeypatch.setenv(LEDGER_KEY_ENV, LEDGER_KEY)  # held-rubric projects key their ledger
    yield


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A fresh submissions project (the submission tests' fixture questions)."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(FIXTURES / "questions.jsonl", root / "questions.jsonl")
    (root / "gamut.toml").write_text(CONFIG, encoding="utf-8")
    (root / "submissions").mkdir()
    return Project(root)


__all__ = ["fake_llm", "project"]
