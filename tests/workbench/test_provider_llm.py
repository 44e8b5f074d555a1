"""`gamut-workbench build` LLM steps answered by a configured judge's model: the real OpenAI and
Anthropic SDKs against the fake provider on 127.0.0.1, through the command line."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import anthropic
import pytest
from click.testing import CliRunner

from scoring.judge.generation import strict_schema
from tests.fakes.llm_server import FakeLLMServer, fake_llm, prompt_text
from tests.judge.project import openai_judge
from tests.workbench.helpers import write_config
from workbench.cli import main
from workbench.demo import DEMO_IMAGES, demo_data
from workbench.llm import SCHEMA_INSTRUCTION, load_template, reply_schema
from workbench.questions import Proposal

__all__ = ["fake_llm"]

KEY = "sk-workbench-not-a-real-key"


def _project(tmp_path: Path, judges: str) -> str:
    cfg = write_config(tmp_path)
    cfg.write_text(cfg.read_text(encoding="utf-8") + "\n" + judges, encoding="utf-8")
    (tmp_path / "images").mkdir()
    for f in DEMO_IMAGES.glob("img-*-000[12].png"):
        shutil.copy(f, tmp_path / "images")
    shutil.copy(demo_data() / "manifest.csv", tmp_path / "manifest.csv")
    result = CliRunner().invoke(
        main, ["build", "images", str(tmp_path / "manifest.csv"), "--config", str(cfg)]
    )
    assert result.exit_code == 0, result.output
    return str(cfg)


def _proposals(body: dict[str, Any]) -> str:
    return json.dumps(
        {
            "questions": [
                {"question": f"How is this grown? ({i})", "text_only_question": f"How? ({i})"}
                for i in range(2)
            ]
        }
    )


def _image(body: dict[str, Any], provider: str) -> tuple[str, bytes]:
    """(media type, bytes) of the image a request carries."""
    part = body["messages"][-1]["content"][0]
    if provider == "openai":
        head, _, data = part["image_url"]["url"].partition(";base64,")
        return head.removeprefix("data:"), base64.b64decode(data)
    return part["source"]["media_type"], base64.b64decode(part["source"]["data"])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_propose_asks_the_primary_judges_model(
    tmp_path: Path, fake_llm: FakeLLMServer, provider: str
) -> None:
    base = fake_llm.openai_base_url if provider == "openai" else fake_llm.anthropic_base_url
    other = openai_judge("http://127.0.0.1:9/v1", name="other", primary=False)
    cfg = _project(tmp_path, other + openai_judge(base, provider=provider, retries=0))
    fake_llm.responder = _proposals
    result = CliRunner().invoke(
        main,
        ["build", "propose", "--per-image", "2", "--config", cfg],
        env={"GAMUT_TEST_KEY": KEY},
    )
    assert result.exit_code == 0, result.output
    assert "proposed candidates for 4 image(s)" in result.output
    assert KEY not in result.output
    template = load_template("propose_v1")
    images = {f.read_bytes() for f in (tmp_path / "images").iterdir()}
    strict = strict_schema(reply_schema(Proposal))
    assert len(fake_llm.requests) == 4  # one per image, all to the primary judge
    for req in fake_llm.requests:
        assert req.protocol == provider
        assert req.body["model"] == "judge-model"
        # the schema goes natively, as the provider defines structured output, not in the text
        if provider == "openai":
            assert req.body["response_format"] == {
                "type": "json_schema",
                "json_schema": {"name": "propose_v1", "schema": strict, "strict": True},
            }
            assert "output_config" not in req.body
        else:
            fmt = req.body["output_config"]["format"]
            assert fmt == {"type": "json_schema", "schema": anthropic.transform_schema(strict)}
            assert "response_format" not in req.body
        assert SCHEMA_INSTRUCTION not in req.text and '"$defs"' not in req.text
        assert req.text.startswith(template.system)
        assert "Write 2 candidate questions." in req.text and "(none)" in req.text
        assert KEY in (req.headers.get("x-api-key") or req.headers["authorization"])
        media_type, data = _image(req.body, provider)
        assert media_type == "image/png" and data in images
    entities = {"Monstera deliciosa", "pad thai"}
    assert entities <= {e for e in entities for r in fake_llm.requests if e in r.text}
    cands = json.loads((tmp_path / "wb" / "candidates.json").read_text(encoding="utf-8"))
    assert len(cands) == 8
    assert {c["question"] for c in cands.values()} == {f"How is this grown? ({i})" for i in (0, 1)}
    assert {c["state"] for c in cands.values()} == {"in_review"}


def test_a_named_judge_answers(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    dead = openai_judge("http://127.0.0.1:9/v1", name="dead")
    base = fake_llm.anthropic_base_url
    claude = openai_judge(base, "claude", primary=False, provider="anthropic")
    cfg = _project(tmp_path, dead + claude)
    fake_llm.responder = _proposals
    result = CliRunner().invoke(
        main,
        ["build", "propose", "--per-image", "2", "--judge", "claude", "--config", cfg],
        env={"GAMUT_TEST_KEY": KEY},
    )
    assert result.exit_code == 0, result.output
    assert {r.protocol for r in fake_llm.requests} == {"anthropic"}


def test_a_missing_key_names_the_variable_and_sends_nothing(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = _project(tmp_path, openai_judge(fake_llm.openai_base_url))
    result = CliRunner().invoke(
        main,
        ["build", "propose", "--per-image", "2", "--config", cfg],
        env={"GAMUT_TEST_KEY": None},
    )
    assert result.exit_code == 1, result.output
    assert "environment variable GAMUT_TEST_KEY" in result.output
    assert "--replay" in result.output
    assert fake_llm.requests == []
    assert not (tmp_path / "wb" / "candidates.json").exists()


def test_an_unknown_judge_or_none_configured_is_a_usage_error(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = _project(tmp_path, openai_judge(fake_llm.openai_base_url))
    result = CliRunner().invoke(
        main, ["build", "guard", "--judge", "nope", "--config", cfg], env={"GAMUT_TEST_KEY": KEY}
    )
    assert result.exit_code == 2 and "--judge nope: no such judge" in result.output
    assert "(one of gpt)" in result.output
    replay = str(demo_data() / "llm.jsonl")
    both = ["build", "guard", "--judge", "gpt", "--replay", replay, "--config", cfg]
    result = CliRunner().invoke(main, both)
    assert result.exit_code == 2 and "not both" in result.output
    (tmp_path / "bare").mkdir()
    bare = write_config(tmp_path / "bare")  # no judges
    result = CliRunner().invoke(main, ["build", "draft", "--config", str(bare)])
    assert result.exit_code == 2 and "give --replay FILE" in result.output
    assert fake_llm.requests == []


def test_a_failed_call_names_its_class_not_the_providers_text(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = _project(tmp_path, openai_judge(fake_llm.openai_base_url, retries=0))
    fake_llm.fault_fn = lambda req: "400_echo"
    result = CliRunner().invoke(
        main,
        ["build", "propose", "--per-image", "2", "--config", cfg],
        env={"GAMUT_TEST_KEY": KEY},
    )
    assert result.exit_code == 1, result.output
    assert "BadRequestError: HTTP 400" in result.output and "propose_v1" in result.output
    (sent,) = fake_llm.requests  # the first failure ends the step (it resumes)
    assert "Write 2 candidate questions." in sent.text  # the provider quoted it back ...
    assert "candidate questions" not in result.output and "Domain:" not in result.output


def test_a_fenced_reply_is_read_and_prose_is_refused(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = _project(tmp_path, openai_judge(fake_llm.openai_base_url, retries=0))
    args = ["build", "propose", "--per-image", "2", "--config", cfg]
    fake_llm.queue_faults("prose")
    result = CliRunner().invoke(main, args, env={"GAMUT_TEST_KEY": KEY})
    assert result.exit_code == 1, result.output
    assert "propose_v1 reply for " in result.output and "not JSON" in result.output
    assert not (tmp_path / "wb" / "candidates.json").exists()
    fake_llm.responder = lambda body: f"```json\n{_proposals(body)}\n```"
    result = CliRunner().invoke(main, args, env={"GAMUT_TEST_KEY": KEY})
    assert result.exit_code == 0, result.output
    cands = json.loads((tmp_path / "wb" / "candidates.json").read_text(encoding="utf-8"))
    assert len(cands) == 8


def test_without_structured_output_the_schema_ends_the_prompt(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    judge = openai_judge(fake_llm.openai_base_url, retries=0, extra="structured_output = false")
    cfg = _project(tmp_path, judge)
    fake_llm.responder = _proposals
    result = CliRunner().invoke(
        main, ["build", "propose", "--per-image", "2", "--config", cfg], env={"GAMUT_TEST_KEY": KEY}
    )
    assert result.exit_code == 0, result.output
    schema = json.dumps(reply_schema(Proposal))
    assert len(fake_llm.requests) == 4
    for req in fake_llm.requests:
        assert "response_format" not in req.body
        assert req.text.endswith(SCHEMA_INSTRUCTION + schema)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reply_off_the_schema_is_repaired_once(
    tmp_path: Path, fake_llm: FakeLLMServer, provider: str
) -> None:
    base = fake_llm.openai_base_url if provider == "openai" else fake_llm.anthropic_base_url
    cfg = _project(tmp_path, openai_judge(base, provider=provider, retries=0))
    bad = json.dumps({"questions": [{"question": "What is it?"}]})  # no text-only form

    def answer(body: dict[str, Any]) -> str:
        repair = "Your previous reply:" in prompt_text(body)
        return _proposals(body) if repair and "Domain: food" not in prompt_text(body) else bad

    fake_llm.responder = answer
    args = ["build", "propose", "--per-image", "2", "--config", cfg]
    result = CliRunner().invoke(main, args, env={"GAMUT_TEST_KEY": KEY})
    # the food image's repair is refused again: the step stops there (it resumes)
    assert result.exit_code == 1, result.output
    assert "(and its repair): questions.0.text_only_question: Field required" in result.output
    firsts = [r for r in fake_llm.requests if "Your previous reply:" not in r.text]
    repairs = [r for r in fake_llm.requests if "Your previous reply:" in r.text]
    assert len(repairs) == len(firsts) >= 2  # one repair per refused reply, never two
    for first, rep in zip(firsts, repairs, strict=True):
        system = load_template("propose_v1").system
        assert rep.text.startswith(system)  # the same system prompt and request ...
        assert first.text.removeprefix(system).strip() in rep.text
        assert "- questions.0.text_only_question: Field required" in rep.text  # ... the problems
        assert bad in rep.text and _image(rep.body, provider) == _image(first.body, provider)
        if provider == "openai":
            fmt = rep.body["response_format"]["json_schema"]
            assert fmt["schema"] == first.body["response_format"]["json_schema"]["schema"]
        assert rep.body.get("output_config") == first.body.get("output_config")


def test_strict_schema_closes_every_object_and_requires_every_property() -> None:
    from workbench.questions import GuardReply

    strict = strict_schema(reply_schema(GuardReply))
    check = strict["$defs"]["GuardCheck"]
    assert check["additionalProperties"] is False
    assert check["required"] == ["candidate_id", "passes", "failed_requirement", "boilerplate"]
    assert "default" not in json.dumps(strict) and "title" not in json.dumps(strict)
    assert strict["required"] == ["checks", "selected", "new_candidates"]
    q = strict["$defs"]["ProposedQuestion"]["properties"]["question"]
    assert "minLength" not in q and "(minLength: 1)" in q["description"]  # stated, not enforced
    assert reply_schema(GuardReply)["required"] == ["checks", "selected"]  # the input unchanged


def test_live_calls_record_tokens_and_cost_per_step(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    prices = "price_in_per_mtok = 2.0\nprice_out_per_mtok = 8.0\n"
    cfg = _project(tmp_path, openai_judge(fake_llm.openai_base_url, retries=0, extra=prices))
    fake_llm.responder = _proposals
    for _ in range(2):  # the second run has nothing to propose: no request, nothing added
        result = CliRunner().invoke(
            main,
            ["build", "propose", "--per-image", "2", "--config", cfg],
            env={"GAMUT_TEST_KEY": KEY},
        )
        assert result.exit_code == 0, result.output
    # the fake's usage: a token per 4 bytes of prompt text (images not counted), and of reply
    tin = sum(max(1, len(r.text.encode()) // 4) for r in fake_llm.requests)
    tout = len(fake_llm.requests) * max(1, len(_proposals({})) // 4)
    result = CliRunner().invoke(main, ["build", "status", "--json", "--config", cfg])
    row = json.loads(result.output)["llm_usage"]["propose"]["direct"]
    assert (row["requests"], row["tokens_in"], row["tokens_out"]) == (4, tin, tout)
    assert row["cost_usd"] == pytest.approx((tin * 2.0 + tout * 8.0) / 1e6)
    assert row["judges"] == ["gpt"]
    result = CliRunner().invoke(main, ["build", "status", "--config", cfg])
    assert f"propose direct: 4 requests, {tin:,} tokens in (0 cached), {tout:,} out" in (
        result.output
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_each_step_has_its_own_output_token_limit(
    tmp_path: Path, fake_llm: FakeLLMServer, provider: str
) -> None:
    base = fake_llm.openai_base_url if provider == "openai" else fake_llm.anthropic_base_url
    cfg = _project(tmp_path, openai_judge(base, provider=provider, retries=0))
    fake_llm.responder = _proposals
    args = ["build", "propose", "--per-image", "2", "--config", cfg]
    result = CliRunner().invoke(main, args, env={"GAMUT_TEST_KEY": KEY})
    assert result.exit_code == 0, result.output
    # the [workbench] default, not the judge's max_tokens (400, sized for verdicts)
    assert {r.token_limit for r in fake_llm.requests} == {2048}
    text = Path(cfg).read_text(encoding="utf-8")
    Path(cfg).write_text(
        text.replace('dir = "wb"\n', 'dir = "wb"\npropose_max_tokens = 3000\n'), encoding="utf-8"
    )
    (tmp_path / "wb" / "candidates.json").unlink()
    fake_llm.reset()
    result = CliRunner().invoke(main, args, env={"GAMUT_TEST_KEY": KEY})
    assert result.exit_code == 0, result.output
    assert {r.token_limit for r in fake_llm.requests} == {3000}
