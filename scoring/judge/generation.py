"""Generation (``gamut generate``): what a provider's generator is asked and answers, and how its
SDK's errors are named. A leaf beside :mod:`scoring.judge.backends`: it imports nothing else of the
judge; each provider module (``openai_backend``, ``anthropic_backend``) serves generation with a
class of this protocol, found through :mod:`scoring.judge.providers`."""

from __future__ import annotations

import base64
import json
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from scoring.errors import CallFailed, GamutError

# Status codes after which every other call would fail the same way.
_FATAL_STATUS = {401, 403, 404}


@dataclass(frozen=True)
class ImageRef:
    """An image to send with a multimodal question: a local file or a URL."""

    path: Path | None = None
    url: str | None = None
    media_type: str | None = None

    def base64_data(self) -> str:
        """The local file's bytes, base64-encoded (ASCII)."""
        if self.path is None:
            raise ValueError("a URL image has no local bytes")
        return base64.b64encode(self.path.read_bytes()).decode("ascii")

    def data_url(self) -> str:
        """A ``data:`` URL for a local file, or the URL itself."""
        if self.url is not None:
            return self.url
        return f"data:{self.media_type};base64,{self.base64_data()}"


@dataclass(frozen=True)
class OutputSchema:
    """The structured output a request asks for: a JSON Schema, made :func:`strict_schema` first."""

    name: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class Request:
    """One question put to the model, and the structured output it asks for (if any)."""

    prompt: str
    image: ImageRef | None = None
    schema: OutputSchema | None = None


@dataclass(frozen=True)
class Reply:
    """The model's answer and the tokens it cost."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    usage_reported: bool = False


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


class Generator(Protocol):
    """A model API answering questions."""

    def __init__(self, settings: BackendSettings) -> None:
        """Make the SDK client (no connection is opened yet)."""
        ...

    def body(self, request: Request) -> dict[str, Any]:
        """The request body :meth:`answer` sends (also a batch line's, in the workbench's
        batch mode)."""
        ...

    async def answer(self, request: Request) -> Reply:
        """Answer one question."""
        ...

    async def aclose(self) -> None:
        """Release the HTTP connections."""
        ...


#: Keywords the providers' strict schema subsets refuse; :func:`strict_schema` moves them into
#: the description, so the model still reads them (and the reply's validation enforces them).
_UNSTRICT = ("minLength", "maxLength", "minProperties", "maxProperties", "uniqueItems")
_DROPPED = ("default", "discriminator", "title", "examples")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (not changed) in the subset both providers' strict structured output accept:
    objects closed with every property required, ``oneOf`` as ``anyOf``, no defaults or titles, and
    the constraints strict decoding does not take stated in the description."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(x) for x in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        moved: list[str] = []
        for k, v in node.items():
            if k in _DROPPED:
                continue
            if k in _UNSTRICT:
                moved.append(f"{k}: {json.dumps(v)}")
            elif k == "oneOf":
                out["anyOf"] = walk(v)
            elif k in ("properties", "$defs"):
                out[k] = {name: walk(sub) for name, sub in v.items()}
            else:
                out[k] = walk(v)
        if out.get("type") == "object" or "properties" in out:
            out["additionalProperties"] = False
            out["required"] = list(out.get("properties", {}))
            out.setdefault("properties", {})
        if moved:
            said = out.get("description")
            out["description"] = (f"{said} " if said else "") + "(" + ", ".join(moved) + ")"
        return out

    result: dict[str, Any] = walk(schema)
    return result


#: What reading a 2xx body that is off the protocol raises.
OFF_PROTOCOL = (ValueError, KeyError, IndexError, TypeError, AttributeError)


def call_error(
    exc: Exception, sdk: Any, provider: str, settings: BackendSettings, client: Any
) -> Exception:
    """What a generator raises for an exception of its call (``sdk``: the SDK module, after its
    own retries): GamutError when no call can succeed (a refused key, no such model, a host that
    cannot be reached), else CallFailed (retried when a 2xx body is off the protocol)."""
    if isinstance(exc, sdk.APIConnectionError):
        cause = _connection_cause(exc)
        message = f"{provider} API at {_host(client)}: {_CAUSE_HELP[cause]}"
        return GamutError(message) if cause in {"refused", "DNS", "TLS"} else CallFailed(message)
    if not isinstance(exc, sdk.APIError):
        return CallFailed(f"malformed reply ({type(exc).__name__})", retry=True)
    status = getattr(exc, "status_code", None)
    if status in _FATAL_STATUS:
        what = {
            401: "the API key was refused",
            403: "permission denied",
            404: f"model {settings.model!r} or the endpoint was not found",
        }[status]
        return GamutError(
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


def _host(client: Any) -> str:
    url = getattr(client, "base_url", None)
    host, port = getattr(url, "host", None), getattr(url, "port", None)
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
