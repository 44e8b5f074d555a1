"""The ``openai`` judge backend: any OpenAI-compatible chat completions endpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai

from scoring.config import JudgeConfig
from scoring.judge.backends import Backend, BackendError, Completion, JudgeRequest, Turn
from scoring.judge.prompt import REPLY_SCHEMA

_RETRYABLE = {408, 409, 429}


def classify(exc: Exception, redact: Any) -> BackendError:
    """Map an SDK exception (after the SDK's own retries) to a :class:`BackendError`."""
    msg = redact(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, json.JSONDecodeError | openai.APIResponseValidationError):
        return BackendError("bad_body", msg, redact(getattr(exc, "doc", "") or ""))
    if isinstance(exc, openai.APIStatusError):
        transient = exc.status_code in _RETRYABLE or exc.status_code >= 500
        return BackendError("api_error" if transient else "rejected", msg)
    return BackendError("api_error", msg)


class OpenAIBackend(Backend):
    """Chat completions via ``openai.AsyncOpenAI``, with JSON-schema structured output."""

    def __init__(self, name: str, judge: JudgeConfig, api_key: str | None, root: Path) -> None:
        super().__init__(name, judge, api_key, root)
        self._client = openai.AsyncOpenAI(
            api_key=api_key or "not-needed",
            base_url=judge.base_url,
            timeout=judge.timeout_s,
            max_retries=judge.max_retries,
        )

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """One chat completion: system instructions, then the shared part and the check."""
        messages: list[dict[str, str]] = [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.shared + "\n\n" + request.check_prompt},
        ]
        for t in turns:
            messages.append({"role": "assistant", "content": t.reply})
            messages.append({"role": "user", "content": t.followup})
        kwargs: dict[str, Any] = {}
        if self.judge.structured_output:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": True, "schema": REPLY_SCHEMA},
            }
        try:
            r = await self._client.chat.completions.create(
                model=self.judge.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=self.judge.temperature,
                max_tokens=self.judge.max_tokens,
                **kwargs,
            )
        except (openai.OpenAIError, ValueError) as exc:
            raise classify(exc, self.redact) from None
        text = r.choices[0].message.content if r.choices else None
        u = r.usage
        cached = 0
        if u is not None and u.prompt_tokens_details is not None:
            cached = u.prompt_tokens_details.cached_tokens or 0
        return Completion(
            text=text or "",
            tokens_in=u.prompt_tokens if u else 0,
            tokens_cached=cached,
            tokens_out=u.completion_tokens if u else 0,
        )

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()
