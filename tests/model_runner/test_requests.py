"""What goes over the wire, through the real SDKs to the fake provider on 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import pytest

from gamut.model_runner.plan import GenerateOptions
from gamut.model_runner.runner import generate
from scoring.errors import ProblemsError
from scoring.questions import Setting
from tests.fakes.llm_server import FakeLLMServer, RecordedRequest
from tests.model_runner.project import Project, base_url

PROVIDERS = ["openai", "anthropic"]


def _options(provider: str, srv: FakeLLMServer, **kw: Any) -> GenerateOptions:
    return GenerateOptions(
        submission_id=kw.pop("sid", "test-model"),
        model="fake-model-1",
        provider=provider,
        base_url=base_url(srv, provider),  # type: ignore[arg-type]
        api_key_env="GAMUT_TEST_KEY",
        concurrency=4,
        **kw,
    )


def _image_parts(req: RecordedRequest) -> list[tuple[str, bytes]]:
    """(media type, decoded bytes) of every image in a recorded request."""
    out: list[tuple[str, bytes]] = []
    for msg in req.body["messages"]:
        content = msg["content"]
        if isinstance(content, str):
            continue
        for part in content:
            if part["type"] == "image_url":  # OpenAI: a data URL
                head, data = part["image_url"]["url"].split(",", 1)
                out.append(
                    (head.removeprefix("data:").removesuffix(";base64"), base64.b64decode(data))
                )
            elif part["type"] == "image":  # Anthropic: a base64 source block
                src = part["source"]
                assert src["type"] == "base64"
                out.append((src["media_type"], base64.b64decode(src["data"])))
    return out


def _question_of(req: RecordedRequest, project: Project) -> dict[str, Any]:
    text = req.text
    return next(
        q
        for q in project.questions
        if text.endswith(q["question"]) or text.endswith(q["text_only_question"])
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_multimodal_requests_carry_the_image_file_bytes(
    provider: str, project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    result = generate(
        project.deployment, _options(provider, server, settings=(Setting.MULTIMODAL,)), environ=env
    )
    assert result.ok and result.stats[Setting.MULTIMODAL].done == project.n_questions
    assert len(server.requests) == project.n_questions
    for req in server.requests:
        q = _question_of(req, project)
        assert req.text.endswith(q["question"])  # the multimodal form
        [(media_type, data)] = _image_parts(req)
        disk = (project.root / q["image"]).read_bytes()
        assert data == disk
        expected = "image/png" if q["image"].endswith("a.png") else None
        if expected:
            assert media_type == expected
        if q["image"].endswith("e-really-jpeg.png"):
            assert media_type == "image/jpeg"
        assert req.body["model"] == "fake-model-1"
    # One line per question, each the model's own answer.
    lines = project.lines("test-model", "multimodal")
    assert sorted(x["question_id"] for x in lines) == [q["question_id"] for q in project.questions]
    assert all(x["response"].startswith("An answer to: What is this thing") for x in lines)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_text_only_requests_carry_no_image(
    provider: str, project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    result = generate(
        project.deployment, _options(provider, server, settings=(Setting.TEXT_ONLY,)), environ=env
    )
    assert result.ok
    assert len(server.requests) == project.n_questions
    for req in server.requests:
        assert _image_parts(req) == []
        assert "base64" not in str(req.body) and "image" not in str(req.body)
        q = _question_of(req, project)
        assert req.text.endswith(q["text_only_question"])
    assert not (project.folder("test-model") / "multimodal.jsonl").exists()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_system_prompt_and_decoding_are_sent(
    provider: str, project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    opts = _options(
        provider,
        server,
        settings=(Setting.TEXT_ONLY,),
        limit=2,
        system_prompt="Answer thoroughly.",
        temperature=None if provider == "anthropic" else 0.3,
        max_tokens=321,
    )
    assert generate(project.deployment, opts, environ=env).ok
    for req in server.requests:
        body = req.body
        if provider == "anthropic":
            assert body["max_tokens"] == 321
            assert body["system"] == "Answer thoroughly."
            assert "temperature" not in body  # the Messages API takes no sampling parameters
        else:  # OpenAI's current name (its reasoning models refuse max_tokens)
            assert body["max_completion_tokens"] == 321 and "max_tokens" not in body
            assert body["temperature"] == 0.3
            assert body["messages"][0] == {"role": "system", "content": "Answer thoroughly."}
        assert req.headers.get("authorization", req.headers.get("x-api-key", "")).endswith(
            env["GAMUT_TEST_KEY"]
        )
    meta = (project.folder("test-model") / "submission.yaml").read_text(encoding="utf-8")
    digest = hashlib.sha256(b"Answer thoroughly.").hexdigest()
    assert f"sha256:{digest}" in meta
    assert "Answer thoroughly." not in meta
    decoding = "provider default" if provider == "anthropic" else "0.3"
    assert f'decoding: "temperature {decoding}, max 321 tokens"' in meta


def test_max_tokens_param_sends_the_old_name_and_anthropic_refuses_it(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    """For a server that knows only ``max_tokens`` (as the judge's ``max_tokens_param``)."""
    opts = _options(
        "openai",
        server,
        settings=(Setting.TEXT_ONLY,),
        limit=2,
        max_tokens=77,
        max_tokens_param="max_tokens",
    )
    assert generate(project.deployment, opts, environ=env).ok
    assert len(server.requests) == 2
    for req in server.requests:
        assert req.body["max_tokens"] == 77 and "max_completion_tokens" not in req.body
    server.reset()
    bad = _options("anthropic", server, sid="other", max_tokens_param="max_tokens")
    with pytest.raises(ProblemsError, match="--max-tokens-param") as err:
        generate(project.deployment, bad, environ=env)
    assert "drop --max-tokens-param for --provider anthropic" in str(err.value)
    assert server.requests == []


def test_chat_completions_default_to_temperature_0_and_anthropic_refuses_one(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    opts = _options("openai", server, settings=(Setting.TEXT_ONLY,), limit=1)
    assert generate(project.deployment, opts, environ=env).ok
    assert server.requests[0].body["temperature"] == 0.0
    server.reset()
    bad = _options("anthropic", server, sid="other", temperature=0.5)
    with pytest.raises(ProblemsError, match="takes no sampling parameters"):
        generate(project.deployment, bad, environ=env)
    assert server.requests == []


def test_an_image_url_is_passed_as_a_url(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    qs = project.questions
    qs[0]["image"] = "https://images.example.org/dish.jpg"
    (project.root / "questions.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8"
    )
    for provider in PROVIDERS:
        server.reset()
        opts = _options(
            provider, server, sid=f"url-{provider}", settings=(Setting.MULTIMODAL,), limit=1
        )
        assert generate(project.deployment, opts, environ=env).ok
        content = server.requests[0].body["messages"][-1]["content"]
        if provider == "anthropic":
            assert content[0] == {
                "type": "image",
                "source": {"type": "url", "url": "https://images.example.org/dish.jpg"},
            }
        else:
            assert content[0] == {
                "type": "image_url",
                "image_url": {"url": "https://images.example.org/dish.jpg"},
            }


def test_limit_and_resume_skip_answered_questions(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    r1 = generate(project.deployment, _options("openai", server, limit=3), environ=env)
    assert r1.ok and len(server.requests) == 6
    server.reset()
    r2 = generate(project.deployment, _options("openai", server), environ=env)
    assert r2.ok and len(server.requests) == 2 * (project.n_questions - 3)
    assert r2.stats[Setting.TEXT_ONLY].skipped == 3
    for setting in ("multimodal", "text_only"):
        ids = [x["question_id"] for x in project.lines("test-model", setting)]
        assert sorted(ids) == [q["question_id"] for q in project.questions]
    server.reset()
    r3 = generate(project.deployment, _options("openai", server), environ=env)
    assert r3.ok and server.requests == []
