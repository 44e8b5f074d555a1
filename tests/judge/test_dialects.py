"""Request dialects: each server gets structured output and the token limit in the shape its own
request definitions accept, in direct and in exported batch bodies.

The definitions below restate, as small validators, the request models of the versions
followed:

- OpenAI's chat completions ``response_format`` ``json_schema`` (``name``, ``strict``,
  ``schema``), which vLLM reads as ``JSONSchemaResponseFormat`` (vllm-project/vllm
  ``vllm/entrypoints/openai/engine/protocol.py``, ``chat_completion/protocol.py`` at commit
  d5dba2d7: ``max_tokens`` and ``max_completion_tokens`` both read);
- llama-cpp-python 0.3.36 ``llama_cpp/llama_types.py`` ``ChatCompletionRequestResponseFormat``
  (``type`` is ``text`` or ``json_object``, optional ``schema``) and
  ``llama_cpp/server/types.py`` ``CreateChatCompletionRequest`` (``max_tokens`` only);
- Text Generation Inference v3.3.7 ``router/src/lib.rs`` ``GrammarType`` (``#[serde(tag =
  "type", content = "value")]``: ``json`` alias ``json_object``, ``regex``, ``json_schema``
  whose value holds ``name`` and ``schema``); ``max_tokens`` (alias ``max_completion_tokens``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from scoring.judge.backends import JudgeRequest, says_invalid_request
from scoring.judge.openai_backend import chat_body
from scoring.judge.preflight import request
from scoring.judge.prompt import REPLY_SCHEMA, load_template
from scoring.judge.spec import JudgeConfig


def openai_problem(rf: dict[str, Any]) -> str | None:
    """What OpenAI (and vLLM's JSONSchemaResponseFormat) would refuse in ``response_format``."""
    if rf.get("type") not in ("text", "json_object", "json_schema"):
        return "type"
    js = rf.get("json_schema")
    if rf["type"] == "json_schema" and not (
        isinstance(js, dict) and js.get("name") and isinstance(js.get("schema"), dict)
    ):
        return "json_schema.name/schema"
    return None


def llama_cpp_python_problem(rf: dict[str, Any]) -> str | None:
    """llama-cpp-python 0.3.36: ``type`` in {text, json_object}; ``schema`` optional."""
    if rf.get("type") not in ("text", "json_object"):
        return "literal_error: type"
    return None


def tgi_problem(rf: dict[str, Any]) -> str | None:
    """TGI 3.3.7's GrammarType: an adjacently tagged enum, content under ``value``."""
    kind = rf.get("type")
    if kind not in ("json", "json_object", "regex", "json_schema"):
        return "unknown variant"
    if "value" not in rf:
        return "missing field `value`"
    if kind == "json_schema" and not isinstance(rf["value"].get("schema"), dict):
        return "json_schema: missing field `schema`"
    return None


CHECKERS = {
    "openai": openai_problem,
    "llama-cpp-python": llama_cpp_python_problem,
    "tgi": tgi_problem,
}
#: The token-limit names each server reads.
READS = {
    "openai": {"max_completion_tokens", "max_tokens"},
    "llama-cpp-python": {"max_tokens"},
    "tgi": {"max_tokens"},
}


def _judge(**kw: Any) -> JudgeConfig:
    return JudgeConfig(provider="openai", model="m", family="f", **kw)


def _request() -> JudgeRequest:
    return request(load_template("v1"))


@pytest.mark.parametrize("dialect", sorted(CHECKERS))
def test_each_dialect_sends_a_body_its_server_accepts_and_the_others_may_not(
    dialect: str,
) -> None:
    body = chat_body(_judge(dialect=dialect, max_tokens=77), _request())
    rf = body["response_format"]
    assert CHECKERS[dialect](rf) is None, rf
    schema = rf.get("json_schema", {}).get("schema") or rf.get("schema") or rf.get("value")
    assert schema == REPLY_SCHEMA
    limit = {"max_tokens", "max_completion_tokens"} & set(body)
    assert len(limit) == 1 and limit <= READS[dialect] and body[limit.pop()] == 77
    # OpenAI's shape is what the other two servers refuse (why the dialects exist)
    openai_rf = chat_body(_judge(), _request())["response_format"]
    if dialect != "openai":
        assert CHECKERS[dialect](openai_rf) is not None


def test_without_structured_output_no_dialect_adds_a_response_format() -> None:
    for dialect in CHECKERS:
        body = chat_body(_judge(dialect=dialect, structured_output=False), _request())
        assert "response_format" not in body


def test_the_config_refuses_what_a_dialect_cannot_honour_by_name() -> None:
    with pytest.raises(ValidationError, match="reads max_tokens only"):
        _judge(dialect="llama-cpp-python", max_tokens_param="max_completion_tokens")
    with pytest.raises(ValidationError, match="'dialect' applies to OpenAI-compatible"):
        JudgeConfig(provider="anthropic", model="m", family="f", dialect="tgi")
    with pytest.raises(ValidationError, match="dialect"):
        _judge(dialect="vllm")
    # TGI 3.3 reads either name: an explicit choice stands
    assert _judge(dialect="tgi", max_tokens_param="max_completion_tokens").token_limit_key == (
        "max_completion_tokens"
    )
    assert _judge().token_limit_key == "max_completion_tokens"


def test_the_dialect_is_not_part_of_the_judges_identity(tmp_path: Path) -> None:
    from gamut.config import load_config
    from gamut.project import Project
    from tests.judge.project import openai_judge, write_project

    ids = []
    for extra in ("", 'dialect = "llama-cpp-python"', 'dialect = "tgi"'):
        cfg = write_project(
            tmp_path / str(len(ids)), openai_judge("http://127.0.0.1:9", extra=extra)
        )
        (judge,) = Project(load_config(cfg)).judges(need_keys=False)
        ids.append(judge.identity)
    assert len(set(ids)) == 1


@pytest.mark.parametrize(
    ("body", "invalid"),
    [
        ('{"error": {"message": "[{\'type\': \'literal_error\', ...}]"}}', True),
        ('{"error": {"type": "invalid_request_error", "message": "bad"}}', True),
        ("Failed to deserialize the JSON body into the target type: missing field `value`", True),
        ("Unsupported parameter: 'max_tokens' is not supported with this model.", True),
        ('{"error": {"type": "api_error", "message": "boom"}}', False),
        ("upstream connect error or disconnect/reset before headers", False),
    ],
)
def test_an_error_body_that_says_the_request_is_invalid_is_recognised(
    body: str, invalid: bool
) -> None:
    assert says_invalid_request(body) is invalid
