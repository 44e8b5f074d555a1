"""The one list of providers: a provider's name (a judge's ``provider``, ``gamut generate
--provider``) -> the module serving it, and what it takes. Judging, batches and generation all
find a provider here, and nothing else names one.

A provider module is imported only when used (reading a config imports no SDK). Code may add
entries to :data:`PROVIDERS`; an installed package adds one through the entry point group
:data:`ENTRY_POINT_GROUP` (``name = "package.module:BackendClass"``).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType

from scoring.errors import GamutError
from scoring.judge.backends import Backend
from scoring.judge.generation import Generator

#: The entry point group a third-party package registers its judge backends under.
ENTRY_POINT_GROUP = "gamut.backends"


@dataclass(frozen=True, slots=True)
class ProviderEntry:
    """Where a provider lives (its module and Backend subclass), and what it takes."""

    module: str
    cls: str
    #: what to install when the module's imports are missing
    pip_name: str = ""
    #: judges need ``api_key_env`` unless they name a ``base_url`` (None: the class says)
    needs_key: bool | None = True
    #: its Generator class for ``gamut generate`` ("" when it serves no generation)
    generator: str = ""
    #: the environment variable its key is usually in (generation's default)
    key_env: str = ""
    #: its API takes sampling parameters (``temperature``, ``seed``)
    sampling: bool = True
    #: OpenAI chat completions: ``max_tokens_param``, ``dialect`` and OpenAI batch files
    chat_completions: bool = False
    #: answers from a stored verdict file: never calls out, no batch mode
    replays: bool = False


#: Provider name -> where it lives; an installed package's entry points are added when a name
#: not listed is first looked up (a name listed here wins).
PROVIDERS: dict[str, ProviderEntry] = {
    "openai": ProviderEntry(
        "scoring.judge.openai_backend",
        "OpenAIBackend",
        "openai",
        generator="OpenAIGenerator",
        key_env="OPENAI_API_KEY",
        chat_completions=True,
    ),
    "anthropic": ProviderEntry(
        "scoring.judge.anthropic_backend",
        "AnthropicBackend",
        "anthropic",
        generator="AnthropicGenerator",
        key_env="ANTHROPIC_API_KEY",
        sampling=False,  # Messages API 2026-10-21 (the SDK 2.x) refuses them
    ),
    "replay": ProviderEntry(
        "scoring.judge.replay_backend", "ReplayBackend", "", needs_key=False, replays=True
    ),
}


@functools.cache
def _read_entry_points() -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        module, _, cls = ep.value.partition(":")
        PROVIDERS.setdefault(ep.name, ProviderEntry(module.strip(), cls.strip(), needs_key=None))


def names() -> tuple[str, ...]:
    """Every provider name a judge may use."""
    _read_entry_points()
    return tuple(PROVIDERS)


def entry(provider: str) -> ProviderEntry:
    """Where ``provider`` lives; GamutError (the known names listed) for an unknown one."""
    if provider not in PROVIDERS:
        _read_entry_points()
    if provider not in PROVIDERS:
        raise GamutError(f"unknown judge provider {provider!r} (one of {', '.join(PROVIDERS)})")
    return PROVIDERS[provider]


def _module(provider: str, what: str) -> ModuleType:
    e = entry(provider)
    try:
        return importlib.import_module(e.module)
    except ImportError as exc:
        hint = f"; install it with: pip install {e.pip_name}" if e.pip_name else ""
        raise GamutError(f"the {provider} {what} cannot load ({exc.name} missing){hint}") from None


def backend_class(provider: str) -> type[Backend]:
    """The backend class of ``provider``, importing its module (and SDK) only now."""
    e = entry(provider)
    out = getattr(_module(provider, "judge backend"), e.cls, None)
    if not (isinstance(out, type) and issubclass(out, Backend)):
        raise GamutError(
            f"judge provider {provider!r}: {e.module}:{e.cls} is not a Backend subclass; fix "
            f"the registration (or the package's {ENTRY_POINT_GROUP!r} entry point)"
        )
    return out


def generators() -> tuple[str, ...]:
    """The providers that serve generation (``gamut generate --provider``)."""
    return tuple(name for name, e in PROVIDERS.items() if e.generator)


def generator_class(provider: str) -> type[Generator]:
    """The generation class of ``provider``, importing its module (and SDK) only now."""
    e = entry(provider)
    if not e.generator:
        known = ", ".join(generators())
        raise GamutError(f"provider {provider!r} serves no generation (one of {known})")
    out: type[Generator] = getattr(_module(provider, "generator"), e.generator)
    return out


def needs_key(provider: str) -> bool:
    """Whether judges of ``provider`` need an API key (unknown names: True)."""
    try:
        e = entry(provider)
    except GamutError:
        return True
    return backend_class(provider).needs_key if e.needs_key is None else e.needs_key
