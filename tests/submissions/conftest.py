"""Fixtures of the submission tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.submissions.helpers import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A fresh project under a temporary folder."""
    return Project.fresh(tmp_path)
