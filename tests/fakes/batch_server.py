"""A fake provider batch service on 127.0.0.1: the OpenAI Files and Batches endpoints and
Anthropic Message Batches, on top of :class:`~tests.fakes.llm_server.FakeLLMServer` (so the
same server also answers direct calls). Real SDK clients talk to it over real HTTP.

Usage::

    with FakeBatchServer(responder=verdict_responder("meets")) as srv:
        ...  # judges with base_url srv.openai_base_url / srv.anthropic_base_url, mode = "batch"
        srv.hold = True              # batches stay in progress until srv.release()
        srv.outcome = "expired"      # or "cancelled" / "failed"; done_fraction of the requests
        srv.done_fraction = 0.5      # get results, the rest are expired/cancelled entries
        srv.line_fault_fn = lambda custom_id, body: "400" if ... else None

Endpoints. OpenAI: ``POST /v1/files`` (multipart, purpose ``batch``), ``GET
/v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches``,
``POST /v1/batches/{id}/cancel``. Anthropic: ``POST /v1/messages/batches``, ``GET
/v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``, ``GET
/v1/messages/batches``. The two listings page newest first as the SDKs read them (openai 3.63
``SyncCursorPage``: ``{"object": "list", "data", "first_id", "last_id", "has_more"}``, the next
page ``?after=<last id>``; anthropic 2.17 ``SyncPage``: ``{"data", "first_id", "last_id",
"has_more"}``, the next page ``?after_id=<last_id>``), ``limit`` batches a page (default 20).

Per-request faults (``line_fault_fn(custom_id, body) -> kind | None``): ``"bad_verdict"`` and
``"prose"`` (unusable replies), ``"malformed"`` (a 200 line whose body has no message),
``"400"`` (the provider refuses the request: an error-file line, or an ``errored`` result with
``invalid_request_error``), ``"500"`` (a transient failure of that line), ``"drop"`` (no result
line at all), ``"garbled"`` (a result line cut short: not JSON, but its custom_id readable) and
``"garbled_noid"`` (a line of garbage naming no id). A refusal's message quotes the request
from its check on, as real providers quote the prompt. ``refuse_create = True`` refuses every
upload (OpenAI ``POST /v1/files``, Anthropic ``POST /v1/messages/batches``) with a 400 that
quotes the request too. Limits are the providers' own by default (``openai_max_requests``,
``openai_max_bytes``, ``anthropic_max_requests``, ``anthropic_max_bytes``); a request over them is
refused as the provider would. ``stream_delay`` slows result downloads (seconds per
``stream_chunk`` lines), so a test can kill a client mid-ingest. ``create_gate_s`` and
``drop_create`` hold a create before it creates anything and then drop it (a client killed
before its create arrived); ``gone`` holds the batch (or file) ids whose results answer HTTP
404.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import re
import signal
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.llm_server import (
    ChildServer,
    FakeLLMServer,
    Responder,
    prompt_text,
    schema_problem,
)

LineFaultFn = Callable[[str, dict[str, Any]], "str | None"]
LINE_FAULTS = (
    "bad_verdict",
    "prose",
    "malformed",
    "400",
    "500",
    "drop",
    "garbled",
    "garbled_noid",
)
_CID = re.compile(rb'"custom_id":\s*"([^"]*)"')


@dataclass
class FakeBatch:
    """One batch the server holds (either protocol)."""

    id: str
    protocol: str
    requests: list[tuple[str, dict[str, Any]]]
    created_at: float
    input_file_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    status: str = "validating"
    output: list[bytes] = field(default_factory=list)
    errors: list[bytes] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    retrieves: int = 0
    failure: str = ""
    raw: bytes = b""
    n: int = 0

    def parsed(self) -> list[tuple[str, dict[str, Any]]]:
        """The requests, parsed on first use (the provider's time, not the upload's)."""
        if self.raw:
            if self.protocol == "openai":
                for line in self.raw.splitlines():
                    obj = json.loads(line)
                    self.requests.append((obj["custom_id"], obj["body"]))
            else:
                for r in json.loads(self.raw)["requests"]:
                    self.requests.append((r["custom_id"], r["params"]))
            self.raw = b""
        return self.requests


def _quoted(text: str) -> str:
    """What a provider's refusal quotes of a request: its text from the check on."""
    i = text.find("CHECK (kind:")
    return repr(text[max(i, 0) : max(i, 0) + 200])


def _garbled(cid: str, fault: str) -> bytes:
    """A result line that is not a result: cut short (its id readable), or garbage."""
    if fault == "garbled_noid":
        return b"\x00\x01 this is not a result line }"
    return _dumps({"custom_id": cid, "response": {"status_code": 200}})[:-3]


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat().replace("+00:00", "Z")


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _multipart(headers: dict[str, str], raw: bytes) -> dict[str, bytes]:
    m = re.search(r"boundary=(\"?)([^\";]+)\1", headers.get("content-type", ""))
    if not m:
        return {}
    out: dict[str, bytes] = {}
    for part in raw.split(b"--" + m[2].encode()):
        head, sep, body = part.partition(b"\r\n\r\n")
        if not sep:
            continue
        name = re.search(rb'name="([^"]+)"', head)
        if name:
            out[name[1].decode()] = body[:-2] if body.endswith(b"\r\n") else body
    return out


class FakeBatchServer(FakeLLMServer):
    """The fake provider with batch endpoints. See the module docstring."""

    def __init__(self, responder: Responder | None = None, **kwargs: Any) -> None:
        super().__init__(responder, **kwargs)
        self.hold = False
        self.outcome = "completed"
        self.done_fraction = 1.0
        self.line_fault_fn: LineFaultFn | None = None
        self.stream_delay = 0.0
        self.stream_chunk = 1
        self.openai_max_requests = 50_000
        self.openai_max_bytes = 200_000_000  # the providers state decimal megabytes
        self.anthropic_max_requests = 100_000
        self.anthropic_max_bytes = 256_000_000
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, FakeBatch] = {}
        self.created: list[str] = []
        self.fast_usage = False
        #: seconds the provider's clock is ahead of ours (negative: behind), for its timestamps
        self.clock_skew_s = 0.0
        #: seconds a batch create waits, after the batch exists, before it answers (a client
        #: killed meanwhile never learns the id)
        self.create_delay = 0.0
        #: seconds a batch create waits before creating anything, and whether it then drops
        #: the request (as if its client were killed before the request reached the provider)
        self.create_gate_s = 0.0
        self.drop_create = False
        #: batch creates received, and of them dropped
        self.create_requests = 0
        self.creates_dropped = 0
        #: result downloads that answer 404, by batch id (as a provider whose file is gone)
        self.gone: set[str] = set()
        self.refuse_create = False
        #: listing pages served (either protocol)
        self.list_requests = 0
        self._lock = threading.Lock()
        self._n = 0

    # -- controls ----------------------------------------------------------------------------

    def release(self) -> None:
        """Let held batches finish (on their next retrieve)."""
        self.hold = False

    def batch_sizes(self) -> list[int]:
        """Requests per created batch, in creation order."""
        return [self.batches[b].n for b in self.created]

    def bodies(self) -> list[tuple[str, dict[str, Any]]]:
        """(custom_id, request body) of every request of every batch, in creation order."""
        return [r for b in self.created for r in self.batches[b].parsed()]

    def _next(self, prefix: str) -> str:
        with self._lock:
            self._n += 1
            return f"{prefix}{self._n:06d}"

    # -- HTTP --------------------------------------------------------------------------------

    async def _respond(
        self,
        writer: asyncio.StreamWriter,
        method: str,
        path: str,
        headers: dict[str, str],
        raw: bytes,
    ) -> bool:
        route = path.split("?", 1)[0]
        if not re.match(r"^/v1/(files|batches|messages/batches)(/|$)", route):
            return await super()._respond(writer, method, path, headers, raw)
        try:
            query = dict(urllib.parse.parse_qsl(path.partition("?")[2]))
            status, payload, stream = self._route(method, route, headers, raw, query)
        except KeyError as exc:
            status, payload, stream = 404, _dumps(self._error(f"no such object {exc}")), None
        if stream is None:
            self._write(writer, status, payload)
            await writer.drain()
            return True
        size = sum(len(x) + 1 for x in stream)
        head = (
            f"HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n"
            f"content-length: {size}\r\nconnection: keep-alive\r\n\r\n"
        )
        writer.write(head.encode("latin-1"))
        step = max(1, self.stream_chunk) if self.stream_delay else 2000
        for i in range(0, len(stream), step):
            writer.write(b"".join(x + b"\n" for x in stream[i : i + step]))
            await writer.drain()
            if self.stream_delay:
                await asyncio.sleep(self.stream_delay)
        return True

    @staticmethod
    def _error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
        return {"type": "error", "error": {"type": kind, "message": message}}

    def _listing(self, protocol: str, query: dict[str, str], cursor: str) -> dict[str, Any]:
        """One page of a batch listing, newest first, after the batch the ``cursor`` parameter
        names (OpenAI's ``after``, Anthropic's ``after_id``), of ``limit`` batches (default 20).
        Batches run on their own: listed, retrieved or not."""
        items = sorted(
            (b for b in self.batches.values() if b.protocol == protocol),
            key=lambda b: (-b.created_at, b.id),
        )
        self.list_requests += 1
        ids = [b.id for b in items]
        start = ids.index(query[cursor]) + 1 if cursor in query else 0
        page = items[start : start + int(query.get("limit", 20))]
        for b in page:
            self._advance(b)
        show = self._openai_batch if protocol == "openai" else self._anthropic_batch
        data = [show(b) for b in page]
        return {
            **({"object": "list"} if protocol == "openai" else {}),
            "data": data,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
            "has_more": start + len(page) < len(items),
        }

    def _route(
        self,
        method: str,
        route: str,
        headers: dict[str, str],
        raw: bytes,
        query: dict[str, str],
    ) -> tuple[int, bytes, list[bytes] | None]:
        parts = route.strip("/").split("/")
        # OpenAI files
        if parts[1] == "files":
            if method == "POST" and len(parts) == 2:
                return self._upload(headers, raw)
            if method == "GET" and len(parts) == 4 and parts[3] == "content":
                if {parts[2], parts[2].rsplit("-", 1)[0]} & self.gone:  # OpenAI's 404 body
                    err = {
                        "message": f"No such File object: {parts[2]}",
                        "type": "invalid_request_error",
                        "param": "id",
                        "code": None,
                    }
                    return 404, _dumps({"error": err}), None
                data = self.files[parts[2]]
                return 200, b"", data.splitlines() if data else []
        # OpenAI batches
        if parts[1] == "batches":
            if method == "POST" and len(parts) == 2:
                return self._create_openai(json.loads(raw or b"{}"))
            if method == "GET" and len(parts) == 2:
                return 200, _dumps(self._listing("openai", query, "after")), None
            if method == "GET" and len(parts) == 3:
                b = self.batches[parts[2]]
                self._advance(b)
                return 200, _dumps(self._openai_batch(b)), None
            if method == "POST" and len(parts) == 4 and parts[3] == "cancel":
                b = self.batches[parts[2]]
                self._finish(b, "cancelled")
                return 200, _dumps(self._openai_batch(b)), None
        # Anthropic message batches
        if parts[1] == "messages" and len(parts) >= 3:
            if method == "POST" and len(parts) == 3:
                return self._create_anthropic(raw)
            if method == "GET" and len(parts) == 3:
                return 200, _dumps(self._listing("anthropic", query, "after_id")), None
            if method == "GET" and len(parts) == 4:
                b = self.batches[parts[3]]
                self._advance(b)
                return 200, _dumps(self._anthropic_batch(b)), None
            if method == "GET" and len(parts) == 5 and parts[4] == "results":
                b = self.batches[parts[3]]
                if b.status != "ended":
                    return 400, _dumps(self._error("batch has not ended")), None
                if b.id in self.gone:
                    return 404, _dumps(self._error("not_found", "not_found_error")), None
                return 200, b"", b.output
        return 404, _dumps(self._error(f"no route {method} {route}")), None

    # -- OpenAI ------------------------------------------------------------------------------

    def _upload(self, headers: dict[str, str], raw: bytes) -> tuple[int, bytes, None]:
        form = _multipart(headers, raw)
        if form.get("purpose") != b"batch" or "file" not in form:
            return 400, _dumps(self._error("need purpose=batch and a file")), None
        data = form["file"]
        if self.refuse_create:
            msg = f"content rejected: {_quoted(data.decode('utf-8', 'replace'))}"
            return 400, _dumps(self._error(msg)), None
        if len(data) > self.openai_max_bytes:
            return 400, _dumps(self._error(f"file of {len(data)} bytes is over the limit")), None
        fid = self._next("file-")
        self.files[fid] = data
        obj = {
            "id": fid,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": "input.jsonl",
            "purpose": "batch",
            "status": "processed",
        }
        return 200, _dumps(obj), None

    def _gate(self) -> tuple[int, bytes, None] | None:
        """Wait :attr:`create_gate_s`; a 500 when the create is then dropped."""
        self.create_requests += 1
        if self.create_gate_s:
            time.sleep(self.create_gate_s)
        if not self.drop_create:
            return None
        self.creates_dropped += 1
        return 500, _dumps(self._error("dropped", "api_error")), None

    def _create_openai(self, body: dict[str, Any]) -> tuple[int, bytes, None]:
        if (dropped := self._gate()) is not None:
            return dropped
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return 400, _dumps(self._error("endpoint or completion_window not supported")), None
        data = self.files[str(body.get("input_file_id"))]
        b = FakeBatch(
            self._next("batch_"),
            "openai",
            [],
            time.time() + self.clock_skew_s,
            input_file_id=str(body["input_file_id"]),
            metadata=dict(body.get("metadata") or {}),
            raw=data,
        )
        ids = _CID.findall(data)
        b.n = len(ids)
        if len(set(ids)) != len(ids) or data.count(b'"url":"/v1/chat/completions"') != len(ids):
            b.failure = "duplicate custom_id or a line with another url"
        if b.n > self.openai_max_requests:
            b.failure = f"too many requests: {b.n}"
        self._register(b)
        return 200, _dumps(self._openai_batch(b)), None

    def _openai_batch(self, b: FakeBatch) -> dict[str, Any]:
        c = b.counts
        out_id = f"{b.id}-out" if b.output else None
        err_id = f"{b.id}-err" if b.errors else None
        return {
            "id": b.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": {
                "object": "list",
                "data": [{"code": "invalid_file", "message": b.failure, "line": None}],
            }
            if b.failure and b.status == "failed"
            else None,
            "input_file_id": b.input_file_id,
            "completion_window": "24h",
            "status": b.status,
            "output_file_id": out_id,
            "error_file_id": err_id,
            "created_at": int(b.created_at),
            "metadata": b.metadata,
            "request_counts": {
                "total": b.n,
                "completed": c.get("succeeded", 0),
                "failed": b.n - c.get("succeeded", 0) if b.status != "in_progress" else 0,
            },
        }

    # -- Anthropic ---------------------------------------------------------------------------

    def _create_anthropic(self, raw: bytes) -> tuple[int, bytes, None]:
        if (dropped := self._gate()) is not None:
            return dropped
        if self.refuse_create:
            msg = f"content rejected: {_quoted(raw.decode('utf-8', 'replace'))}"
            return 400, _dumps(self._error(msg)), None
        if len(raw) > self.anthropic_max_bytes:
            return 413, _dumps(self._error("request too large", "request_too_large")), None
        ids = [c.decode() for c in _CID.findall(raw)]
        if len(ids) > self.anthropic_max_requests:
            return 400, _dumps(self._error(f"too many requests: {len(ids)}")), None
        bad = [c for c in ids if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", c)]
        if bad or len(set(ids)) != len(ids) or not raw.startswith(b'{"requests":'):
            return 400, _dumps(self._error(f"bad or duplicate custom_id {bad[:1]}")), None
        b = FakeBatch(
            self._next("msgbatch_"),
            "anthropic",
            [],
            time.time() + self.clock_skew_s,
            raw=raw,
            n=len(ids),
        )
        self._register(b)
        return 200, _dumps(self._anthropic_batch(b)), None

    def _anthropic_batch(self, b: FakeBatch) -> dict[str, Any]:
        ended = b.status == "ended"
        c = b.counts
        counts = {
            "processing": 0 if ended else b.n,
            "succeeded": c.get("succeeded", 0),
            "errored": c.get("errored", 0),
            "canceled": c.get("canceled", 0),
            "expired": c.get("expired", 0),
        }
        return {
            "id": b.id,
            "type": "message_batch",
            "processing_status": b.status,
            "request_counts": counts,
            "created_at": _iso(b.created_at),
            "expires_at": _iso(b.created_at + 86400),
            "ended_at": _iso(time.time()) if ended else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{b.id}/results" if ended else None,
        }

    # -- processing --------------------------------------------------------------------------

    def _register(self, b: FakeBatch) -> None:
        b.status = "validating" if b.protocol == "openai" else "in_progress"
        self.batches[b.id] = b
        self.created.append(b.id)
        if self.create_delay:
            time.sleep(self.create_delay)

    def _advance(self, b: FakeBatch) -> None:
        b.retrieves += 1
        if b.status in ("validating", "in_progress") and not self.hold:
            if b.protocol == "openai" and b.failure:
                b.status = "failed"
                return
            self._finish(b, self.outcome)

    def _finish(self, b: FakeBatch, outcome: str) -> None:
        reqs = b.parsed()
        n_done = round(len(reqs) * (self.done_fraction if outcome != "completed" else 1.0))
        for i, (cid, body) in enumerate(reqs):
            if i < n_done:
                self._result(b, cid, body)
            elif b.protocol == "openai":
                code = "batch_expired" if outcome == "expired" else "batch_cancelled"
                b.errors.append(
                    _dumps(
                        {
                            "id": f"batch_req_{i}",
                            "custom_id": cid,
                            "response": None,
                            "error": {"code": code, "message": f"not run ({outcome})"},
                        }
                    )
                )
            else:
                kind = "expired" if outcome == "expired" else "canceled"
                b.counts[kind] = b.counts.get(kind, 0) + 1
                b.output.append(_dumps({"custom_id": cid, "result": {"type": kind}}))
        if b.protocol == "openai":
            b.status = {"completed": "completed", "expired": "expired"}.get(outcome, "cancelled")
            if b.output:
                self.files[f"{b.id}-out"] = b"".join(x + b"\n" for x in b.output)
            if b.errors:
                self.files[f"{b.id}-err"] = b"".join(x + b"\n" for x in b.errors)
        else:
            b.status = "ended"

    def _reply_text(self, body: dict[str, Any], fault: str | None) -> str:
        if fault == "bad_verdict":
            return json.dumps({"verdict": "excellent", "rationale": "Out of schema."})
        if fault == "prose":
            return "I think the response meets the check, broadly speaking."
        return self.responder(body)

    def _usage_of(self, body: dict[str, Any], text: str) -> tuple[int, int, int]:
        if self.fast_usage:
            return 100, 0, max(1, len(text) // 4)
        return self._usage(body, text)

    def _result(self, b: FakeBatch, cid: str, body: dict[str, Any]) -> None:
        fault = self.line_fault_fn(cid, body) if self.line_fault_fn else None
        if fault is None and schema_problem(body) is not None:
            fault = "400"  # the provider refuses a schema off its strict subset
        if fault == "drop":
            return
        if fault in ("garbled", "garbled_noid"):
            (b.output if fault == "garbled_noid" or b.protocol == "anthropic" else b.errors).append(
                _garbled(cid, fault)
            )
            return
        said = f"fake {fault}: content rejected: {_quoted(prompt_text(body))}"
        if b.protocol == "openai":
            if fault in ("400", "500"):
                status = int(fault)
                err = {"error": {"message": said, "type": "invalid_request_error"}}
                b.errors.append(
                    _dumps(
                        {
                            "id": f"batch_req_{cid}",
                            "custom_id": cid,
                            "response": {"status_code": status, "request_id": "r", "body": err},
                            "error": None,
                        }
                    )
                )
                return
            text = self._reply_text(body, fault)
            if fault == "malformed":
                reply: dict[str, Any] = {"id": "x", "object": "chat.completion", "choices": []}
            else:
                tin, cached, tout = self._usage_of(body, text)
                reply = {
                    "id": f"chatcmpl-{cid[:12]}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "fake"),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": text},
                        }
                    ],
                    "usage": {
                        "prompt_tokens": tin,
                        "completion_tokens": tout,
                        "total_tokens": tin + tout,
                        "prompt_tokens_details": {"cached_tokens": cached},
                    },
                }
            b.counts["succeeded"] = b.counts.get("succeeded", 0) + 1
            b.output.append(
                _dumps(
                    {
                        "id": f"batch_req_{cid}",
                        "custom_id": cid,
                        "response": {"status_code": 200, "request_id": "r", "body": reply},
                        "error": None,
                    }
                )
            )
            return
        if fault in ("400", "500"):
            kind = "invalid_request_error" if fault == "400" else "api_error"
            b.counts["errored"] = b.counts.get("errored", 0) + 1
            b.output.append(
                _dumps(
                    {
                        "custom_id": cid,
                        "result": {"type": "errored", "error": self._error(said, kind)},
                    }
                )
            )
            return
        text = self._reply_text(body, fault)
        tin, cached, tout = self._usage_of(body, text)
        msg = {
            "id": f"msg_{cid[:12]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": tin - cached,
                "output_tokens": tout,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 0,
            },
        }
        b.counts["succeeded"] = b.counts.get("succeeded", 0) + 1
        b.output.append(_dumps({"custom_id": cid, "result": {"type": "succeeded", "message": msg}}))


def run_batch_file(src: Path, dest: Path, responder: Responder, model: str | None = None) -> int:
    """Do what ``vllm run-batch -i SRC -o DEST`` does, with ``responder`` as the model: read
    OpenAI batch request lines, write one output line per request (vLLM's format: a random
    uuid in each line's ``id`` and ``request_id``, as ``run_batch.py`` makes them); ``model``
    overrides the reply's model field. Returns the lines written."""
    out = []
    for line in src.read_bytes().splitlines():
        req = json.loads(line)
        body = req["body"]
        text = responder(body)
        out.append(
            _dumps(
                {
                    "id": f"vllm-{uuid.uuid4().hex}",
                    "custom_id": req["custom_id"],
                    "response": {
                        "status_code": 200,
                        "request_id": f"vllm-batch-{uuid.uuid4().hex}",
                        "body": {
                            "id": f"chatcmpl-{uuid.uuid4().hex}",
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": model or body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {
                                "prompt_tokens": len(json.dumps(body)) // 4,
                                "completion_tokens": len(text) // 4,
                                "total_tokens": 0,
                            },
                        },
                    },
                    "error": None,
                }
            )
        )
    dest.write_bytes(b"".join(x + b"\n" for x in out))
    return len(out)


class FakeBatchProcess(ChildServer):
    """The fake batch server in a child process (for benchmarks); ``url`` as the server's."""

    def __init__(self) -> None:
        super().__init__("tests.fakes.batch_server", [], stop_timeout=30)

    def cpu_s(self) -> float:
        """CPU seconds the service process has used so far (Linux ``/proc``)."""
        assert self._proc is not None
        fields = Path(f"/proc/{self._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stats(self) -> dict[str, Any]:
        """``{"requests": n, ...}`` so far (direct calls only)."""
        with urllib.request.urlopen(self.url + "/_stats", timeout=10) as r:
            out: dict[str, Any] = json.loads(r.read())
        return out


def _serve_forever(argv: list[str]) -> None:
    argparse.ArgumentParser(description="Run the fake batch provider until terminated.").parse_args(
        argv
    )
    srv = FakeBatchServer().start()
    srv.fast_usage = True
    print(srv.port, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    srv.stop()


__all__ = ["LINE_FAULTS", "FakeBatch", "FakeBatchProcess", "FakeBatchServer", "run_batch_file"]


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    _serve_forever(sys.argv[1:])
