"""Fixtures of the ``gamut generate`` tests: a tiny project and a fake provider server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer
from tests.model_runner.project import Project, answer_responder, make_project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A 10-question project in a temporary folder."""
    return make_project(tmp_path / "proj")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """A fake OpenAI/Anthropic server answering questions in free text."""
    with FakeLLMServer(responder=answer_responder, retry_after=0.01) as srv:
        yield srv


@pytest.fixture
def env() -> dict[str, str]:
    """An environment holding the test API key."""
    return {"GAMUT_TEST_KEY": "sk-test-not-a-real-key"}
