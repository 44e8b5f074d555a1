"""Anthropic Message Batches through the official SDK (``messages.batches``)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
from anthropic.types.messages import MessageBatch

from scoring.judge.anthropic_backend import parse_message
from scoring.judge.backends import BackendError, client_options
from scoring.judge.batch.api import (
    FIND_SKEW_S,
    BatchAPI,
    BatchLine,
    BatchResult,
    BatchStatus,
    Limits,
    error_text,
    json_line,
    read_result_line,
    stated_megabytes,
)
from scoring.judge.spec import JudgeConfig

#: Anthropic's limits per batch: 100,000 requests, 256 MB.
ANTHROPIC_LIMITS = Limits(max_requests=100_000, max_bytes=stated_megabytes(256))
_RETRYABLE_ERRORS = {"api_error", "overloaded_error", "rate_limit_error", "timeout_error"}


class AnthropicBatchAPI(BatchAPI):
    """Message Batches through ``anthropic.Anthropic``."""

    limits = ANTHROPIC_LIMITS

    def __init__(
        self,
        judge: JudgeConfig,
        api_key: str | None,
        redact: Callable[[str], str],
        held: bool = False,
    ) -> None:
        self._client = anthropic.Anthropic(**client_options(judge, api_key, batch=True))
        super().__init__(redact, held)

    def line(self, custom_id: str, body: dict[str, Any]) -> BatchLine:
        """One request of the batch: ``{"custom_id", "params"}``."""
        data = json_line({"custom_id": custom_id, "params": body})
        return BatchLine(custom_id, len(data), data)

    def submit(self, lines: list[BatchLine], tag: str) -> str:
        """Create the batch: ``POST /v1/messages/batches`` through the SDK client, with the
        body streamed from a file of the already serialized requests (the typed
        ``messages.batches.create`` copies every nested object of every request first, which
        at 100,000 requests costs more than building them)."""
        try:
            with tempfile.TemporaryFile() as fh:
                fh.write(b'{"requests":[')
                for i, ln in enumerate(lines):
                    if i:
                        fh.write(b",")
                    fh.write(ln.data)
                fh.write(b"]}")
                fh.seek(0)
                # a retry could not send the file again: a failed create is found or submitted
                # again by the next step (its pending record has the keys)
                b = self._client.with_options(max_retries=0).post(
                    "/v1/messages/batches",
                    content=fh,
                    cast_to=MessageBatch,
                    options={"headers": {"content-type": "application/json"}},
                )
        except (anthropic.AnthropicError, OSError) as exc:
            raise self._fail("cannot create the batch", exc) from None
        return b.id

    def find(
        self, tag: str, since: float, n_requests: int, known: frozenset[str] = frozenset()
    ) -> str | None:
        """Of the batches created from :data:`FIND_SKEW_S` before ``since`` on (by the
        provider's clock) with ``n_requests`` requests that the ledger does not already record,
        the one created nearest ``since`` (Message Batches carry no metadata; a wrong match
        loses nothing: its results are ingested by their keys, and requests of this record
        without a result are asked again)."""
        found, gap = None, float("inf")
        try:
            for b in self._client.messages.batches.list(limit=100):
                if b.created_at.timestamp() < since - FIND_SKEW_S:
                    break
                if b.id in known:
                    continue
                c = b.request_counts
                total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
                off = abs(b.created_at.timestamp() - since)
                if total == n_requests and off < gap:
                    found, gap = b.id, off
        except anthropic.AnthropicError as exc:
            raise self._fail("cannot list message batches", exc) from None
        return found

    def status(self, batch_id: str) -> BatchStatus:
        """``in_progress``, ``canceling`` or ``ended``."""
        try:
            b = self._client.messages.batches.retrieve(batch_id)
        except anthropic.AnthropicError as exc:
            raise self._fail(f"cannot retrieve message batch {batch_id}", exc) from None
        return BatchStatus(b.processing_status, b.processing_status == "ended")

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        """Every result (succeeded, errored, canceled or expired), streamed line by line."""
        try:
            with self._client.messages.batches.with_streaming_response.results(batch_id) as resp:
                for n, raw in enumerate(resp.iter_lines(), 1):
                    if not raw.strip():
                        continue
                    where = f"message batch {batch_id}: results line {n}"
                    res = read_result_line(raw, where, self._result, self.notes)
                    if res is not None:
                        yield res
        except anthropic.AnthropicError as exc:
            raise self._fail(f"cannot read the results of message batch {batch_id}", exc) from None

    def _result(self, obj: Any, raw: str) -> BatchResult:
        """One parsed result line.

        Raises:
            ValueError, KeyError, TypeError: the line is not a result.
        """
        cid = obj["custom_id"]
        res = obj["result"]
        kind = res["type"]
        if not isinstance(cid, str):
            raise ValueError("no string custom_id")
        if kind == "succeeded":
            try:
                return BatchResult(cid, parse_message(res["message"], raw, self._redact))
            except (BackendError, KeyError) as exc:
                said = str(exc)
                if isinstance(exc, BackendError) and self.held:
                    said = exc.brief()
                elif self.held:
                    said = "unusable reply body"
                return BatchResult(cid, None, "bad_body", said, self._redact(raw))
        if kind == "errored":
            err = (res.get("error") or {}).get("error") or {}
            etype = str(err.get("type") or "")
            retry = etype in _RETRYABLE_ERRORS
            message = err.get("message")
            msg = error_text(
                None,
                etype,
                message if isinstance(message, str) else "",
                held=self.held,
                redact=self._redact,
            )
            return BatchResult(cid, None, "api_error" if retry else "rejected", msg)
        if kind == "expired":
            return BatchResult(cid, None, "expired", "the batch expired")
        return BatchResult(cid, None, "canceled", "the batch was canceled")

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()


__all__ = ["ANTHROPIC_LIMITS", "AnthropicBatchAPI"]
