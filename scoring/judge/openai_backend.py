"""The ``openai`` provider: any OpenAI-compatible chat completions endpoint, in direct calls and
batches (the SDK-free wire format is :mod:`scoring.judge.batch.openai_lines`)."""

from __future__ import annotations

import functools
import json
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoring.judge.backends import (
    Completion,
    JudgeRequest,
    Turn,
    client_options,
    decode_body,
    read_capped,
    says_invalid_request,
    sdk_error,
)
from scoring.judge.batch.api import (
    FIND_WINDOW_S,
    BatchBackend,
    BatchLine,
    BatchResult,
    BatchStatus,
    Found,
    Listed,
    error_text,
    pages_of,
)
from scoring.judge.batch.openai_lines import (
    ENDPOINT,
    OPENAI_LIMITS,
    parse_chat_completion,
    parse_result_line,
    request_line,
)
from scoring.judge.generation import (
    OFF_PROTOCOL,
    BackendSettings,
    Reply,
    Request,
    call_error,
    strict_schema,
)
from scoring.judge.prompt import REPLY_SCHEMA
from scoring.judge.spec import JudgeConfig

if TYPE_CHECKING:  # the SDK is imported when a call is made: reading replies needs none of it
    import openai

#: Concurrent calls per SDK client (see ``OpenAIBackend._client``).
CONNECTIONS_PER_CLIENT = 16


def chat_body(
    judge: JudgeConfig, request: JudgeRequest, turns: tuple[Turn, ...] = ()
) -> dict[str, Any]:
    """The chat completions request body for one (response, check), in direct and batch mode."""
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
    if judge.seed is not None:
        body["seed"] = judge.seed
    if judge.structured_output:
        body["response_format"] = response_format(judge.request_dialect)
    return body


def response_format(dialect: str) -> dict[str, Any]:
    """The ``response_format`` that asks a server of ``dialect`` for a verdict object."""
    # llama-cpp-python 0.3.36 takes only text and json_object; TGI's GrammarType is tagged
    # ``type`` with content ``value``; the rest read OpenAI's json_schema (vLLM, SGLang, Ollama)
    if dialect == "llama-cpp-python":
        return {"type": "json_object", "schema": REPLY_SCHEMA}
    if dialect == "tgi":
        return {"type": "json", "value": REPLY_SCHEMA}
    return {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "strict": True, "schema": REPLY_SCHEMA},
    }


async def _no_retry_of_invalid_requests(response: Any) -> None:
    """An HTTP client response hook: a 5xx whose body says the request is invalid gets the
    ``x-should-retry: false`` header the OpenAI SDK honours, so it is not retried as transient."""
    if response.status_code >= 500:
        await response.aread()
        if says_invalid_request(response.text):
            response.headers["x-should-retry"] = "false"


_FINISHED = {"completed", "expired", "cancelled", "failed"}
#: The metadata key that names a batch's chunk (to find a batch whose id was never recorded).
TAG_KEY = "gamut_chunk"


class OpenAIBackend(BatchBackend):
    """Chat completions via ``openai.AsyncOpenAI``, with JSON-schema structured output; batches
    through ``openai.OpenAI`` (Files and Batches, also Gemini's OpenAI-compatible endpoint): one
    input file per batch, 24 h window, replies in the output file and failures in the error file.

    Requests go through the client's low-level ``post`` and the reply JSON is read directly: the
    typed models cost about a millisecond of CPU per call, most of the budget at high rates.
    """

    judge: JudgeConfig
    limits = OPENAI_LIMITS

    def __init__(self, name: str, judge: JudgeConfig, api_key: str | None, root: Path) -> None:
        super().__init__(name, judge, api_key, root)
        self._clients: list[openai.AsyncOpenAI] = []
        self._turn = 0

    @property
    def _client(self) -> openai.AsyncOpenAI:
        """An SDK client, created on first use (so planning never opens connections)."""
        if not self._clients:
            import openai

            n = math.ceil(self.judge.max_concurrency / CONNECTIONS_PER_CLIENT)
            self._clients = [
                openai.AsyncOpenAI(
                    **client_options(self.judge, self._api_key),
                    http_client=openai.DefaultAsyncHttpxClient(
                        event_hooks={"response": [_no_retry_of_invalid_requests]}
                    ),
                )
                for _ in range(n)
            ]
        self._turn = (self._turn + 1) % len(self._clients)
        return self._clients[self._turn]

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """One chat completion: system instructions, then the shared part and the check."""
        import openai

        body = chat_body(self.judge, request, turns)
        try:
            resp = await self._client.post(
                "/chat/completions",
                body=body,
                cast_to=openai.AsyncAPIResponse[str],
                options={"headers": {"X-Stainless-Raw-Response": "stream"}},
            )
            raw = await read_capped(resp.iter_bytes(), resp.close, self.name)
        except (openai.OpenAIError, ValueError) as exc:
            raise sdk_error(exc, self.redact, openai) from None
        return parse_chat_completion(decode_body(raw, self.redact), raw, self.redact)

    def batch_body(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> dict[str, Any]:
        """The body :meth:`complete` sends, for a batch line."""
        return chat_body(self.judge, request, turns)

    @functools.cached_property
    def _batches(self) -> openai.OpenAI:
        import openai

        return openai.OpenAI(**client_options(self.judge, self._api_key, batch=True))

    def line(self, custom_id: str, body: dict[str, Any]) -> BatchLine:
        """One request line of the input file."""
        data = request_line(custom_id, body)
        return BatchLine(custom_id, len(data), data)

    def _sdk_error(self) -> type[Exception]:
        import openai

        return openai.OpenAIError

    def submit(self, lines: list[BatchLine], tag: str) -> str:
        """Upload the input file and create the batch."""
        with self._call("cannot create the batch"), tempfile.TemporaryFile() as fh:
            for ln in lines:
                fh.write(ln.data)
                fh.write(b"\n")
            fh.seek(0)
            f = self._batches.files.create(file=(f"{tag}.jsonl", fh), purpose="batch")
            return self._batches.batches.create(
                input_file_id=f.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={TAG_KEY: tag},
            ).id

    def find(
        self, tag: str, since: float, ids: frozenset[str], known: frozenset[str] = frozenset()
    ) -> Found:
        """The batches whose metadata names ``tag`` (one chunk of one run), read back to
        :data:`FIND_WINDOW_S` before ``since``."""
        out: list[str] = []
        with self._call("cannot list batches"):
            for b in self._batches.batches.list(limit=100):
                if b.created_at < since - FIND_WINDOW_S:
                    break
                if (b.metadata or {}).get(TAG_KEY) == tag and b.id not in known:
                    out.append(b.id)
        return Found(tuple(reversed(out)))

    def listed(self, pages: int, size: int) -> Iterator[Listed]:
        """The batches whose metadata carries a chunk tag (as this project's batches do)."""
        with self._call("cannot list batches"):
            for b in pages_of(self._batches.batches.list(limit=size), pages):
                if (b.metadata or {}).get(TAG_KEY):
                    yield Listed(b.id, b.status in _FINISHED)

    def status(self, batch_id: str) -> BatchStatus:
        """The batch's status word; ``failed`` batches carry the provider's errors."""
        with self._call(f"cannot retrieve batch {batch_id}"):
            b = self._batches.batches.retrieve(batch_id)
        msg = ""
        if b.status == "failed" and b.errors and b.errors.data:
            msg = "; ".join(
                error_text(None, e.code or "", e.message or "", held=self.held, redact=self.redact)
                + (f" (line {e.line})" if e.line else "")
                for e in b.errors.data[:5]
            )
        return BatchStatus(b.status, b.status in _FINISHED, b.status == "failed", msg)

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        """The lines of the output file, then of the error file, streamed."""
        with self._call(f"cannot retrieve batch {batch_id}"):
            b = self._batches.batches.retrieve(batch_id)

        def parse(obj: Any, raw: str) -> BatchResult:
            return parse_result_line(obj, raw, self.redact, held=self.held)

        for fid in filter(None, (b.output_file_id, b.error_file_id)):
            with (
                self._call(f"cannot read file {fid} of batch {batch_id}"),
                self._batches.files.with_streaming_response.content(fid) as resp,
            ):
                yield from self._read(resp.iter_lines(), f"batch {batch_id}: file {fid}", parse)

    async def aclose(self) -> None:
        """Close the HTTP client, if one was opened."""
        for c in self._clients:
            await c.close()
        self._clients = []


class OpenAIGenerator:
    """OpenAI-compatible chat completions (OpenAI, Gemini's compatible endpoint, vLLM, Ollama)."""

    def __init__(self, settings: BackendSettings) -> None:
        import openai

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

    def body(self, request: Request) -> dict[str, Any]:
        """The chat completions body of one question, in direct calls and batch lines; its
        structured output as ``response_format`` (json_schema, ``strict``)."""
        body: dict[str, Any] = {
            "model": self._s.model,
            "messages": self.messages(request),
            self._s.token_limit_key: self._s.max_tokens,
        }
        if self._s.temperature is not None:
            body["temperature"] = self._s.temperature
        if request.schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema.name,
                    "schema": strict_schema(request.schema.schema),
                    "strict": True,
                },
            }
        return body

    async def answer(self, request: Request) -> Reply:
        """Answer one question with a chat completion."""
        body = self.body(request)
        try:
            raw = await self._client.post("/chat/completions", body=body, cast_to=str)
            out = json.loads(raw)
            text = out["choices"][0]["message"].get("content") or ""
            usage = out.get("usage") or {}
            tokens = (
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
            )
            reported = all(
                isinstance(usage.get(k), int) for k in ("prompt_tokens", "completion_tokens")
            )
        except (self._sdk.APIError, *OFF_PROTOCOL) as exc:
            raise call_error(exc, self._sdk, "OpenAI-compatible", self._s, self._client) from None
        return Reply(text if isinstance(text, str) else "", *tokens, usage_reported=reported)

    async def aclose(self) -> None:
        """Close the client."""
        await self._client.close()
