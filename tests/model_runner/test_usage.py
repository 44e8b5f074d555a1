"""`gamut generate` records each response's tokens in its line's optional ``usage`` when the
provider reports them, and writes no usage when it does not (no invented zeros)."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from gamut.model_runner.plan import GenerateOptions
from gamut.model_runner.runner import generate
from scoring.questions import Setting
from scoring.submissions import Limits
from scoring.submissions.responses import read_response_file
from tests.fakes.llm_server import FakeLLMServer
from tests.model_runner.project import Project, base_url

Provider = Literal["openai", "anthropic"]


def _options(provider: Provider, srv: FakeLLMServer) -> GenerateOptions:
    return GenerateOptions(
        submission_id="test-model",
        model="fake-model-1",
        provider=provider,
        base_url=base_url(srv, provider),
        api_key_env="GAMUT_TEST_KEY",
        concurrency=4,
        settings=(Setting.TEXT_ONLY,),
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_each_line_records_the_reported_tokens(
    provider: Provider, project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    result = generate(project.deployment, _options(provider, server), environ=env)
    stats = result.stats[Setting.TEXT_ONLY]
    lines = project.lines("test-model", "text_only")
    assert result.ok and len(lines) == project.n_questions
    assert all(set(x["usage"]) == {"input_tokens", "output_tokens"} for x in lines)
    assert sum(x["usage"]["input_tokens"] for x in lines) == stats.input_tokens > 0
    assert sum(x["usage"]["output_tokens"] for x in lines) == stats.output_tokens > 0
    path = project.folder("test-model") / "text_only.jsonl"
    read = read_response_file(path, "text_only.jsonl", "text_only", None, Limits())
    assert read.problems == []  # the validator's reader accepts the lines it writes
    assert {r.usage for r in read.responses.values()} == {
        (x["usage"]["input_tokens"], x["usage"]["output_tokens"]) for x in lines
    }


def test_a_reply_without_usage_records_none(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    def no_usage(_req: object, payload: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in payload.items() if k != "usage"}

    server.reply_hook = no_usage
    result = generate(project.deployment, _options("openai", server), environ=env)
    lines = project.lines("test-model", "text_only")
    assert result.ok and len(lines) == project.n_questions
    assert all("usage" not in x for x in lines)
