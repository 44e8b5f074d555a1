"""The backend protocol: request and reply types, the error type, and the abstract backend."""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from scoring.compiler import CheckKind
from scoring.errors import BackendError, ErrorKind
from scoring.questions import Setting

if TYPE_CHECKING:
    # annotations only: reading a config checks provider names, and must not import numpy
    import numpy as np
    import numpy.typing as npt


class JudgeSettings(Protocol):
    """What a backend reads of its judge's definition (:class:`scoring.judge.spec.JudgeConfig`
    has all of it; the protocol keeps this module free of the config format)."""

    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def temperature(self) -> float: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def requests_per_minute(self) -> int | None: ...
    @property
    def tokens_per_minute(self) -> int | None: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def token_limit_key(self) -> str: ...
    @property
    def structured_output(self) -> bool: ...
    @property
    def timeout_s(self) -> float: ...
    @property
    def max_retries(self) -> int: ...
    @property
    def max_concurrency(self) -> int: ...


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
    """A provider's reply text, its token counts, and the model snapshot the reply names (a tuple:
    an import makes one per result line, and a frozen dataclass costs a microsecond more)."""

    text: str
    tokens_in: int = 0
    tokens_cached: int = 0
    tokens_out: int = 0
    model: str = ""


@dataclass(frozen=True)
class BulkReply:
    """Verdicts for many pairs at once, from a backend that needs no calls (replay)."""

    codes: npt.NDArray[np.int8]
    found: npt.NDArray[np.bool_]
    rationales: npt.NDArray[np.object_] | None = None
    model: str = ""


#: Largest reply body read from a provider, in bytes; a longer reply is a failure that says so.
MAX_REPLY_BYTES = 256 * 1024


_RETRYABLE = frozenset({408, 409, 429})
#: Error types and codes by which providers say the request itself is invalid (OpenAI, Anthropic,
#: vLLM, llama-cpp-python), or that no retry can pass (an exhausted quota).
_INVALID = frozenset(
    {
        "invalid_request_error",
        "BadRequestError",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "unsupported_parameter",
        "unsupported_value",
        "invalid_value",
        "model_not_found",
        "invalid_api_key",
        "context_length_exceeded",
        "insufficient_quota",
    }
)
#: What an error's text says when the request itself is invalid, whatever the HTTP status: a
#: pydantic validation error (llama-cpp-python answers an unknown request shape with a 500 whose
#: message is one: ``1 validation error for X`` ... ``[type=literal_error, ...``), TGI's 422
#: "Failed to deserialize", and servers' words for a parameter they do not take.
_VALIDATION = re.compile(
    r"\bvalidation errors? for \w+|\[type=[a-z_]+, input_value=|literal_error|extra_forbidden|"
    r"failed to deserialize|unsupported parameter|unrecognized request argument",
    re.IGNORECASE,
)


def says_invalid_request(body: str) -> bool:
    """Whether an error body (its raw text) says that the request itself is invalid, so that
    asking again with the same request cannot succeed (the test :func:`http_error` applies)."""
    text = body[:20_000]
    found = re.findall(r'"(?:type|code)"\s*:\s*"([A-Za-z0-9_.\-]{1,80})"', text)
    return bool(_INVALID & set(found)) or _VALIDATION.search(text) is not None


_WORD = re.compile(r"[A-Za-z0-9_.\-\[\]]{1,80}")


def _word(value: object) -> str:
    """An identifier from an error body (type, code, param), or "" when it is not one."""
    return value if isinstance(value, str) and _WORD.fullmatch(value) else ""


def retry_after_s(headers: Any) -> float | None:
    """The ``Retry-After`` of a reply's headers (``retry-after-ms``, or ``retry-after`` in
    seconds), or None when absent or not a number (an HTTP date counts as absent)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        try:
            seconds = float(value) / scale if value is not None else None
        except ValueError:
            seconds = None
        if seconds is not None and 0 <= seconds < 86_400:
            return seconds
    return None


def http_error(exc: Any, message: str) -> BackendError:
    """A provider's error answer (an SDK's ``APIStatusError``) as a :class:`BackendError`."""
    status = int(exc.status_code)
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    err = err if isinstance(err, dict) else {}
    etype, code, param = (_word(err.get(k)) for k in ("type", "code", "param"))
    text = err.get("message")
    text = text[:4000] if isinstance(text, str) else str(body)[:4000]
    quota = "insufficient_quota" in (etype, code)
    invalid = quota or bool(_INVALID & {etype, code}) or bool(_VALIDATION.search(text))
    transient = (status in _RETRYABLE or status >= 500) and not invalid
    if status == 429 and not quota:
        transient = True
    response = getattr(exc, "response", None)
    detail = " ".join(w for w in (etype, code, f"param={param}" if param else "") if w)
    return BackendError(
        ErrorKind.API_ERROR if transient else ErrorKind.REJECTED,
        message,
        error_class=type(exc).__name__,
        status=status,
        retry_after=retry_after_s(getattr(response, "headers", None)),
        detail=detail or ("validation_error" if _VALIDATION.search(text) else ""),
    )


def sdk_error(exc: Exception, redact: Callable[[str], str], sdk: Any) -> BackendError:
    """An SDK exception (``sdk``: the ``openai`` or ``anthropic`` module) as a :class:`BackendError`
    whose message starts with the class and HTTP status (the words a held failure keeps), key
    redacted."""
    cls = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    msg = redact(f"{cls}{'' if status is None else f' (HTTP {status})'}: {exc}")
    if isinstance(exc, json.JSONDecodeError | sdk.APIResponseValidationError):
        raw = redact(getattr(exc, "doc", "") or "")
        return BackendError(ErrorKind.BAD_BODY, msg, raw, error_class=cls, status=status)
    if isinstance(exc, sdk.APIStatusError):
        return http_error(exc, msg)
    return BackendError(ErrorKind.API_ERROR, msg, error_class=cls, status=status)


def estimated_tokens(request: JudgeRequest, turns: tuple[Turn, ...], max_tokens: int) -> int:
    """The tokens a provider counts against its per-minute limit for a request before it runs:
    about a token per 4 prompt characters, plus the output limit."""
    chars = len(request.system) + len(request.shared) + len(request.check_prompt)
    chars += sum(len(t.reply) + len(t.followup) for t in turns)
    return chars // 4 + max_tokens


def token_count(usage: object, field: str, raw: str = "") -> int:
    """A token count from a reply's usage block; a missing or null count is 0."""
    if usage is None:
        return 0
    if isinstance(usage, dict):
        value = usage.get(field)
    else:
        value = getattr(usage, field, None)
        if value is None and not hasattr(usage, "__dict__"):
            raise BackendError(
                ErrorKind.BAD_BODY, f"reply usage is a {type(usage).__name__}, not an object", raw
            )
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BackendError(
            ErrorKind.BAD_BODY,
            f"reply usage {field} is {type(value).__name__} {str(value)[:40]!r}, not a token count",
            raw,
        )
    return value


async def read_capped(
    chunks: AsyncIterator[bytes], close: Callable[[], Awaitable[None]], judge: str
) -> str:
    """A reply body, read up to :data:`MAX_REPLY_BYTES`; a longer one is refused unread."""
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in chunks:
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise BackendError(
                    ErrorKind.TOO_LARGE,
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
    judge: JudgeSettings, api_key: str | None, *, batch: bool = False
) -> dict[str, Any]:
    """A provider SDK client's keyword arguments for ``judge``; the SDK's own retries only for batch
    calls (the pacer retries direct calls)."""
    timeout = max(judge.timeout_s, BATCH_MIN_TIMEOUT_S) if batch else judge.timeout_s
    return {
        "api_key": api_key or "not-needed",
        "base_url": judge.base_url,
        "timeout": timeout,
        "max_retries": judge.max_retries if batch else 0,
    }


def decode_body(raw: str, redact: Callable[[str], str]) -> Any:
    """A provider's reply body as JSON; a body that is not JSON, or is nested too deeply to read, is
    a ``bad_body`` (the runner re-asks, as for an unusable reply)."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BackendError(
            ErrorKind.BAD_BODY, redact(f"reply body is not JSON: {exc}"), redact(raw)
        ) from None
    except RecursionError:
        raise BackendError(
            ErrorKind.BAD_BODY, "reply body is nested too deeply to read", redact(raw[:1000])
        ) from None


class reading_reply:
    """Inside this block, anything malformed in a decoded reply body becomes a ``bad_body``, key
    redacted (a class, not a generator: it is entered once per reply)."""

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
                ErrorKind.BAD_BODY, "reply body is nested too deeply to read", redact(raw[:1000])
            ) from None
        if isinstance(exc, (KeyError, IndexError, TypeError, AttributeError, ValueError)):
            raise BackendError(
                ErrorKind.BAD_BODY,
                redact(f"reply {self.what} ({type(exc).__name__}: {exc})"),
                redact(raw),
            ) from None
        if isinstance(exc, BackendError):
            raise BackendError(ErrorKind.BAD_BODY, redact(str(exc)), redact(raw)) from None


def usage_of(reply: Any) -> dict[str, Any] | None:
    """A reply's ``usage`` block (None when absent)."""
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
    #: Its judges need ``api_key_env`` unless they name a ``base_url`` (read for a provider
    #: registered by entry point; the registry's own entries say it without importing).
    needs_key: bool = True

    def __init__(self, name: str, judge: JudgeSettings, api_key: str | None, root: Path) -> None:
        self.name = name
        self.judge = judge
        self._api_key = api_key
        self.root = root

    @abstractmethod
    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """Ask the judge once; ``turns`` are earlier unusable replies and their follow-ups."""

    def decoding(self) -> dict[str, object]:
        """Decoding settings that can change a reply (part of the judge's identity)."""
        out: dict[str, object] = {
            "temperature": self.judge.temperature,
            "max_tokens": self.judge.max_tokens,
            "structured_output": self.judge.structured_output,
        }
        if self.judge.seed is not None:  # absent when unset: the identities of old judges hold
            out["seed"] = self.judge.seed
        return out

    def identity_extra(self) -> str:
        """Anything beyond the config that changes this backend's answers (e.g. a file digest)."""
        return ""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    def redact(self, text: str) -> str:
        """``text`` with the API key (if any) blanked out."""
        key = self._api_key
        return text.replace(key, "***") if key and len(key) >= 4 else text
