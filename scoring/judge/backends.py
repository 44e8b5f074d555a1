"""Judge backends: one abstract async method each, registered by name and imported lazily.

A backend turns one :class:`JudgeRequest` (plus any re-ask turns) into one :class:`Completion`,
or raises :class:`BackendError`. Retrying 429/5xx/timeouts is the SDK's job (``max_retries``);
validating the reply and re-asking is the runner's.
"""

from __future__ import annotations

import importlib
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from scoring.compiler import CheckKind
from scoring.errors import GamutError
from scoring.questions import Setting

if TYPE_CHECKING:
    # annotations only: reading a config checks provider names here, and must not import numpy
    import numpy as np
    import numpy.typing as npt

    from scoring.judge.batch.api import BatchAPI
    from scoring.judge.pairs import PairPlan
    from scoring.judge.spec import JudgeConfig


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One (response, check) to judge: the ids, the texts, and the rendered prompt parts."""

    submission_id: str
    setting: Setting
    question_id: str
    check_id: str
    kind: CheckKind
    question: str
    response: str
    check: str
    system: str
    shared: str
    check_prompt: str


@dataclass(frozen=True, slots=True)
class Turn:
    """A re-ask: the unusable reply the judge gave, and the follow-up message sent back."""

    reply: str
    followup: str


class Completion(NamedTuple):
    """A provider's reply text, its token counts, and the model snapshot the reply names (a
    tuple: an import makes one per result line, and a frozen dataclass costs a microsecond more).

    ``model`` is the reply's ``model`` field (e.g. ``gpt-4o-2024-08-06`` for a request that asked
    for ``gpt-4o``), recorded with every verdict; "" when the provider names none.
    """

    text: str
    tokens_in: int = 0
    tokens_cached: int = 0
    tokens_out: int = 0
    model: str = ""


@dataclass(frozen=True)
class BulkReply:
    """Verdicts for many pairs at once, from a backend that needs no calls (replay).

    Attributes:
        codes: each pair's verdict code (:attr:`scoring.verdicts.Verdict.code`).
        found: whether the pair had a stored verdict (the others are failures).
        rationales: each pair's rationale, or None.
        model: the model snapshot to record.
    """

    codes: npt.NDArray[np.int8]
    found: npt.NDArray[np.bool_]
    rationales: npt.NDArray[np.object_] | None = None
    model: str = ""


#: Largest reply body read from a provider, in bytes; a longer reply is a failure that says so.
MAX_REPLY_BYTES = 256 * 1024


class BackendError(Exception):
    """A call that produced no usable reply.

    Attributes:
        kind: ``"api_error"`` (transient, SDK retries exhausted), ``"rejected"`` (a 4xx or a
            missing replay row: not retried within the run), or ``"bad_body"`` (the provider's
            HTTP body was not valid JSON; the runner re-asks, as for a bad reply).
        raw: the raw text received, when there was one.
        error_class: the SDK exception's class name, when there was one.
        status: the HTTP status of the provider's answer, when there was one.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        raw: str = "",
        *,
        error_class: str = "",
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.raw = raw
        self.error_class = error_class
        self.status = status

    def brief(self) -> str:
        """The error's class and HTTP status only: never the provider's message, which may
        quote the prompt (and so a held check)."""
        what = self.error_class or {"bad_body": "unusable reply body"}.get(self.kind, self.kind)
        return what + (f" (HTTP {self.status})" if self.status is not None else "")


def token_count(usage: object, field: str, raw: str = "") -> int:
    """A token count from a reply's usage block; a missing or null count is 0.

    Raises:
        BackendError: ``bad_body`` when the usage block is not a mapping or the count is not a
            non-negative integer (a string, a float, NaN, a boolean): the reply is unusable.
    """
    if usage is None:
        return 0
    if isinstance(usage, dict):
        value = usage.get(field)
    else:
        value = getattr(usage, field, None)
        if value is None and not hasattr(usage, "__dict__"):
            raise BackendError(
                "bad_body", f"reply usage is a {type(usage).__name__}, not an object", raw
            )
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BackendError(
            "bad_body",
            f"reply usage {field} is {type(value).__name__} {str(value)[:40]!r}, not a token count",
            raw,
        )
    return value


async def read_capped(
    chunks: AsyncIterator[bytes], close: Callable[[], Awaitable[None]], judge: str
) -> str:
    """A reply body, read up to :data:`MAX_REPLY_BYTES`; a longer one is refused unread.

    Raises:
        BackendError: ``too_large`` (the provider ignored ``max_tokens``; nothing more is read
            or stored).
    """
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in chunks:
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise BackendError(
                    "too_large",
                    f"judge {judge!r}: the reply body exceeded {MAX_REPLY_BYTES} bytes (the "
                    "provider ignored max_tokens?); reading stopped there and nothing of it "
                    "was stored",
                )
            parts.append(chunk)
    finally:
        await close()
    return b"".join(parts).decode("utf-8", "replace")


#: Timeout of a batch API call (uploads and result downloads are large), at the least.
BATCH_MIN_TIMEOUT_S = 600.0


def client_options(
    judge: JudgeConfig, api_key: str | None, *, batch: bool = False
) -> dict[str, Any]:
    """The keyword arguments of a provider SDK's client for ``judge``: key (a placeholder for
    local servers that need none), endpoint, timeout and the SDK's own retries."""
    timeout = max(judge.timeout_s, BATCH_MIN_TIMEOUT_S) if batch else judge.timeout_s
    return {
        "api_key": api_key or "not-needed",
        "base_url": judge.base_url,
        "timeout": timeout,
        "max_retries": judge.max_retries,
    }


def decode_body(raw: str, redact: Callable[[str], str]) -> Any:
    """A provider's reply body as JSON; a body that is not JSON, or is nested too deeply to read,
    is a ``bad_body`` (the runner re-asks, as for an unusable reply).

    Raises:
        BackendError: kind ``bad_body``, with the key redacted from message and raw text.
    """
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BackendError(
            "bad_body", redact(f"reply body is not JSON: {exc}"), redact(raw)
        ) from None
    except RecursionError:
        raise BackendError(
            "bad_body", "reply body is nested too deeply to read", redact(raw[:1000])
        ) from None


class reading_reply:
    """Read a decoded reply body inside this block: anything malformed met there (a missing
    field, a wrong type, a count that is not a count, nesting too deep) becomes a ``bad_body``,
    ``reply <what> (...)``, with the key redacted. (A class, not a generator: it is entered once
    per reply, hundreds of thousands of times in an import.)

    Raises:
        BackendError: kind ``bad_body``.
    """

    __slots__ = ("raw", "redact", "what")

    def __init__(self, raw: str, redact: Callable[[str], str], what: str) -> None:
        self.raw, self.redact, self.what = raw, redact, what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if exc is None:
            return
        raw, redact = self.raw, self.redact
        if isinstance(exc, RecursionError):
            raise BackendError(
                "bad_body", "reply body is nested too deeply to read", redact(raw[:1000])
            ) from None
        if isinstance(exc, (KeyError, IndexError, TypeError, AttributeError, ValueError)):
            raise BackendError(
                "bad_body", redact(f"reply {self.what} ({type(exc).__name__}: {exc})"), redact(raw)
            ) from None
        if isinstance(exc, BackendError):
            raise BackendError("bad_body", redact(str(exc)), redact(raw)) from None


def usage_of(reply: Any) -> dict[str, Any] | None:
    """A reply's ``usage`` block (None when absent).

    Raises:
        TypeError: ``usage`` is there but not an object.
    """
    u = reply.get("usage")
    if u is not None and not isinstance(u, dict):
        raise TypeError(f"usage is a {type(u).__name__}")
    return u


def model_of(reply: Any) -> str:
    """The model snapshot a reply names (at most 200 characters; empty when it names none)."""
    model = reply.get("model")
    return model[:200] if isinstance(model, str) else ""


class Backend(ABC):
    """A way to get a verdict reply for one request."""

    #: True when the backend's answer depends on the ids, not only on the texts (replay).
    keyed_by_ids: bool = False
    #: False for backends that never call out (their verdicts are committed in batches).
    calls_out: bool = True

    def __init__(self, name: str, judge: JudgeConfig, api_key: str | None, root: Path) -> None:
        self.name = name
        self.judge = judge
        self._api_key = api_key
        self.root = root

    @abstractmethod
    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """Ask the judge once; ``turns`` are earlier unusable replies and their follow-ups."""

    def bulk(self, plan: PairPlan, pairs: npt.NDArray[np.int64]) -> BulkReply | None:
        """Verdicts for the ``pairs`` of ``plan`` in one go, or None (the default) when this
        backend answers one request at a time through :meth:`complete`."""
        return None

    def decoding(self) -> dict[str, object]:
        """Decoding settings that can change a reply (part of the judge's identity)."""
        return {
            "temperature": self.judge.temperature,
            "max_tokens": self.judge.max_tokens,
            "structured_output": self.judge.structured_output,
        }

    def identity_extra(self) -> str:
        """Anything beyond the config that changes this backend's answers (e.g. a file digest)."""
        return ""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    def batch_body(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> dict[str, Any]:
        """The request body a batch line carries: the same one :meth:`complete` sends.

        Raises:
            GamutError: this backend has no batch mode.
        """
        raise GamutError(f"judge {self.name!r}: provider {self.judge.provider!r} has no batch mode")

    def batch_api(self, held: bool = False) -> BatchAPI:
        """The provider's batch API for this judge (SDK client created now); with ``held``
        rubrics its errors keep their class and HTTP status only.

        Raises:
            GamutError: this backend has no batch mode.
        """
        raise GamutError(f"judge {self.name!r}: provider {self.judge.provider!r} has no batch mode")

    def redact(self, text: str) -> str:
        """``text`` with the API key (if any) blanked out."""
        key = self._api_key
        return text.replace(key, "***") if key and len(key) >= 4 else text


_REGISTRY: dict[str, tuple[str, str, str]] = {
    "openai": ("scoring.judge.openai_backend", "OpenAIBackend", "openai"),
    "anthropic": ("scoring.judge.anthropic_backend", "AnthropicBackend", "anthropic"),
    "replay": ("scoring.judge.replay_backend", "ReplayBackend", ""),
}


#: Providers whose judges need no API key (they call nothing, or only local servers).
_KEYLESS: set[str] = {"replay"}


def register_backend(
    provider: str, module: str, cls: str, pip_name: str = "", *, needs_key: bool = True
) -> None:
    """Register a backend class by provider name (imported only when a judge uses it).

    Args:
        provider: the name a judge's ``provider`` gives.
        module: the module holding the class, imported on first use.
        cls: the class name (a :class:`Backend` subclass).
        pip_name: what to install when the module's imports are missing.
        needs_key: its judges need ``api_key_env`` (unless they name a ``base_url``).
    """
    _REGISTRY[provider] = (module, cls, pip_name)
    if needs_key:
        _KEYLESS.discard(provider)
    else:
        _KEYLESS.add(provider)


def needs_key(provider: str) -> bool:
    """Whether judges of ``provider`` need an API key."""
    return provider not in _KEYLESS


def registered_providers() -> tuple[str, ...]:
    """Every provider name a judge may use, in registration order."""
    return tuple(_REGISTRY)


def backend_class(provider: str) -> type[Backend]:
    """The backend class for a provider name, importing its SDK only now.

    Raises:
        GamutError: unknown provider, or its SDK is not installed (with the install command).
    """
    if provider not in _REGISTRY:
        raise GamutError(f"unknown judge provider {provider!r} (one of {', '.join(_REGISTRY)})")
    module, cls, pip_name = _REGISTRY[provider]
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        hint = f"; install it with: pip install {pip_name}" if pip_name else ""
        raise GamutError(
            f"the {provider} judge backend cannot load ({exc.name} missing){hint}"
        ) from None
    out: type[Backend] = getattr(mod, cls)
    return out


__all__ = [
    "MAX_REPLY_BYTES",
    "Backend",
    "BackendError",
    "BulkReply",
    "Completion",
    "JudgeRequest",
    "Turn",
    "backend_class",
    "client_options",
    "decode_body",
    "model_of",
    "needs_key",
    "read_capped",
    "reading_reply",
    "register_backend",
    "registered_providers",
    "token_count",
    "usage_of",
]
