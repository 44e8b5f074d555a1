"""The one registry of providers: a provider's name (a judge's ``provider``, ``gamut generate
--provider``) -> the module and classes serving it, and what it takes. Judging, batches and
generation all find a provider here, and nothing else names one."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType

from scoring.errors import GamutError
from scoring.judge.backends import Backend
from scoring.judge.generation import BackendSettings, Generator

#: The entry point group a third-party package registers its judge backends under.
ENTRY_POINT_GROUP = "gamut.backends"


@dataclass(frozen=True, slots=True)
class ProviderEntry:
    """Where a provider lives."""

    module: str
    cls: str
    pip_name: str = ""
    needs_key: bool | None = True
    generator: str = ""
    key_env: str = ""
    sampling: bool = True
    chat_completions: bool = False
    replays: bool = False


_BUILTIN: dict[str, ProviderEntry] = {
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


class ProviderRegistry:
    """Provider names in registration order: the built-in ones, then those registered in code,
    then the entry points of installed packages (read once, on first use; a name registered
    otherwise wins)."""

    def __init__(self, builtin: dict[str, ProviderEntry]) -> None:
        self._entries = dict(builtin)
        self._from_entry_points: dict[str, ProviderEntry] | None = None

    def register(self, provider: str, entry: ProviderEntry) -> None:
        """Add or replace ``provider``."""
        self._entries[provider] = entry

    @contextmanager
    def registered(self, provider: str, entry: ProviderEntry) -> Iterator[None]:
        """``provider`` registered as ``entry`` inside the block, as it was after it."""
        before = self._entries.get(provider)
        self._entries[provider] = entry
        try:
            yield
        finally:
            if before is None:
                del self._entries[provider]
            else:
                self._entries[provider] = before

    def _all(self) -> dict[str, ProviderEntry]:
        if self._from_entry_points is None:
            found: dict[str, ProviderEntry] = {}
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                module, _, cls = ep.value.partition(":")
                found[ep.name] = ProviderEntry(module.strip(), cls.strip(), needs_key=None)
            self._from_entry_points = found
        return {**self._from_entry_points, **self._entries}

    def names(self) -> tuple[str, ...]:
        """Every provider name a judge may use."""
        return tuple(self._all())

    def knows(self, provider: str) -> bool:
        """Whether ``provider`` is registered (entry points are read only for a name that is
        neither built in nor registered in code: a command's start-up scans no packages)."""
        return provider in self._entries or provider in self._all()

    def entry(self, provider: str) -> ProviderEntry:
        """Where ``provider`` lives."""
        if provider in self._entries:
            return self._entries[provider]
        known = self._all()
        if provider not in known:
            raise GamutError(f"unknown judge provider {provider!r} (one of {', '.join(known)})")
        return known[provider]

    def backend_class(self, provider: str) -> type[Backend]:
        """The backend class of ``provider``, importing its module (and SDK) only now."""
        entry = self.entry(provider)
        out = getattr(self._module(provider, entry, "judge backend"), entry.cls, None)
        if not (isinstance(out, type) and issubclass(out, Backend)):
            raise GamutError(
                f"judge provider {provider!r}: {entry.module}:{entry.cls} is not a Backend "
                "subclass; fix the registration (or the package's "
                f"{ENTRY_POINT_GROUP!r} entry point)"
            )
        return out

    @staticmethod
    def _module(provider: str, entry: ProviderEntry, what: str) -> ModuleType:
        try:
            return importlib.import_module(entry.module)
        except ImportError as exc:
            hint = f"; install it with: pip install {entry.pip_name}" if entry.pip_name else ""
            raise GamutError(
                f"the {provider} {what} cannot load ({exc.name} missing){hint}"
            ) from None

    def generators(self) -> tuple[str, ...]:
        """The providers that serve generation (``gamut generate --provider``)."""
        return tuple(name for name, e in self._entries.items() if e.generator)

    def generator_class(self, provider: str) -> type[Generator]:
        """The generation class of ``provider``, importing its module (and SDK) only now."""
        entry = self.entry(provider)
        if not entry.generator:
            known = ", ".join(self.generators())
            raise GamutError(f"provider {provider!r} serves no generation (one of {known})")
        out: type[Generator] = getattr(self._module(provider, entry, "generator"), entry.generator)
        return out

    def generator(self, provider: str, settings: BackendSettings) -> Generator:
        """A generator of ``provider`` for ``settings`` (see :meth:`generator_class`)."""
        return self.generator_class(provider)(settings)

    def needs_key(self, provider: str) -> bool:
        """Whether judges of ``provider`` need an API key (unknown names: True)."""
        if not self.knows(provider):
            return True
        entry = self.entry(provider)
        if entry.needs_key is None:
            return self.backend_class(provider).needs_key
        return entry.needs_key


#: The registry every judge and ``gamut`` command uses.
REGISTRY = ProviderRegistry(_BUILTIN)
