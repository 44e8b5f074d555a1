"""The ``openai`` judge backend: any OpenAI-compatible chat completions endpoint."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:  # the SDK is imported when a call is made: reading replies needs none of it
    import openai

_RETRYABLE = {408, 409, 429}
#: Concurrent calls per SDK client (see ``OpenAIBackend._client``).
CONNECTIONS_PER_CLIENT = 16


def classify(exc: Exception, redact: Any) -> BackendError:
    """Map an SDK exception (after the SDK's own retries) to a :class:`BackendError`."""
    import openai

    msg = redact(f"{type(exc).__name__}: {exc}")
    cls = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(exc, json.JSONDecodeError | openai.APIResponseValidationError):
        return BackendError(
            "bad_body",
            msg,
            error_class=cls,
            status=status,
            raw=redact(getattr(exc, "doc", "") or ""),
        )
    if isinstance(exc, openai.APIStatusError):
        transient = exc.status_code in _RETRYABLE or exc.status_code >= 500
        return BackendError(
            "api_error" if transient else "rejected", msg, error_class=cls, status=status
        )
    return BackendError("api_error", msg, error_class=cls, status=status)


def chat_body(
    judge: JudgeConfig, request: JudgeRequest, turns: tuple[Turn, ...] = ()
) -> dict[str, Any]:
    """The chat completions request body for one (response, check), in direct and batch mode.

    System instructions first, then one user message with the shared part and the check, then
    any re-ask turns; JSON-schema structured output when the judge asks for it. The output-token
    limit goes under the judge's ``max_tokens_param`` (default ``max_completion_tokens``).
    """
    messages: list[dict[str, str]] = [
        {"role": "system", "content": request.system},
        {"role": "user", "content": request.shared + "\n\n" + request.check_prompt},
    ]
    for t in turns:
        messages.append({"role": "assistant", "content": t.reply})
        messages.append({"role": "user", "content": t.followup})
    body: dict[str, Any] = {
        "model": judge.model,
        "messages": messages,
        "temperature": judge.temperature,
        judge.token_limit_key: judge.max_tokens,
    }
    if judge.structured_output:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "strict": True, "schema": REPLY_SCHEMA},
        }
    return body


def parse_chat_completion(r: Any, raw: str, redact: Callable[[str], str]) -> Completion:
    """The completion in a decoded reply body, in direct and batch mode; anything
    malformed is a ``bad_body`` (re-asked)."""
    with reading_reply(raw, redact, "has no usable message"):
        text = r["choices"][0]["message"].get("content") or ""
        u = usage_of(r)
        details = (u or {}).get("prompt_tokens_details")
        return Completion(
            text=text if isinstance(text, str) else "",
            tokens_in=token_count(u, "prompt_tokens"),
            tokens_cached=token_count(
                details if isinstance(details, dict) else None, "cached_tokens"
            ),
            tokens_out=token_count(u, "completion_tokens"),
            model=model_of(r),
        )


class OpenAIBackend(Backend):
    """Chat completions via ``openai.AsyncOpenAI``, with JSON-schema structured output.

    The request goes through the client's low-level ``post`` (same auth, retries, backoff and
    ``Retry-After`` handling as ``chat.completions.create``) and the reply JSON is read directly:
    building the typed request and response models costs about a millisecond of CPU per call,
    which at hundreds of calls a second is most of the judge's budget.
    """

    def __init__(self, name: str, judge: JudgeConfig, api_key: str | None, root: Path) -> None:
        super().__init__(name, judge, api_key, root)
        self._clients: list[openai.AsyncOpenAI] = []
        self._turn = 0

    @property
    def _client(self) -> openai.AsyncOpenAI:
        """An SDK client, created on first use (so planning never opens connections).

        One client per :data:`CONNECTIONS_PER_CLIENT` concurrent calls, used in turn: the HTTP
        connection pool scans all its connections on every request, so smaller pools cost less.
        """
        if not self._clients:
            import openai

            n = math.ceil(self.judge.max_concurrency / CONNECTIONS_PER_CLIENT)
            self._clients = [
                openai.AsyncOpenAI(**client_options(self.judge, self._api_key)) for _ in range(n)
            ]
        self._turn = (self._turn + 1) % len(self._clients)
        return self._clients[self._turn]

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """One chat completion: system instructions, then the shared part and the check."""
        import openai

        body = chat_body(self.judge, request, turns)
        raw = ""
        try:
            resp = await self._client.post(
                "/chat/completions",
                body=body,
                cast_to=openai.AsyncAPIResponse[str],
                options={"headers": {"X-Stainless-Raw-Response": "stream"}},
            )
            raw = await read_capped(resp.iter_bytes(), resp.close, self.name)
        except (openai.OpenAIError, ValueError) as exc:
            raise classify(exc, self.redact) from None
        return self._read(raw)

    def _read(self, raw: str) -> Completion:
        """The completion in a reply body; anything malformed is a ``bad_body`` (re-asked)."""
        return parse_chat_completion(decode_body(raw, self.redact), raw, self.redact)

    def batch_body(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> dict[str, Any]:
        """The body :meth:`complete` sends, for a batch line."""
        return chat_body(self.judge, request, turns)

    def batch_api(self, held: bool = False) -> BatchAPI:
        """The OpenAI Batch API (Files and Batches) at this judge's base URL."""
        from scoring.judge.batch.openai_batch import OpenAIBatchAPI

        return OpenAIBatchAPI(self.judge, self._api_key, self.redact, held)

    async def aclose(self) -> None:
        """Close the HTTP client, if one was opened."""
        for c in self._clients:
            await c.close()
        self._clients = []
