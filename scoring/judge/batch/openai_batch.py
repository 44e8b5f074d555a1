"""The OpenAI Batch API through the official SDK (also Gemini's OpenAI-compatible batch endpoint).

One input file (purpose ``batch``) per batch, endpoint ``/v1/chat/completions``, 24 h window. A
finished batch's output file holds the replies, its error file the failed lines (also the
requests an expired or cancelled batch never ran).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import openai

from scoring.judge.backends import client_options
from scoring.judge.batch.api import (
    FIND_WINDOW_S,
    BatchAPI,
    BatchLine,
    BatchResult,
    BatchStatus,
    error_text,
    read_result_line,
)
from scoring.judge.batch.openai_lines import (
    ENDPOINT,
    OPENAI_LIMITS,
    parse_result_line,
    request_line,
)
from scoring.judge.spec import JudgeConfig

_FINISHED = {"completed", "expired", "cancelled", "failed"}
#: The metadata key that names a batch's chunk (to find a batch whose id was never recorded).
TAG_KEY = "gamut_chunk"


class OpenAIBatchAPI(BatchAPI):
    """Batches of chat completions through ``openai.OpenAI``."""

    limits = OPENAI_LIMITS

    def __init__(
        self,
        judge: JudgeConfig,
        api_key: str | None,
        redact: Callable[[str], str],
        held: bool = False,
    ) -> None:
        self._client = openai.OpenAI(**client_options(judge, api_key, batch=True))
        super().__init__(redact, held)

    def line(self, custom_id: str, body: dict[str, Any]) -> BatchLine:
        """One request line of the input file."""
        data = request_line(custom_id, body)
        return BatchLine(custom_id, len(data), data)

    def submit(self, lines: list[BatchLine], tag: str) -> str:
        """Upload the input file and create the batch."""
        try:
            with tempfile.TemporaryFile() as fh:
                for ln in lines:
                    fh.write(ln.data)
                    fh.write(b"\n")
                fh.seek(0)
                f = self._client.files.create(file=(f"{tag}.jsonl", fh), purpose="batch")
            b = self._client.batches.create(
                input_file_id=f.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={TAG_KEY: tag},
            )
        except (openai.OpenAIError, OSError) as exc:
            raise self._fail("cannot create the batch", exc) from None
        return b.id

    def find(
        self, tag: str, since: float, n_requests: int, known: frozenset[str] = frozenset()
    ) -> str | None:
        """The batch whose metadata names ``tag`` (the tag carries the submitting run's random
        id, so it names one batch); the listing, newest first, is read back to
        :data:`FIND_WINDOW_S` before ``since``, so a provider clock minutes off does not hide
        it."""
        try:
            for b in self._client.batches.list(limit=100):
                if b.created_at < since - FIND_WINDOW_S:
                    break
                if (b.metadata or {}).get(TAG_KEY) == tag and b.id not in known:
                    return b.id
        except openai.OpenAIError as exc:
            raise self._fail("cannot list batches", exc) from None
        return None

    def status(self, batch_id: str) -> BatchStatus:
        """The batch's status word; ``failed`` batches carry the provider's errors."""
        try:
            b = self._client.batches.retrieve(batch_id)
        except openai.OpenAIError as exc:
            raise self._fail(f"cannot retrieve batch {batch_id}", exc) from None
        msg = ""
        if b.status == "failed" and b.errors and b.errors.data:
            msg = "; ".join(
                error_text(None, e.code or "", e.message or "", held=self.held, redact=self._redact)
                + (f" (line {e.line})" if e.line else "")
                for e in b.errors.data[:5]
            )
        return BatchStatus(b.status, b.status in _FINISHED, b.status == "failed", msg)

    def results(self, batch_id: str) -> Iterator[BatchResult]:
        """The lines of the output file, then of the error file, streamed."""
        try:
            b = self._client.batches.retrieve(batch_id)
        except openai.OpenAIError as exc:
            raise self._fail(f"cannot retrieve batch {batch_id}", exc) from None

        def parse(obj: Any, raw: str) -> BatchResult:
            return parse_result_line(obj, raw, self._redact, held=self.held)

        for fid in (b.output_file_id, b.error_file_id):
            if not fid:
                continue
            try:
                with self._client.files.with_streaming_response.content(fid) as resp:
                    for n, raw in enumerate(resp.iter_lines(), 1):
                        if not raw.strip():
                            continue
                        where = f"batch {batch_id}: file {fid} line {n}"
                        res = read_result_line(raw, where, parse, self.notes)
                        if res is not None:
                            yield res
            except openai.OpenAIError as exc:
                raise self._fail(f"cannot read file {fid} of batch {batch_id}", exc) from None

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()


__all__ = ["ENDPOINT", "OPENAI_LIMITS", "OpenAIBatchAPI", "parse_result_line", "request_line"]
