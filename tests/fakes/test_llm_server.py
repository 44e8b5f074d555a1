"""The fake provider server, driven by the real SDK clients over real HTTP."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import anthropic
import openai
import pytest

from tests.fakes.llm_server import FakeLLMServer, random_faults, verdict_responder


def _oa(srv: FakeLLMServer, **kw: object) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=srv.openai_base_url, api_key="sk-test", **kw)  # type: ignore[arg-type]


async def _chat(client: openai.AsyncOpenAI, text: str = "hi") -> str:
    r = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": text}]
    )
    return r.choices[0].message.content or ""


def test_openai_reply_usage_and_recording(fake_llm: FakeLLMServer) -> None:
    async def go() -> None:
        async with _oa(fake_llm) as c:
            long = "x" * 2000
            r1 = await c.chat.completions.create(
                model="m",
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": long},
                            {
                                "type": "image_url",
                                "image_url": {"url": "data:image/png;base64,AAAA"},
                            },
                        ],
                    }
                ],
            )
            r2 = await c.chat.completions.create(
                model="m", messages=[{"role": "user", "content": long + "tail"}]
            )
        assert json.loads(r1.choices[0].message.content or "")["verdict"] == "meets"
        assert r1.usage is not None and r2.usage is not None
        assert r1.usage.prompt_tokens == 500
        assert r1.usage.prompt_tokens_details is not None
        assert r1.usage.prompt_tokens_details.cached_tokens == 0
        assert r2.usage.prompt_tokens_details is not None
        assert r2.usage.prompt_tokens_details.cached_tokens == 7 * 256 // 4

    asyncio.run(go())
    parts = fake_llm.requests[0].body["messages"][0]["content"]
    assert parts[1]["type"] == "image_url"
    assert fake_llm.requests[0].protocol == "openai"


def test_anthropic_reply(fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda body: "echo:" + body["messages"][0]["content"]

    async def go() -> anthropic.types.Message:
        async with anthropic.AsyncAnthropic(
            base_url=fake_llm.anthropic_base_url, api_key="sk-ant-test"
        ) as c:
            return await c.messages.create(
                model="claude-x",
                max_tokens=50,
                system="sys",
                messages=[{"role": "user", "content": "ping"}],
            )

    msg = asyncio.run(go())
    assert msg.content[0].type == "text" and msg.content[0].text == "echo:ping"
    assert msg.usage.output_tokens >= 1
    req = fake_llm.requests[0]
    assert req.protocol == "anthropic" and "sk-ant-test" in (
        req.headers.get("x-api-key", "") + req.headers.get("authorization", "")
    )
    assert req.text == "sys\nping"


def test_retryable_faults_are_retried_by_the_sdk(fake_llm: FakeLLMServer) -> None:
    fake_llm.queue_faults("429", "500", "drop")

    async def go() -> str:
        async with _oa(fake_llm, max_retries=3) as c:
            return await _chat(c)

    assert json.loads(asyncio.run(go()))["verdict"] == "meets"
    assert [r.fault for r in fake_llm.requests] == ["429", "500", "drop", None]


def test_hang_times_out(fake_llm: FakeLLMServer) -> None:
    fake_llm.queue_faults("hang")

    async def go() -> None:
        async with _oa(fake_llm, max_retries=0, timeout=0.3) as c:
            await _chat(c)

    with pytest.raises(openai.APITimeoutError):
        asyncio.run(go())


@pytest.mark.parametrize("kind", ["bad_verdict", "prose", "malformed_json"])
def test_bad_output_faults(fake_llm: FakeLLMServer, kind: str) -> None:
    fake_llm.queue_faults(kind)

    async def go() -> str:
        async with _oa(fake_llm, max_retries=0) as c:
            return await _chat(c)

    if kind == "malformed_json":
        with pytest.raises((json.JSONDecodeError, openai.APIResponseValidationError)):
            asyncio.run(go())
    else:
        text = asyncio.run(go())
        assert "excellent" in text if kind == "bad_verdict" else not text.startswith("{")


def test_many_concurrent_slow_requests_overlap() -> None:
    with FakeLLMServer(responder=verdict_responder("missing"), latency=0.2) as srv:

        async def go() -> list[str]:
            async with _oa(srv) as c:
                return await asyncio.gather(*(_chat(c, str(i)) for i in range(200)))

        out = asyncio.run(go())
    assert len(out) == 200 and all('"missing"' in o for o in out)
    # the requests were answered concurrently, not one after another (how many overlap depends
    # on how busy the machine is, so only a clear overlap is required)
    assert srv.max_in_flight >= 20, srv.max_in_flight


def test_random_faults_rate() -> None:
    fn = random_faults(0.1, seed=3)
    from tests.fakes.llm_server import RecordedRequest

    hits = sum(fn(RecordedRequest("/v1/messages", {}, {})) is not None for _ in range(5000))
    assert 400 < hits < 600


def test_unknown_fault_rejected(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        fake_llm.queue_faults("teapot")


def test_both_sdks_wait_as_long_as_retry_after_says() -> None:
    """The SDKs' own backoff would retry after about 0.4-0.5 s; Retry-After asks for 1.2 s."""
    with FakeLLMServer(retry_after=1.2) as srv:
        srv.queue_faults("429")

        async def oa() -> None:
            async with _oa(srv, max_retries=1) as c:
                await _chat(c)

        asyncio.run(oa())
        srv.queue_faults("429")

        async def an() -> None:
            async with anthropic.AsyncAnthropic(
                base_url=srv.anthropic_base_url, api_key="k", max_retries=1
            ) as c:
                await c.messages.create(
                    model="m", max_tokens=20, messages=[{"role": "user", "content": "x"}]
                )

        asyncio.run(an())
    t = [r.received_at for r in srv.requests]
    assert [r.fault for r in srv.requests] == ["429", None, "429", None]
    assert t[1] - t[0] >= 1.2 and t[3] - t[2] >= 1.2  # lower bounds only: never flaky


_OPEN: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "string"}},
    "required": ["a"],
}


def test_structured_output_is_checked_as_the_providers_check_it(fake_llm: FakeLLMServer) -> None:
    closed: dict[str, Any] = {**_OPEN, "additionalProperties": False}
    optional: dict[str, Any] = {**closed, "properties": {**_OPEN["properties"], "b": {}}}

    async def go() -> list[str]:
        out = []
        async with _oa(fake_llm, max_retries=0) as c:
            for schema in (closed, _OPEN, optional):
                fmt: Any = {
                    "type": "json_schema",
                    "json_schema": {"name": "x", "schema": schema, "strict": True},
                }
                try:
                    await c.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": "hi"}], response_format=fmt
                    )
                    out.append("ok")
                except openai.BadRequestError as exc:
                    out.append(str(exc))
        async with anthropic.AsyncAnthropic(
            base_url=fake_llm.anthropic_base_url, api_key="sk-test", max_retries=0
        ) as a:
            for s in (optional, _OPEN):
                try:
                    await a.messages.create(
                        model="m",
                        max_tokens=16,
                        messages=[{"role": "user", "content": "hi"}],
                        output_config=cast(Any, {"format": {"type": "json_schema", "schema": s}}),
                    )
                    out.append("ok")
                except anthropic.BadRequestError as exc:
                    out.append(str(exc))
        return out

    closed_ok, open_no, optional_no, anth_optional_ok, anth_open_no = asyncio.run(go())
    assert closed_ok == "ok" and anth_optional_ok == "ok"  # Anthropic takes optional properties
    assert "'additionalProperties' must be false" in open_no
    assert "additionalProperties" in anth_open_no
    assert "'required' must list every property" in optional_no
