"""Fixtures of the hostile-input tests: the fake provider, a fake API key, a submissions project."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import fake_llm
from tests.judge.project import LEDGER_KEY, LEDGER_KEY_ENV
from tests.submissions.helpers import Project


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GAMUT_TEST_KEY", "sk-GAMUTHOSTILE-1234")
    monkeypatch.setenv(LEDGER_KEY_ENV, LEDGER_KEY)  # held-rubric projects key their ledger
    yield


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A fresh submissions project (the submission tests' fixture questions)."""
    return Project.fresh(tmp_path)


__all__ = ["fake_llm", "project"]
