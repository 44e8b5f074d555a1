"""Model APIs a submission can be generated from, one class per protocol, registered by name.

Each backend has one async method, :meth:`Backend.answer`. HTTP retries (429 and 5xx with
``Retry-After``, timeouts, dropped connections; exponential backoff) are the official SDK's own,
bounded by ``max_retries``; what is left after them is raised as :class:`CallFailed`, or as
:class:`FatalCallError` when no other question can succeed either (bad key, unknown model).
"""

from __future__ import annotations

import importlib
import json
import socket
import ssl
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from gamut.model_runner.images import ImageRef
from scoring.errors import GamutError

Provider = Literal["openai", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")
DEFAULT_KEY_ENV: dict[Provider, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
# Status codes after which every other call would fail the same way.
_FATAL_STATUS = {401, 403, 404}


class CallFailed(Exception):
    """One question could not be answered (after the SDK's retries).

    Attributes:
        retry: whether asking again may help (an empty or malformed reply, which the SDK does
            not retry itself); HTTP failures have had their retries already.
    """

    def __init__(self, reason: str, retry: bool = False) -> None:
        super().__init__(reason)
        self.retry = retry


class FatalCallError(GamutError):
    """The API refuses every call (authentication, permission, unknown model or endpoint)."""


@dataclass(frozen=True)
class Request:
    """One question put to the model."""

    prompt: str
    image: ImageRef | None = None


@dataclass(frozen=True)
class Reply:
    """The model's answer and the tokens it cost."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class BackendSettings:
    """How to reach the model and how to decode. The API key is held only here, never logged."""

    model: str
    api_key: str
    base_url: str | None = None
    system_prompt: str | None = None
    temperature: float | None = None
    max_tokens: int = 2048
    #: OpenAI-compatible chat completions: the body key of ``max_tokens``.
    token_limit_key: str = "max_completion_tokens"
    timeout_s: float = 120.0
    max_retries: int = 6

    def __repr__(self) -> str:
        return f"BackendSettings(model={self.model!r}, base_url={self.base_url!r}, api_key=***)"


class Backend(Protocol):
    """A model API."""

    async def answer(self, request: Request) -> Reply:
        """Answer one question.

        Raises:
            CallFailed: the call failed after retries or the reply is empty.
            FatalCallError: no call can succeed with these settings.
        """
        ...

    async def aclose(self) -> None:
        """Release the HTTP connections."""
        ...


def _status_error(exc: Exception, provider: str, settings: BackendSettings) -> Exception:
    status = getattr(exc, "status_code", None)
    if status in _FATAL_STATUS:
        what = {
            401: "the API key was refused",
            403: "permission denied",
            404: f"model {settings.model!r} or the endpoint was not found",
        }[status]
        return FatalCallError(
            f"{provider} API: {what} (HTTP {status}); check --model, --base-url and "
            "the key in --api-key-env"
        )
    reason = f"{type(exc).__name__}: HTTP {status}" if status else type(exc).__name__
    detail = _api_message(exc, settings)
    return CallFailed(f"{reason} ({detail})" if detail else reason)


def _connection_cause(exc: BaseException) -> str:
    """The class of a connection failure: refused, timeout, DNS, TLS, or dropped."""
    seen: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and len(seen) < 10:
        seen.append(e)
        e = e.__cause__ or e.__context__
    names = " ".join(type(x).__name__ for x in seen)
    text = " ".join(str(x) for x in seen).lower()
    if any(isinstance(x, ssl.SSLError) for x in seen) or "ssl" in text or "certificate" in text:
        return "TLS"
    if any(isinstance(x, socket.gaierror) for x in seen) or "name or service not known" in text:
        return "DNS"
    if "nodename nor servname" in text or "temporary failure in name resolution" in text:
        return "DNS"
    if any(isinstance(x, ConnectionRefusedError) for x in seen) or "refused" in text:
        return "refused"
    if "Timeout" in names or "timed out" in text:
        return "timeout"
    return "dropped"


_CAUSE_HELP = {
    "refused": "connection refused: nothing listens there; is the server running, and is "
    "--base-url right?",
    "DNS": "DNS: the host name does not resolve; check --base-url",
    "TLS": "TLS: the secure connection failed (certificate or protocol); check --base-url "
    "(http:// or https://)",
    "timeout": "timeout: no answer in time; raise --request-timeout or lower --concurrency",
    "dropped": "the connection dropped",
}


def _connection_error(exc: Exception, provider: str, host: str) -> Exception:
    """A connection failure naming the host and its cause; fatal when no call could succeed."""
    cause = _connection_cause(exc)
    message = f"{provider} API at {host}: {_CAUSE_HELP[cause]}"
    if cause in {"refused", "DNS", "TLS"}:
        return FatalCallError(message)
    return CallFailed(message)


def _host(client: Any) -> str:
    url = getattr(client, "base_url", None)
    host = getattr(url, "host", None)
    port = getattr(url, "port", None)
    if not host:
        return str(url) if url is not None else "the API"
    return f"{host}:{port}" if port else str(host)


def _api_message(exc: Exception, settings: BackendSettings) -> str:
    """The provider's own error message, short, on one line, with the key masked."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None  # either SDK's shape
    msg = err.get("message") if isinstance(err, dict) else None
    if not isinstance(msg, str):
        return ""
    msg = " ".join(msg.split())[:200]
    return msg.replace(settings.api_key, "***") if settings.api_key else msg


class OpenAIBackend:
    """OpenAI-compatible chat completions (OpenAI, Gemini's compatible endpoint, vLLM, Ollama)."""

    def __init__(self, settings: BackendSettings) -> None:
        openai = _import_sdk("openai")
        self._sdk = openai
        self._s = settings
        self._client = openai.AsyncOpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
        )

    def messages(self, request: Request) -> list[dict[str, Any]]:
        """The chat messages for one question (system prompt, then image part, then text)."""
        msgs: list[dict[str, Any]] = []
        if self._s.system_prompt:
            msgs.append({"role": "system", "content": self._s.system_prompt})
        if request.image is None:
            msgs.append({"role": "user", "content": request.prompt})
        else:
            msgs.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": request.image.data_url()}},
                        {"type": "text", "text": request.prompt},
                    ],
                }
            )
        return msgs

    async def answer(self, request: Request) -> Reply:
        """Answer one question with a chat completion.

        The body goes through the client's low-level ``post`` (same auth, retries, backoff and
        ``Retry-After`` handling as ``chat.completions.create``) and the reply JSON is read
        directly: the typed request and response models cost CPU that a run of thousands of
        calls at high concurrency cannot spare.
        """
        body: dict[str, Any] = {
            "model": self._s.model,
            "messages": self.messages(request),
            self._s.token_limit_key: self._s.max_tokens,
        }
        if self._s.temperature is not None:
            body["temperature"] = self._s.temperature
        try:
            raw = await self._client.post("/chat/completions", body=body, cast_to=str)
            out = json.loads(raw)
            text = out["choices"][0]["message"].get("content") or ""
            usage = out.get("usage") or {}
            tokens = (
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
            )
        except self._sdk.APIStatusError as exc:
            raise _status_error(exc, "OpenAI-compatible", self._s) from None
        except self._sdk.APIConnectionError as exc:
            raise _connection_error(exc, "OpenAI-compatible", _host(self._client)) from None
        except self._sdk.APIError as exc:
            raise CallFailed(type(exc).__name__) from None
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            # A 2xx whose body is not the protocol's JSON.
            raise CallFailed(f"malformed reply ({type(exc).__name__})", retry=True) from None
        return Reply(text if isinstance(text, str) else "", *tokens)

    async def aclose(self) -> None:
        """Close the client."""
        await self._client.close()


class AnthropicBackend:
    """The Anthropic Messages API."""

    def __init__(self, settings: BackendSettings) -> None:
        anthropic = _import_sdk("anthropic")
        self._sdk = anthropic
        self._s = settings
        self._client = anthropic.AsyncAnthropic(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
        )

    @staticmethod
    def content(request: Request) -> list[dict[str, Any]]:
        """The user turn's content blocks (image block first, then the question)."""
        blocks: list[dict[str, Any]] = []
        img = request.image
        if img is not None:
            source: dict[str, Any] = (
                {"type": "url", "url": img.url}
                if img.url is not None
                else {"type": "base64", "media_type": img.media_type, "data": img.base64_data()}
            )
            blocks.append({"type": "image", "source": source})
        blocks.append({"type": "text", "text": request.prompt})
        return blocks

    async def answer(self, request: Request) -> Reply:
        """Answer one question with a message."""
        kwargs: dict[str, Any] = {}
        if self._s.system_prompt:
            kwargs["system"] = self._s.system_prompt
        try:
            out = await self._client.messages.create(
                model=self._s.model,
                max_tokens=self._s.max_tokens,
                messages=[{"role": "user", "content": self.content(request)}],
                **kwargs,
            )
        except self._sdk.APIStatusError as exc:
            raise _status_error(exc, "Anthropic", self._s) from None
        except self._sdk.APIConnectionError as exc:
            raise _connection_error(exc, "Anthropic", _host(self._client)) from None
        except self._sdk.APIError as exc:
            raise CallFailed(type(exc).__name__) from None
        except (ValueError, TypeError, AttributeError) as exc:  # a 2xx body off the protocol
            raise CallFailed(f"malformed reply ({type(exc).__name__})", retry=True) from None
        text = "".join(getattr(b, "text", "") for b in out.content if b.type == "text")
        return Reply(text, out.usage.input_tokens, out.usage.output_tokens)

    async def aclose(self) -> None:
        """Close the client."""
        await self._client.close()


def _import_sdk(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise GamutError(f"the {name} package is not installed; run: pip install {name}") from None


_BACKENDS: dict[Provider, type[OpenAIBackend] | type[AnthropicBackend]] = {
    "openai": OpenAIBackend,
    "anthropic": AnthropicBackend,
}


def make_backend(provider: Provider, settings: BackendSettings) -> Backend:
    """The backend registered under ``provider``, with its SDK imported on first use."""
    return _BACKENDS[provider](settings)
