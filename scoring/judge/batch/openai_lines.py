"""The OpenAI wire format, without the SDK: a chat completion read from its body (direct calls
and batch results), a request line of the batch format (what ``vllm run-batch`` reads too) and a
result line in any of the shapes OpenAI and vLLM write (read by batch mode and by ``gamut judge
--import-batch``, which needs no SDK and so does not import it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from scoring.errors import BackendError
from scoring.fastjson import dumps_line
from scoring.judge.backends import Completion, model_of, reading_reply, token_count, usage_of
from scoring.judge.batch.api import BatchResult, Limits, error_text, stated_megabytes

#: OpenAI's limits per input file: 50,000 requests, 200 MB.
OPENAI_LIMITS = Limits(max_requests=50_000, max_bytes=stated_megabytes(200))
ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
_RETRYABLE = {408, 409, 429}


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


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    """One request line of the OpenAI batch format (what ``vllm run-batch`` reads too), UTF-8,
    no newline."""
    return dumps_line({"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body})


def _error_parts(response: Any, error: Any) -> tuple[int | None, str, str]:
    """(HTTP status, error word, message) of a failed result line, in any of the shapes an
    OpenAI-format file uses for one."""
    # OpenAI: {"response": {"status_code", "body": {"error": {...}}}} or, never run,
    # {"response": null, "error": {"code": "batch_expired"}}; vllm run-batch: {"response":
    # {"status_code": 400, "body": null}, "error": {"error": {...}} | {...} | "text"}
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
    """One line of an OpenAI-format output or error file (also ``vllm run-batch`` output, both of
    its error shapes)."""
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
