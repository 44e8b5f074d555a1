"""The ``anthropic`` judge backend: the Messages API with native structured output.

API version 2026-10-21 (sent by the 2.x SDK) rejects sampling parameters with a 400, so no
``temperature`` is sent and it is not part of this backend's decoding identity; decoding is the
provider's default for structured output.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic

from scoring.judge.backends import (
    Backend,
    BackendError,
    Completion,
    JudgeRequest,
    Turn,
    client_options,
    decode_body,
    model_of,
    read_capped,
    reading_reply,
    token_count,
    usage_of,
)
from scoring.judge.batch.api import BatchAPI
from scoring.judge.prompt import REPLY_SCHEMA
from scoring.judge.spec import JudgeConfig

_RETRYABLE = {408, 409, 429}


def _classify(exc: Exception, backend: Backend) -> BackendError:
    msg = backend.redact(f"{type(exc).__name__}: {exc}")
    cls = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(exc, json.JSONDecodeError | anthropic.APIResponseValidationError):
        return BackendError(
            "bad_body",
            msg,
            error_class=cls,
            status=status,
            raw=backend.redact(getattr(exc, "doc", "") or ""),
        )
    if isinstance(exc, anthropic.APIStatusError):
        transient = exc.status_code in _RETRYABLE or exc.status_code >= 500
        return BackendError(
            "api_error" if transient else "rejected", msg, error_class=cls, status=status
        )
    return BackendError("api_error", msg, error_class=cls, status=status)


def message_params(
    judge: JudgeConfig, request: JudgeRequest, turns: tuple[Turn, ...] = ()
) -> dict[str, Any]:
    """The Messages API parameters for one (response, check), in direct and batch mode.

    System instructions, then one user message with the shared part (a cache breakpoint) and the
    check, then any re-ask turns; native JSON-schema output when the judge asks for it.
    """
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": request.shared, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": request.check_prompt},
            ],
        }
    ]
    for t in turns:
        messages.append({"role": "assistant", "content": t.reply or "(empty reply)"})
        messages.append({"role": "user", "content": t.followup})
    params: dict[str, Any] = {
        "model": judge.model,
        "system": [{"type": "text", "text": request.system}],
        "messages": messages,
        "max_tokens": judge.max_tokens,
    }
    if judge.structured_output:
        params["output_config"] = {"format": {"type": "json_schema", "schema": REPLY_SCHEMA}}
    return params


def parse_message(r: Any, raw: str, redact: Callable[[str], str]) -> Completion:
    """The completion in a decoded reply body, in direct and batch mode; anything
    malformed is a ``bad_body`` (re-asked)."""
    with reading_reply(raw, redact, "is not a message"):
        text = "".join(
            b["text"]
            for b in r["content"]
            if b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        u = usage_of(r)
        cached = token_count(u, "cache_read_input_tokens")
        created = token_count(u, "cache_creation_input_tokens")
        return Completion(
            text=text,
            tokens_in=token_count(u, "input_tokens") + cached + created,
            tokens_cached=cached,
            tokens_out=token_count(u, "output_tokens"),
            model=model_of(r),
        )


class AnthropicBackend(Backend):
    """Messages via ``anthropic.AsyncAnthropic``; the shared part carries a cache breakpoint."""

    def __init__(self, name: str, judge: JudgeConfig, api_key: str | None, root: Path) -> None:
        super().__init__(name, judge, api_key, root)
        self._client_obj: anthropic.AsyncAnthropic | None = None

    @property
    def _client(self) -> anthropic.AsyncAnthropic:
        """The SDK client, created on first use (so planning never opens connections)."""
        if self._client_obj is None:
            self._client_obj = anthropic.AsyncAnthropic(**client_options(self.judge, self._api_key))
        return self._client_obj

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """One message: system instructions, then the shared part (cached) and the check."""
        params = message_params(self.judge, request, turns)
        raw = ""
        try:
            async with self._client.messages.with_streaming_response.create(**params) as resp:
                raw = await read_capped(resp.iter_bytes(), resp.close, self.name)
        except (anthropic.AnthropicError, ValueError) as exc:
            raise _classify(exc, self) from None
        return self._read(raw)

    def _read(self, raw: str) -> Completion:
        """The completion in a reply body; anything malformed is a ``bad_body`` (re-asked)."""
        return parse_message(decode_body(raw, self.redact), raw, self.redact)

    def batch_body(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> dict[str, Any]:
        """The parameters :meth:`complete` sends, for a batch request."""
        return message_params(self.judge, request, turns)

    def batch_api(self, held: bool = False) -> BatchAPI:
        """Message Batches at this judge's base URL."""
        from scoring.judge.batch.anthropic_batch import AnthropicBatchAPI

        return AnthropicBatchAPI(self.judge, self._api_key, self.redact, held)

    def decoding(self) -> dict[str, object]:
        """Decoding settings sent with every call (no sampling parameters in this API)."""
        return {
            "max_tokens": self.judge.max_tokens,
            "structured_output": self.judge.structured_output,
        }

    async def aclose(self) -> None:
        """Close the HTTP client, if one was opened."""
        if self._client_obj is not None:
            await self._client_obj.close()
            self._client_obj = None
