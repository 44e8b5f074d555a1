"""Fixtures for tests of the fake provider servers."""

from tests.fakes.llm_server import fake_llm

__all__ = ["fake_llm"]
