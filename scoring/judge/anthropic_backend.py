"""The ``anthropic`` provider: the Messages API with native structured output, in direct calls and
Message Batches (``messages.batches``).

API version 2026-10-21 (the 2.x SDK) rejects sampling parameters with a 400: no ``temperature``
is sent, and none is part of this backend's decoding identity.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
from anthropic.types.messages import MessageBatch

from scoring.errors import BackendError
from scoring.judge.backends import (
    Completion,
    JudgeRequest,
    Turn,
    client_options,
    decode_body,
    model_of,
    read_capped,
    reading_reply,
    sdk_error,
    token_count,
    usage_of,
)
from scoring.judge.batch.api import (
    FIND_SKEW_S,
    BatchBackend,
    BatchLine,
    BatchResult,
    BatchStatus,
    Found,
    Limits,
    Listed,
    error_text,
    json_line,
    pages_of,
    stated_megabytes,
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


def message_params(
    judge: JudgeConfig, request: JudgeRequest, turns: tuple[Turn, ...] = ()
) -> dict[str, Any]:
    """The Messages API parameters for one (response, check), in direct and batch mode."""
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


#: Anthropic's limits per batch: 100,000 requests, 256 MB.
ANTHROPIC_LIMITS = Limits(max_requests=100_000, max_bytes=stated_megabytes(256))
_RETRYABLE_ERRORS = {"api_error", "overloaded_error", "rate_limit_error", "timeout_error"}


def parse_batch_result(
    obj: Any, raw: str, redact: Callable[[str], str], *, held: bool = False
) -> BatchResult:
    """One line of a Message Batch's results (``MessageBatchIndividualResponse``: ``{"custom_id",
    "result": {"type": "succeeded" | "errored" | "canceled" | "expired", ...}}``)."""
    cid = obj["custom_id"]
    res = obj["result"]
    kind = res["type"]
    if not isinstance(cid, str):
        raise ValueError("no string custom_id")
    if kind == "succeeded":
        try:
            return BatchResult(cid, parse_message(res["message"], raw, redact))
        except (BackendError, KeyError) as exc:
            said = str(exc)
            if isinstance(exc, BackendError) and held:
                said = exc.brief()
            elif held:
                said = "unusable reply body"
            return BatchResult(cid, None, "bad_body", said, redact(raw))
    if kind == "errored":
        err = (res.get("error") or {}).get("error") or {}
        etype = str(err.get("type") or "")
        message = err.get("message")
        msg = error_text(
            None, etype, message if isinstance(message, str) else "", held=held, redact=redact
        )
        return BatchResult(
            cid, None, "api_error" if etype in _RETRYABLE_ERRORS else "rejected", msg
        )
    if kind == "expired":
        return BatchResult(cid, None, "expired", "the batch expired")
    return BatchResult(cid, None, "canceled", "the batch was canceled")


class AnthropicBackend(BatchBackend):
    """Messages via ``anthropic.AsyncAnthropic``; the shared part carries a cache breakpoint.
    Message Batches through ``anthropic.Anthropic``."""

    judge: JudgeConfig
    limits = ANTHROPIC_LIMITS

    @functools.cached_property
    def _client(self) -> anthropic.AsyncAnthropic:
        """The SDK client, created on first use (so planning never opens connections)."""
        return anthropic.AsyncAnthropic(**client_options(self.judge, self._api_key))

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """One message: system instructions, then the shared part (cached) and the check."""
        params = message_params(self.judge, request, turns)
        try:
            async with self._client.messages.with_streaming_response.create(**params) as resp:
                raw = await read_capped(resp.iter_bytes(), resp.close, self.name)
        except (anthropic.AnthropicError, ValueError) as exc:
            raise sdk_error(exc, self.redact, anthropic) from None
        return parse_message(decode_body(raw, self.redact), raw, self.redact)

    def batch_body(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> dict[str, Any]:
        """The parameters :meth:`complete` sends, for a batch request."""
        return message_params(self.judge, request, turns)

    @functools.cached_property
    def _batches(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(**client_options(self.judge, self._api_key, batch=True))

    def line(self, custom_id: str, body: dict[str, Any]) -> BatchLine:
        """One request of the batch: ``{"custom_id", "params"}``."""
        data = json_line({"custom_id": custom_id, "params": body})
        return BatchLine(custom_id, len(data), data)

    def submit(self, lines: list[BatchLine], tag: str) -> str:
        """Create the batch by a raw ``POST /v1/messages/batches`` of the serialized requests (the
        typed ``messages.batches.create`` copies every request first, which costs more than building
        them)."""
        with self._call("cannot create the batch"), tempfile.TemporaryFile() as fh:
            fh.write(b'{"requests":[')
            for i, ln in enumerate(lines):
                if i:
                    fh.write(b",")
                fh.write(ln.data)
            fh.write(b"]}")
            fh.seek(0)
            # a retry could not send the file again: a failed create is found or submitted
            # again by the next step (its pending record has the keys)
            return (
                self._batches.with_options(max_retries=0)
                .post(
                    "/v1/messages/batches",
                    content=fh,
                    cast_to=MessageBatch,
                    options={"headers": {"content-type": "application/json"}},
                )
                .id
            )

    def find(
        self, tag: str, since: float, ids: frozenset[str], known: frozenset[str] = frozenset()
    ) -> Found:
        """Of the batches created within :data:`FIND_SKEW_S` of ``since`` with as many requests as
        ``ids``, those whose results carry exactly ``ids``, nearest first; ``waiting`` while one
        that may be it has not ended (Message Batches carry no metadata)."""
        shown: list[tuple[float, str]] = []
        waiting = False
        with self._call("cannot list message batches"):
            for b in self._batches.messages.batches.list(limit=100):
                at = b.created_at.timestamp()
                if at < since - FIND_SKEW_S:
                    break
                c = b.request_counts
                total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
                if b.id in known or total != len(ids) or at > since + FIND_SKEW_S:
                    continue
                if b.processing_status != "ended":
                    waiting = True
                elif self._carries(b.id, ids):
                    shown.append((abs(at - since), b.id))
        if shown:
            return Found(tuple(bid for _, bid in sorted(shown)))
        return Found((), waiting)

    def _carries(self, batch_id: str, ids: frozenset[str]) -> bool:
        """Whether the ended batch's results are exactly one for each of ``ids`` (read until
        the first id that is not one of them)."""
        seen: set[str] = set()
        for res in self.results(batch_id):
            if res.custom_id not in ids:
                return False
            seen.add(res.custom_id)
        return seen == ids

    def listed(self, pages: int, size: int) -> Iterator[Listed]:
        """Every batch: Message Batches carry no metadata (a batch shows whose it is by the
        custom ids of its results)."""
        with self._call("cannot list message batches"):
            for b in pages_of(self._batches.messages.batches.list(limit=size), pages):
                yield Listed(b.id, b.processing_status == "ended")

    def status(self, batch_id: str) -> BatchStatus:
        """``in_progress``, ``canceling`` or ``ended``."""
        with self._call(f"cannot retrieve message batch {batch_id}"):
            b = self._batches.messages.batches.retrieve(batch_id)
        return BatchStatus(b.processing_status, b.processing_status == "ended")

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        """Every result (succeeded, errored, canceled or expired), streamed line by line."""
        with (
            self._call(f"cannot read the results of message batch {batch_id}"),
            self._batches.messages.batches.with_streaming_response.results(batch_id) as resp,
        ):
            where = f"message batch {batch_id}: results"
            yield from self._read(resp.iter_lines(), where, self._result)

    def _sdk_error(self) -> type[Exception]:
        return anthropic.AnthropicError

    def _result(self, obj: Any, raw: str) -> BatchResult:
        return parse_batch_result(obj, raw, self.redact, held=self.held)

    def decoding(self) -> dict[str, object]:
        """Decoding settings sent with every call (no sampling parameters in this API)."""
        return {
            "max_tokens": self.judge.max_tokens,
            "structured_output": self.judge.structured_output,
        }

    async def aclose(self) -> None:
        """Close the HTTP client, if one was opened."""
        client = self.__dict__.pop("_client", None)
        if client is not None:
            await client.close()


class AnthropicGenerator:
    """The Anthropic Messages API."""

    def __init__(self, settings: BackendSettings) -> None:
        self._sdk: Any = anthropic
        self._s = settings
        self._client: Any = anthropic.AsyncAnthropic(
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

    def body(self, request: Request) -> dict[str, Any]:
        """The Messages API parameters of one question; structured output as
        ``output_config.format`` (strict, then fitted by the SDK's ``transform_schema``)."""
        params: dict[str, Any] = {
            "model": self._s.model,
            "max_tokens": self._s.max_tokens,
            "messages": [{"role": "user", "content": self.content(request)}],
        }
        if self._s.system_prompt:
            params["system"] = self._s.system_prompt
        if request.schema is not None:
            schema = anthropic.transform_schema(strict_schema(request.schema.schema))
            params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        return params

    async def answer(self, request: Request) -> Reply:
        """Answer one question with a message."""
        try:
            out = await self._client.messages.create(**self.body(request))
        except (self._sdk.APIError, *OFF_PROTOCOL) as exc:
            raise call_error(exc, self._sdk, "Anthropic", self._s, self._client) from None
        text = "".join(getattr(b, "text", "") for b in out.content if b.type == "text")
        return Reply(text, out.usage.input_tokens, out.usage.output_tokens, usage_reported=True)

    async def aclose(self) -> None:
        """Close the client."""
        await self._client.close()
