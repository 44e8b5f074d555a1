"""Fixtures of the judge tests: the fake provider and a recognisable fake API key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.batch_server import FakeBatchServer
from tests.fakes.llm_server import fake_llm
from tests.judge.project import LEDGER_KEY, LEDGER_KEY_ENV

FAKE_KEY = "sk-GAMUTTESTKEY-9f8e7d6c5b4a"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GAMUT_TEST_KEY", FAKE_KEY)
    monkeypatch.setenv(LEDGER_KEY_ENV, LEDGER_KEY)
    yield


@pytest.fixture
def batch_srv() -> Iterator[FakeBatchServer]:
    """The fake batch provider, answering with :func:`tests.judge.test_batch.hashed_verdict`."""
    from tests.judge.test_batch import hashed_verdict

    with FakeBatchServer(responder=hashed_verdict) as s:
        yield s


@pytest.fixture
def srv(batch_srv: FakeBatchServer) -> FakeBatchServer:
    """The same fake batch provider, under its shorter name."""
    return batch_srv


__all__ = ["FAKE_KEY", "fake_llm"]
