"""A fast fake LLM provider on 127.0.0.1, speaking the OpenAI and Anthropic HTTP protocols.

Real SDK clients talk to it over real HTTP; nothing is mocked. It is a small asyncio HTTP/1.1
server (keep-alive, one coroutine per connection, no thread per request) running in a background
thread's event loop, so thousands of concurrent slow requests cost almost nothing.

Usage::

    from tests.fakes.llm_server import FakeLLMServer, verdict_responder

    with FakeLLMServer(responder=verdict_responder("meets"), latency=0.2) as srv:
        client = openai.AsyncOpenAI(base_url=srv.openai_base_url, api_key="sk-test")
        client2 = anthropic.AsyncAnthropic(base_url=srv.anthropic_base_url, api_key="sk-test")
        srv.queue_faults("429", "malformed_json")   # the next two requests misbehave
        srv.fault_fn = random_faults(0.1, seed=1)   # or: fault a random 10% of requests
        ...
        assert len(srv.requests) == 3               # every request body is recorded
        srv.requests[0].body["messages"]            # e.g. to assert on image content parts

For benchmarks, :class:`FakeLLMProcess` runs the same server in a child process (so it never
competes with the client for the interpreter lock): ``with FakeLLMProcess(latency=0.2,
fault_rate=0.1) as srv: ...; srv.stats()``.

As a pytest fixture: ``from tests.fakes.llm_server import fake_llm  # noqa: F401`` in a test
module (or a conftest), then take ``fake_llm`` as an argument; tests under ``tests/fakes/`` get it
from ``tests/fakes/conftest.py``.

Endpoints: ``POST /v1/chat/completions`` (OpenAI; ``usage`` carries
``prompt_tokens_details.cached_tokens``) and ``POST /v1/messages`` (Anthropic; ``usage`` carries
``cache_read_input_tokens``). A request's structured output (OpenAI ``response_format``,
Anthropic ``output_config.format``) is checked as the providers check it
(:func:`schema_problem`: a 400 otherwise); the reply is the responder's text either way. Cached
tokens are simulated: the longest prompt prefix (in 256-char blocks) already seen by the server
counts as cached.

Faults (see :data:`FAULTS`), chosen per request by :meth:`FakeLLMServer.queue_faults` (first) or
``fault_fn(request) -> kind | None``: ``"429"`` (with ``Retry-After``), ``"500"``, ``"hang"`` (no
reply until the server stops), ``"drop"`` (connection closed without a reply), ``"malformed_json"``
(a 200 whose body is not JSON), ``"bad_verdict"`` (a reply whose verdict word is outside the
schema), ``"prose"`` (a reply that is not JSON at all), ``"400"`` (a request the provider rejects;
clients must not retry it) and ``"401"`` (an authentication error whose message echoes the
credential it received, as careless providers do; for testing that keys are redacted) and
``"400_echo"`` (a rejected request whose error message quotes the whole prompt back, as some
providers do; for testing that held text never reaches a log); ``"404_echo"``, ``"422_echo"``,
``"429_echo"`` and ``"500_echo"`` quote it too, in the message and as the error's type (a
self-hosted server's error body is any text); ``"500_invalid"`` is a 500 whose body says the
request itself is invalid, as llama-cpp-python's server answers a response format it does not
know.

A provider's rate limits: ``FakeLLMServer(limits=RateLimits(rpm=1800, tpm=...))`` answers a
request over a limit at once with a 429 in OpenAI's shape (``{"error": {"message": "Rate limit
reached for MODEL ... on requests per min (RPM): Limit L, Used U, Requested R. Please try again
in Nms. ...", "type": "requests" | "tokens", "param": null, "code": "rate_limit_exceeded"}}``,
with ``retry-after-ms`` and ``retry-after`` headers, as api.openai.com sent them in 2026-11) or
Anthropic's (``rate_limit_error``). Limits are token buckets refilled continuously, holding a
second's worth (OpenAI enforces a per-minute limit over shorter periods); a request's tokens are
its prompt characters / 4 plus its output limit. ``window_s`` shortens the minute, for a
benchmark run at a time scale.

``reply_hook(request, payload) -> payload | bytes``, when set, rewrites every successful reply
before it is sent (a dict is sent as JSON, bytes as they are): malformed usage blocks, deeply
nested bodies and the like.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import pytest

#: Every fault kind the server can inject.
FAULTS: tuple[str, ...] = (
    "429",
    "500",
    "400",
    "401",
    "hang",
    "drop",
    "malformed_json",
    "bad_verdict",
    "prose",
)

#: Faults that are only ever asked for by name (never drawn by :func:`random_faults`).
NAMED_FAULTS: tuple[str, ...] = (
    "400_echo",
    "404_echo",
    "422_echo",
    "429_echo",
    "500_echo",
    "500_invalid",
)

#: llama-cpp-python 0.3.36's answer to a body its request model refuses (here OpenAI's
#: ``json_schema`` response format): its route handler (llama_cpp/server/errors.py) turns
#: FastAPI's validation error into a 500 of type ``internal_server_error`` quoting pydantic (the
#: message as the real server sent it, but for the install path before ``llama_cpp/``).
LLAMA_CPP_PYTHON_INVALID = {
    "error": {
        "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
        "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
        "'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File "
        '"llama_cpp/server/app.py", line 376, in create_chat_completion\n    POST '
        "/v1/chat/completions\n",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}

Responder = Callable[[dict[str, Any]], str]
FaultFn = Callable[["RecordedRequest"], "str | None"]

_BLOCK = 256  # characters per simulated prefix-cache block
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    401: "Unauthorized",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


@dataclass
class RecordedRequest:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    fault: str | None = None
    received_at: float = field(default_factory=time.monotonic)

    @property
    def protocol(self) -> str:
        """``"openai"`` or ``"anthropic"``."""
        return "anthropic" if self.path.endswith("/messages") else "openai"

    @property
    def text(self) -> str:
        """Every text part of the prompt (system and messages), joined by newlines."""
        return prompt_text(self.body)

    @property
    def token_limit(self) -> int | None:
        """The output-token limit the request asked for, under either OpenAI name
        (``max_completion_tokens``, or the deprecated ``max_tokens``) or Anthropic's."""
        return token_limit(self.body)


#: The names of the output-token limit in an OpenAI chat completions body: the current one and
#: the deprecated one (which OpenAI's reasoning models refuse; vLLM reads both).
TOKEN_PARAMS = ("max_completion_tokens", "max_tokens")


def token_limit(body: dict[str, Any]) -> int | None:
    """A request body's output-token limit, whichever name carries it."""
    for name in TOKEN_PARAMS:
        value = body.get(name)
        if isinstance(value, int):
            return value
    return None


def _content_text(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
    return out


def prompt_text(body: dict[str, Any]) -> str:
    """All text of a chat request (OpenAI or Anthropic shape), system first, joined by newlines."""
    parts = _content_text(body.get("system"))
    for m in body.get("messages", []):
        if isinstance(m, dict):
            parts.extend(_content_text(m.get("content")))
    return "\n".join(parts)


_SCHEMA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def schema_problem(body: dict[str, Any]) -> str | None:
    """What the provider would refuse (a 400) in a request's structured output, or None: an
    OpenAI ``response_format`` must be ``json_schema`` with a name and, when ``strict``, a
    schema in the strict subset (every object closed with every property required, no
    ``oneOf``, ``default`` or ``discriminator``); an Anthropic ``output_config.format`` must
    be ``json_schema`` with every object closed."""
    rf = body.get("response_format")
    if rf is not None:
        if not isinstance(rf, dict) or rf.get("type") != "json_schema":
            return "response_format: only json_schema is served here"
        js = rf.get("json_schema") or {}
        if not _SCHEMA_NAME.fullmatch(str(js.get("name", ""))):
            return "response_format.json_schema.name: 1 to 64 of a-z, A-Z, 0-9, _ and -"
        if not isinstance(js.get("schema"), dict):
            return "response_format.json_schema.schema: not an object"
        return _unstrict(js["schema"], "schema", openai=True) if js.get("strict") else None
    fmt = (body.get("output_config") or {}).get("format")
    if fmt is not None:
        if fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
            return "output_config.format: a json_schema with a schema object"
        return _unstrict(fmt["schema"], "schema", openai=False)
    return None


def _unstrict(node: Any, where: str, *, openai: bool) -> str | None:
    if isinstance(node, list):
        for i, x in enumerate(node):
            found = _unstrict(x, f"{where}[{i}]", openai=openai)
            if found:
                return found
        return None
    if not isinstance(node, dict):
        return None
    if openai:
        for word in ("oneOf", "default", "discriminator"):
            if word in node:
                return f"Invalid schema: In context={where}, '{word}' is not permitted"
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") is not False:
            return f"Invalid schema: In context={where}, 'additionalProperties' must be false"
        props = node.get("properties") or {}
        if openai and set(node.get("required") or ()) != set(props):
            return f"Invalid schema: In context={where}, 'required' must list every property"
    for key, sub in node.items():
        subs = sub.items() if key in ("properties", "$defs") else [(key, sub)]
        for name, x in subs:
            found = _unstrict(x, f"{where}.{name}", openai=openai)
            if found:
                return found
    return None


def verdict_responder(verdict: str = "meets", rationale: str = "Stated plainly.") -> Responder:
    """A responder that always answers with the given verdict as JSON."""
    reply = json.dumps({"verdict": verdict, "rationale": rationale})
    return lambda body: reply


def random_faults(
    rate: float, kinds: tuple[str, ...] = FAULTS, seed: int = 0, exclude_hang: bool = True
) -> FaultFn:
    """A ``fault_fn`` that faults a random ``rate`` share of requests with one of ``kinds``
    (never the client errors ``"400"``/``"401"``, which no retry can cure)."""
    rng = random.Random(seed)
    pool = tuple(k for k in kinds if not (exclude_hang and k == "hang") and k not in ("400", "401"))

    def fn(req: RecordedRequest) -> str | None:
        return rng.choice(pool) if rng.random() < rate else None

    return fn


@dataclass
class RateLimits:
    """Per-minute limits the fake enforces (None: no such limit), over a minute of ``window_s``
    seconds."""

    rpm: int | None = None
    tpm: int | None = None
    window_s: float = 60.0
    #: answers given per kind ("requests", "tokens") of 429
    refused: dict[str, int] = field(default_factory=dict)
    #: requests let through, their tokens, and when the first and the last came (monotonic)
    accepted: int = 0
    tokens: int = 0
    first_at: float = 0.0
    last_at: float = 0.0
    _levels: dict[str, float] = field(default_factory=dict)
    _at: float = 0.0

    def refuse(self, tokens: int, now: float) -> tuple[str, int, float] | None:
        """(kind, limit, seconds to wait) when a request of ``tokens`` is over a limit, else
        None (and the request is counted)."""
        limits = {k: v for k, v in (("requests", self.rpm), ("tokens", self.tpm)) if v}
        cost = {"requests": 1.0, "tokens": float(tokens)}
        for kind, limit in limits.items():
            rate, size = limit / self.window_s, limit / 60.0
            level = self._levels.get(kind, size) + (now - self._at) * rate if self._at else size
            self._levels[kind] = min(size, level)
        self._at = now
        for kind, limit in limits.items():
            short = cost[kind] - self._levels[kind]
            if short > 0:
                self.refused[kind] = self.refused.get(kind, 0) + 1
                return kind, limit, short / (limit / self.window_s)
        for kind in limits:
            self._levels[kind] -= cost[kind]
        self.accepted += 1
        self.tokens += tokens
        self.first_at = self.first_at or now
        self.last_at = now
        return None


class FakeLLMServer:
    """The fake provider. Use as a context manager, or call :meth:`start` and :meth:`stop`.

    Args:
        responder: request JSON -> reply text (the model's message content).
        latency: seconds to wait before answering each request.
        retry_after: the ``Retry-After`` value (seconds) sent with injected 429s.
        hang_s: how long a ``"hang"`` fault holds the request (at most until the server stops).
        retry_500: also send ``Retry-After`` with injected 500s (keeps tests fast); when False
            the client falls back to its own exponential backoff.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        latency: float = 0.0,
        retry_after: float = 0.05,
        hang_s: float = 3600.0,
        retry_500: bool = True,
        limits: RateLimits | None = None,
    ) -> None:
        self.responder: Responder = responder or verdict_responder()
        #: the provider's rate limits (None: unlimited)
        self.limits = limits
        #: (status, JSON body): every request is answered with this error (a provider's error
        #: in its own shape), after the latency
        self.error_reply: tuple[int, dict[str, Any]] | None = None
        self.latency = latency
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.retry_500 = retry_500
        self.fault_fn: FaultFn | None = None
        #: the model snapshot replies name (default: the model the request asked for)
        self.snapshot: str | None = None
        #: The error type, code and param of the ``*_echo`` faults (default: each request's
        #: check's last word).
        self.echo_word: str | None = None
        self.reply_hook: (
            Callable[[RecordedRequest, dict[str, Any]], dict[str, Any] | bytes] | None
        ) = None
        self.requests: list[RecordedRequest] = []
        #: The output-token limit names an OpenAI request may use (both, like vLLM; set it to
        #: ``("max_completion_tokens",)`` to answer like OpenAI's reasoning models, which refuse
        #: ``max_tokens`` with a 400).
        self.token_params: tuple[str, ...] = TOKEN_PARAMS
        #: Requests being answered now, and the most there ever were at once.
        self.in_flight = 0
        self.max_in_flight = 0
        self._queued: deque[str] = deque()
        self._prefixes: set[bytes] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, daemon=True, name="fake-llm-server"
        )
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Start listening on a free port of 127.0.0.1."""
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        fut.result(timeout=10)
        return self

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=2048)
        self.port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        """Stop the server, ending hung requests and open connections."""
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses and controls ------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The ``base_url`` for ``openai.AsyncOpenAI``."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The ``base_url`` for ``anthropic.AsyncAnthropic``."""
        return self.url

    def queue_faults(self, *kinds: str) -> None:
        """Fault the next ``len(kinds)`` requests, in order (before ``fault_fn`` is asked)."""
        for k in kinds:
            if k not in FAULTS + NAMED_FAULTS:
                raise ValueError(f"unknown fault {k!r}; one of {', '.join(FAULTS + NAMED_FAULTS)}")
        self._queued.extend(kinds)

    def reset(self) -> None:
        """Forget recorded requests, queued faults and the simulated prefix cache."""
        self.requests.clear()
        self._queued.clear()
        self._prefixes.clear()

    @property
    def fault_counts(self) -> dict[str, int]:
        """How many requests got each fault so far."""
        out: dict[str, int] = {}
        for r in self.requests:
            if r.fault:
                out[r.fault] = out.get(r.fault, 0) + 1
        return out

    # -- HTTP ------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = [*lines[0].split(" ", 2), "", ""][:3]
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await self._read_body(reader, headers)
                keep = await self._respond(writer, method, path, headers, body)
                if not keep:
                    return
        except (asyncio.CancelledError, ConnectionError):
            pass
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    return b"".join(chunks)
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        n = int(headers.get("content-length", "0"))
        return await reader.readexactly(n) if n else b""

    @staticmethod
    def _write(
        writer: asyncio.StreamWriter,
        status: int,
        payload: bytes,
        extra: dict[str, str] | None = None,
    ) -> None:
        hdrs = {
            "content-type": "application/json",
            "content-length": str(len(payload)),
            "connection": "keep-alive",
            **(extra or {}),
        }
        head = (
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items())
            + "\r\n"
        )
        writer.write(head.encode("latin-1") + payload)

    async def _respond(
        self,
        writer: asyncio.StreamWriter,
        method: str,
        path: str,
        headers: dict[str, str],
        raw: bytes,
    ) -> bool:
        path = path.split("?", 1)[0]
        if method == "GET" and path == "/_stats":
            stats: dict[str, Any] = {"requests": len(self.requests), "faults": self.fault_counts}
            lim = self.limits
            if lim is not None:
                stats |= {"refused": lim.refused, "accepted": lim.accepted, "tokens": lim.tokens}
                stats["span_s"] = lim.last_at - lim.first_at
            self._write(writer, 200, json.dumps(stats).encode())
            await writer.drain()
            return True
        if method != "POST" or path not in ("/v1/chat/completions", "/v1/messages"):
            self._write(writer, 404, json.dumps({"error": {"message": "not found"}}).encode())
            await writer.drain()
            return True
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._write(writer, 400, json.dumps({"error": {"message": "bad json"}}).encode())
            await writer.drain()
            return True
        req = RecordedRequest(path, headers, body)
        req.fault = (
            self._queued.popleft()
            if self._queued
            else (self.fault_fn(req) if self.fault_fn else None)
        )
        self.requests.append(req)
        if self.limits is not None and req.fault is None:
            over = self.limits.refuse(
                len(prompt_text(body)) // 4 + (token_limit(body) or 0), time.monotonic()
            )
            if over is not None:
                req.fault = "rate_limited"
                self._rate_limited(writer, req, *over)
                await writer.drain()
                return True
        if self.latency:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                await asyncio.sleep(self.latency)
            finally:
                self.in_flight -= 1
        if self.error_reply is not None:
            self._write(writer, self.error_reply[0], json.dumps(self.error_reply[1]).encode())
            await writer.drain()
            return True
        fault = req.fault
        refused = (
            [n for n in TOKEN_PARAMS if n in body and n not in self.token_params]
            if req.protocol == "openai"
            else []
        )
        unfit = schema_problem(body) if fault is None else None
        if unfit is not None:
            err = {"type": "error", "error": {"type": "invalid_request_error", "message": unfit}}
            self._write(writer, 400, json.dumps(err).encode())
            await writer.drain()
            return True
        if refused and fault is None:
            err = {
                "error": {
                    "type": "invalid_request_error",
                    "param": refused[0],
                    "code": "unsupported_parameter",
                    "message": f"Unsupported parameter: '{refused[0]}' is not supported with "
                    f"this model. Use '{self.token_params[0]}' instead.",
                }
            }
            self._write(writer, 400, json.dumps(err).encode())
            await writer.drain()
            return True
        if fault == "hang":
            await asyncio.sleep(self.hang_s)
            return False
        if fault == "drop":
            return False
        if fault == "429":
            err = {
                "type": "error",
                "error": {"type": "rate_limit_error", "message": "rate limited (fake)"},
            }
            self._write(
                writer, 429, json.dumps(err).encode(), {"retry-after": f"{self.retry_after:g}"}
            )
        elif fault == "500":
            err = {"type": "error", "error": {"type": "api_error", "message": "boom (fake)"}}
            self._write(
                writer,
                500,
                json.dumps(err).encode(),
                {"retry-after": f"{self.retry_after:g}"} if self.retry_500 else None,
            )
        elif fault == "500_invalid":
            self._write(writer, 500, json.dumps(LLAMA_CPP_PYTHON_INVALID).encode())
        elif fault == "400":
            err = {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "bad request (fake)"},
            }
            self._write(writer, 400, json.dumps(err).encode())
        elif fault == "400_echo":
            err = {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": f"cannot process this prompt: {prompt_text(body)}",
                },
            }
            self._write(writer, 400, json.dumps(err).encode())
        elif fault is not None and fault.endswith("_echo"):
            quoted = prompt_text(body)
            check = re.search(r"CHECK \(kind: [a-z_]+\):\n(.*)\n", quoted)
            word = self.echo_word or re.findall(r"[A-Za-z]+", check[1] if check else quoted)[-1]
            what = {"type": word, "code": word, "param": word, "message": quoted}
            err = {"type": "error", "error": what}
            self._write(writer, int(fault[:3]), json.dumps(err).encode(), {"retry-after": "0"})
        elif fault == "401":
            cred = headers.get("x-api-key") or headers.get("authorization", "")
            err = {
                "type": "error",
                "error": {
                    "type": "authentication_error",
                    "message": f"invalid credential {cred!r}",
                },
            }
            self._write(writer, 401, json.dumps(err).encode())
        elif fault == "malformed_json":
            self._write(writer, 200, b'{"id": "x", "choices": [ {"mess')
        else:
            if fault == "bad_verdict":
                text = json.dumps({"verdict": "excellent", "rationale": "Out of schema."})
            elif fault == "prose":
                text = "I think the response meets the check, broadly speaking."
            else:
                text = self.responder(body)
            payload = (
                self._anthropic_reply(body, text)
                if req.protocol == "anthropic"
                else self._openai_reply(body, text)
            )
            out = self.reply_hook(req, payload) if self.reply_hook else payload
            self._write(writer, 200, out if isinstance(out, bytes) else json.dumps(out).encode())
        await writer.drain()
        return True

    def _rate_limited(
        self, writer: asyncio.StreamWriter, req: RecordedRequest, kind: str, limit: int, wait: float
    ) -> None:
        ms = max(1, round(wait * 1000))
        headers = {"retry-after-ms": str(ms), "retry-after": str(max(1, -(-ms // 1000)))}
        if req.protocol == "anthropic":
            err: dict[str, Any] = {
                "type": "error",
                "error": {"type": "rate_limit_error", "message": f"Number of {kind} has "
                          f"exceeded your per-minute rate limit ({limit})."},
            }  # fmt: skip
        else:
            unit = "requests per min (RPM)" if kind == "requests" else "tokens per min (TPM)"
            model = req.body.get("model", "fake")
            err = {
                "error": {
                    "message": f"Rate limit reached for {model} in organization org-fake on "
                    f"{unit}: Limit {limit}, Used {limit}, Requested 1. Please try again in "
                    f"{ms}ms. Visit https://platform.openai.com/account/rate-limits to learn more.",
                    "type": kind,
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            }
        self._write(writer, 429, json.dumps(err).encode(), headers)

    # -- replies ---------------------------------------------------------------------------

    def _usage(self, body: dict[str, Any], text: str) -> tuple[int, int, int]:
        prompt = prompt_text(body)
        cached_chars = 0
        enc = prompt.encode()
        for end in range(_BLOCK, len(enc) + 1, _BLOCK):
            key = hashlib.blake2b(enc[:end], digest_size=12).digest()
            if key in self._prefixes:
                cached_chars = end
            else:
                self._prefixes.add(key)
        return max(1, len(enc) // 4), cached_chars // 4, max(1, len(text) // 4)

    def _openai_reply(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        tin, cached, tout = self._usage(body, text)
        return {
            "id": f"chatcmpl-fake{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.snapshot or body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "logprobs": None,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                }
            ],
            "usage": {
                "prompt_tokens": tin,
                "completion_tokens": tout,
                "total_tokens": tin + tout,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }

    def _anthropic_reply(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        tin, cached, tout = self._usage(body, text)
        return {
            "id": f"msg_fake{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": self.snapshot or body.get("model", "fake"),
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


class ChildServer:
    """A fake server module run as ``python -m MODULE ARGS`` in a child process, which prints its
    port on its first line; the addresses as the in-process servers give them.

    Args:
        module: the server's module.
        args: its command-line arguments.
        stop_timeout: seconds to wait for it to exit after ``terminate``.
    """

    def __init__(self, module: str, args: list[str], stop_timeout: float) -> None:
        self._module, self._args, self._stop_timeout = module, args, stop_timeout
        self._proc: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> Self:
        root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", self._module, *self._args],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self._proc.stdout is not None
        self.port = int(self._proc.stdout.readline().strip())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=self._stop_timeout)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """The ``base_url`` for the OpenAI SDK's clients."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The ``base_url`` for the Anthropic SDK's clients."""
        return self.url


class FakeLLMProcess(ChildServer):
    """The fake server in a child process (default responder), so that in benchmarks it never
    competes with the client for the interpreter lock. ``stats()`` reads its counters over HTTP.

    Args:
        latency: seconds per request.
        fault_rate: share of requests given a random fault (see :func:`random_faults`).
        seed: the fault generator's seed.
    """

    def __init__(
        self,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        seed: int = 0,
        limits: RateLimits | None = None,
    ) -> None:
        args = [f"--latency={latency}", f"--fault-rate={fault_rate}", f"--seed={seed}"]
        if limits is not None:
            args += [f"--rpm={limits.rpm or 0}", f"--tpm={limits.tpm or 0}"]
            args += [f"--window={limits.window_s}"]
        super().__init__("tests.fakes.llm_server", args, stop_timeout=10)

    def stats(self) -> dict[str, Any]:
        """``{"requests": n, "faults": {kind: n}}`` so far."""
        with urllib.request.urlopen(self.url + "/_stats", timeout=10) as r:
            out: dict[str, Any] = json.loads(r.read())
        return out


def _serve_forever(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description="Run the fake LLM provider until terminated.")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rpm", type=int, default=0)
    ap.add_argument("--tpm", type=int, default=0)
    ap.add_argument("--window", type=float, default=60.0)
    a = ap.parse_args(argv)
    limits = RateLimits(a.rpm or None, a.tpm or None, a.window) if a.rpm or a.tpm else None
    srv = FakeLLMServer(latency=a.latency, limits=limits).start()
    if a.fault_rate:
        srv.fault_fn = random_faults(a.fault_rate, seed=a.seed)
    print(srv.port, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    srv.stop()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A started :class:`FakeLLMServer` answering ``meets``; stopped after the test."""
    with FakeLLMServer() as srv:
        yield srv


__all__ = [
    "FAULTS",
    "FakeLLMProcess",
    "FakeLLMServer",
    "RateLimits",
    "RecordedRequest",
    "fake_llm",
    "prompt_text",
    "random_faults",
    "schema_problem",
    "verdict_responder",
]


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    _serve_forever(sys.argv[1:])
