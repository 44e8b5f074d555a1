"""The OpenAI Batch API through the official SDK (also Gemini's OpenAI-compatible batch endpoint).

One input file (purpose ``batch``) per batch, endpoint ``/v1/chat/completions``, 24 h window. A
finished batch's output file holds the replies, its error file the failed lines (also the
requests an expired or cancelled batch never ran).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from typing import Any, Literal

import openai

from scoring.judge.backends import BackendError, client_options
from scoring.judge.batch.api import (
    FIND_WINDOW_S,
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
from scoring.judge.openai_backend import parse_chat_completion
from scoring.judge.spec import JudgeConfig

#: OpenAI's limits per input file: 50,000 requests, 200 MB.
OPENAI_LIMITS = Limits(max_requests=50_000, max_bytes=stated_megabytes(200))
ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
_FINISHED = {"completed", "expired", "cancelled", "failed"}
_RETRYABLE = {408, 409, 429}
#: The metadata key that names a batch's chunk (to find a batch whose id was never recorded).
TAG_KEY = "gamut_chunk"


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    """One request line of the OpenAI batch format (what ``vllm run-batch`` reads too)."""
    return json_line({"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body})


def _error_parts(response: Any, error: Any) -> tuple[int | None, str, str]:
    """(HTTP status, error word, message) of a failed result line, in any of the shapes an
    OpenAI-format file uses for one:

    - OpenAI, a refused request: ``"response": {"status_code": 400, "body": {"error":
      {"message", "type", "code"}}}, "error": null``;
    - OpenAI, a request never run: ``"response": null, "error": {"code": "batch_expired",
      "message"}``;
    - ``vllm run-batch``, a request the server answered with an error: ``"response":
      {"status_code": 400, "body": null}, "error": {"error": {"message", "type", "param",
      "code": 400}}`` (older releases: the same fields without the outer ``error``);
    - ``vllm run-batch``, a request that raised: ``"response": {"status_code": 400, "body":
      null}, "error": "the exception's text"``.
    """
    status = response.get("status_code") if isinstance(response, dict) else None
    if isinstance(status, bool) or not isinstance(status, int):
        status = None
    body = response.get("body") if isinstance(response, dict) else None
    if isinstance(error, str):
        return status, "", error
    inner: Any = None
    if isinstance(error, dict):
        inner = error.get("error") if isinstance(error.get("error"), dict) else error
    elif isinstance(body, dict) and isinstance(body.get("error"), dict):
        inner = body["error"]
    if not isinstance(inner, dict):
        return status, "", ""
    code, kind, message = inner.get("code"), inner.get("type"), inner.get("message")
    if status is None and isinstance(code, int) and not isinstance(code, bool):
        status = code
    word = code if isinstance(code, str) and code else kind if isinstance(kind, str) else ""
    return status, word, message if isinstance(message, str) else ""


def parse_result_line(
    obj: Any, raw: str, redact: Callable[[str], str], *, held: bool = False
) -> BatchResult:
    """One line of an OpenAI-format output or error file (also ``vllm run-batch`` output, both
    of its error shapes).

    A 4xx other than 408, 409 and 429 is ``rejected`` (final); any other error (a 5xx, a
    retryable 4xx, no status) is ``api_error`` (asked again). With ``held`` rubrics, an error
    keeps its HTTP status and error word only (:func:`error_text`).

    Raises:
        ValueError: the line is not a result object (no string ``custom_id``).
    """
    if not isinstance(obj, dict) or not isinstance(obj.get("custom_id"), str):
        raise ValueError("not a batch result line (no custom_id)")
    cid: str = obj["custom_id"]
    response = obj.get("response")
    error = obj.get("error")
    if isinstance(response, dict) and response.get("status_code") == 200 and not error:
        body = response.get("body")
        try:
            return BatchResult(cid, parse_chat_completion(body, raw, redact))
        except BackendError as exc:
            return BatchResult(cid, None, "bad_body", exc.brief() if held else str(exc), exc.raw)
    status, word, message = _error_parts(response, error)
    msg = error_text(status, word, message, held=held, redact=redact)
    if status is None and word == "batch_expired":
        return BatchResult(cid, None, "expired", msg)
    if status is None and word == "batch_cancelled":
        return BatchResult(cid, None, "canceled", msg)
    if status is not None and status not in _RETRYABLE and 400 <= status < 500:
        return BatchResult(cid, None, "rejected", msg)
    return BatchResult(cid, None, "api_error", msg)


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
