"""The model APIs a submission can be generated from: the providers of the engine's one registry
(:mod:`scoring.judge.providers`) that serve generation, each from its provider module, which
also serves the judge's direct calls and batches (one SDK handling, one error mapping).
"""

from __future__ import annotations

from typing import Literal

from scoring.judge.generation import (
    BackendSettings,
    CallFailed,
    FatalCallError,
    Reply,
    Request,
)
from scoring.judge.generation import Generator as Backend
from scoring.judge.providers import REGISTRY

Provider = Literal["openai", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")
DEFAULT_KEY_ENV: dict[Provider, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}


def make_backend(provider: Provider, settings: BackendSettings) -> Backend:
    """The generator the registry names for ``provider``, its SDK imported on first use."""
    return REGISTRY.generator_class(provider)(settings)


__all__ = [
    "DEFAULT_KEY_ENV",
    "PROVIDERS",
    "Backend",
    "BackendSettings",
    "CallFailed",
    "FatalCallError",
    "Provider",
    "Reply",
    "Request",
    "make_backend",
]
