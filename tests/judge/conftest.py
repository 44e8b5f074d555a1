"""Fixtures of the judge tests: the fake provider and a recognisable fake API key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import fake_llm
from tests.judge.project import LEDGER_KEY, LEDGER_KEY_ENV

FAKE_KEY = "sk-GAMUTTESTKEY-9f8e7d6c5b4a"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GAMUT_TEST_KEY", FAKE_KEY)
    monkeypatch.setenv(LEDGER_KEY_ENV, LEDGER_KEY)
    yield


__all__ = ["FAKE_KEY", "fake_llm"]
