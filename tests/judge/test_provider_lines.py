"""Batch result lines in the providers' own shapes (tests/judge/fixtures/providers/, README there):
each fixture line is accepted by the provider SDK's own types, the fake batch server writes lines
those types accept too (so the other batch tests run on real shapes), and the project's parsers
read each fixture line as the provider means it: a verdict with its tokens, a final refusal, a
transient failure asked again, a request never run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types.messages import (
    MessageBatchErroredResult,
    MessageBatchIndividualResponse,
    MessageBatchSucceededResult,
)
from openai.types.chat import ChatCompletion
from openai.types.shared import ErrorObject
from pydantic import BaseModel, ConfigDict

from scoring.judge.anthropic_backend import parse_batch_result
from scoring.judge.batch.openai_lines import parse_result_line, request_line
from tests.fakes.batch_server import FakeBatchServer

FIXTURES = Path(__file__).parent / "fixtures" / "providers"
REPLY = json.dumps({"verdict": "partially_meets", "rationale": "Names the dish only."})
HELD_TEXT = "fact): Identifies the dish as pad thai"


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")
    status_code: int
    request_id: str
    body: dict[str, Any] | None


class _LineError(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str | None
    message: str | None


class _BatchRequestOutput(BaseModel):
    """OpenAI's ``BatchRequestOutput`` (the API reference's per-line object of the batch output
    and error files); extra fields are refused, so a fake that drifts is caught."""

    model_config = ConfigDict(extra="forbid")
    id: str
    custom_id: str
    response: _Response | None
    error: _LineError | None


def _lines(name: str, cid: str = "q1-abc") -> list[tuple[str, Any]]:
    out = []
    for raw in (FIXTURES / name).read_text().splitlines():
        raw = raw.replace("CUSTOM_ID", cid).replace("QUOTED", HELD_TEXT)
        raw = raw.replace('"REPLY"', json.dumps(REPLY))
        out.append((raw, json.loads(raw)))
    return out


def _check_openai_line(obj: dict[str, Any]) -> None:
    line = _BatchRequestOutput.model_validate(obj)
    if line.response is None:
        assert line.error is not None and line.error.code
        return
    assert line.response.body is not None
    if line.response.status_code == 200:
        ChatCompletion.model_validate(line.response.body)
    else:
        assert set(line.response.body) == {"error"}
        ErrorObject.model_validate(line.response.body["error"])


def _check_anthropic_line(obj: dict[str, Any]) -> MessageBatchIndividualResponse:
    return MessageBatchIndividualResponse.model_validate(obj)


def test_fixture_lines_are_in_the_sdks_own_shapes() -> None:
    for _, obj in _lines("openai_batch.jsonl"):
        _check_openai_line(obj)
    kinds = [_check_anthropic_line(obj).result for _, obj in _lines("anthropic_batch.jsonl")]
    assert isinstance(kinds[0], MessageBatchSucceededResult)
    assert isinstance(kinds[1], MessageBatchErroredResult)
    assert [k.type for k in kinds] == ["succeeded", "errored", "errored", "canceled", "expired"]


def test_a_drifted_line_is_refused_by_the_shape_check() -> None:
    """The shape checks above can fail: a line with a renamed field does not pass."""
    _, obj = _lines("openai_batch.jsonl")[0]
    obj["response"]["status"] = obj["response"].pop("status_code")
    with pytest.raises(ValueError):
        _check_openai_line(obj)
    _, aobj = _lines("anthropic_batch.jsonl")[0]
    aobj["result"]["type"] = "success"
    with pytest.raises(ValueError):
        _check_anthropic_line(aobj)


def test_openai_fixture_lines_are_read_as_openai_means_them() -> None:
    parsed = [parse_result_line(obj, raw, str) for raw, obj in _lines("openai_batch.jsonl")]
    ok = parsed[0].completion
    assert ok is not None and json.loads(ok.text)["verdict"] == "partially_meets"
    assert (ok.tokens_in, ok.tokens_cached, ok.tokens_out) == (1234, 1024, 56)
    assert ok.model == "gpt-5-2025-08-07"
    assert [r.error_kind for r in parsed[1:]] == ["rejected", "api_error", "expired", "canceled"]
    assert "usage policy" in parsed[1].message
    held = [parse_result_line(o, r, str, held=True) for r, o in _lines("openai_batch.jsonl")]
    assert all(HELD_TEXT not in r.message for r in held)
    assert "400" in held[1].message


def test_anthropic_fixture_lines_are_read_as_anthropic_means_them() -> None:
    parsed = [parse_batch_result(obj, raw, str) for raw, obj in _lines("anthropic_batch.jsonl")]
    ok = parsed[0].completion
    assert ok is not None and json.loads(ok.text)["verdict"] == "partially_meets"
    assert ok.tokens_cached == 1024 and ok.tokens_out == 56
    assert ok.tokens_in == 210 + 1024  # Anthropic counts cache reads apart from input_tokens
    assert [r.error_kind for r in parsed[1:]] == ["rejected", "api_error", "canceled", "expired"]
    assert HELD_TEXT in parsed[1].message
    held = [parse_batch_result(o, r, str, held=True) for r, o in _lines("anthropic_batch.jsonl")]
    assert all(HELD_TEXT not in r.message for r in held)
    assert "invalid_request_error" in held[1].message


FAULTS = {"c-0": None, "c-1": "400", "c-2": "500"}


def _wait(get: Any, done: tuple[str, ...]) -> Any:
    for _ in range(100):
        b = get()
        if b.processing_status in done if hasattr(b, "processing_status") else b.status in done:
            return b
        time.sleep(0.05)
    raise AssertionError("the fake batch never finished")


def test_the_fake_servers_lines_are_in_the_same_shapes() -> None:
    body = {"model": "gpt-5", "messages": [{"role": "user", "content": f"({HELD_TEXT})"}]}
    srv = FakeBatchServer(responder=lambda b: REPLY)
    with srv:
        srv.line_fault_fn = lambda cid, b: FAULTS.get(cid)
        oa = openai.OpenAI(base_url=srv.openai_base_url, api_key="sk-test")
        data = b"".join(request_line(cid, body) + b"\n" for cid in FAULTS)
        f = oa.files.create(file=("in.jsonl", data), purpose="batch")
        b = oa.batches.create(
            input_file_id=f.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        b = _wait(lambda: oa.batches.retrieve(b.id), ("completed",))
        text = oa.files.content(b.output_file_id).text + oa.files.content(b.error_file_id).text
        lines = [json.loads(x) for x in text.splitlines() if x.strip()]
        assert sorted(x["custom_id"] for x in lines) == sorted(FAULTS)
        for obj in lines:
            _check_openai_line(obj)

        an = anthropic.Anthropic(base_url=srv.anthropic_base_url, api_key="sk-test")
        params = {"model": "claude", "max_tokens": 64, "messages": body["messages"]}
        mb = an.messages.batches.create(
            requests=[{"custom_id": cid, "params": params} for cid in FAULTS]  # type: ignore[typeddict-item]
        )
        _wait(lambda: an.messages.batches.retrieve(mb.id), ("ended",))
        with an.messages.batches.with_streaming_response.results(mb.id) as resp:
            alines = [json.loads(x) for x in resp.iter_lines() if x.strip()]
        kinds = {x["custom_id"]: _check_anthropic_line(x).result.type for x in alines}
        assert kinds == {"c-0": "succeeded", "c-1": "errored", "c-2": "errored"}
