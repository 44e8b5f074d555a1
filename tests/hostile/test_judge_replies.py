"""Malformed provider replies are bad replies: re-asked or a recorded failure, never a crash.

Real OpenAI and Anthropic SDKs talk to the fake provider; its ``reply_hook`` breaks the body.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gamut import pipeline
from gamut.cli import main
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.pacing import BREAK_OTHER
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMServer, RecordedRequest
from tests.judge.project import RUBRICS, TOTAL_CALLS, openai_judge, write_project

QUIET = NullProgress()


def _openai_usage(value: Any) -> Any:
    def hook(req: RecordedRequest, payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "usage": value}

    return hook


def _deep(req: RecordedRequest, payload: dict[str, Any]) -> bytes:
    return b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


def _nan_tokens(req: RecordedRequest, payload: dict[str, Any]) -> bytes:
    return (
        b'{"choices": [{"message": {"content": "{}"}}], '
        b'"usage": {"prompt_tokens": NaN, "completion_tokens": 1}}'
    )


OPENAI_BODIES = {
    "string token count": _openai_usage({"prompt_tokens": "lots", "completion_tokens": 3}),
    "usage is a string": _openai_usage("none"),
    "usage is a list": _openai_usage([1, 2]),
    "negative count": _openai_usage({"prompt_tokens": -5}),
    "float count": _openai_usage({"prompt_tokens": 1.5}),
    "bool count": _openai_usage({"prompt_tokens": True}),
    "details not a mapping": _openai_usage({"prompt_tokens_details": "x"}),
    "NaN count": _nan_tokens,
    "nested 100,000 deep": _deep,
}


@pytest.mark.parametrize("case", list(OPENAI_BODIES))
def test_openai_bad_body_is_reasked_then_a_recorded_failure(
    tmp_path: Path, fake_llm: FakeLLMServer, case: str
) -> None:
    hook = OPENAI_BODIES[case]
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    fake_llm.reply_hook = hook
    report = pipeline.judge(
        Project(cfg), progress=QUIET
    )  # no traceback: every check is accounted for
    s = report.judges["gpt"]
    if case == "details not a mapping":  # harmless: the counts are still there
        assert report.ok
        return
    # every reply re-asked twice, as for any bad reply, until BREAK_OTHER of them in a row stop
    # the judge; the checks not asked stay unjudged
    assert s.judged == 0 and s.failures and len(s.failures) + s.unfinished == TOTAL_CALLS
    assert len(fake_llm.requests) == BREAK_OTHER and "cannot be read" in s.stopped
    assert all("unusable" in f.message for f in s.failures)
    # the run goes on: with a sane provider, the next run judges everything
    fake_llm.reply_hook = None
    again = pipeline.judge(Project(cfg), progress=QUIET)
    assert again.ok and again.judges["gpt"].judged == TOTAL_CALLS


def test_one_bad_body_among_good_ones_is_reasked_and_judged(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    first = {"done": False}

    def once(req: RecordedRequest, payload: dict[str, Any]) -> dict[str, Any]:
        if not first["done"]:
            first["done"] = True
            return {**payload, "usage": {"prompt_tokens": "lots"}}
        return payload

    fake_llm.reply_hook = once
    report = pipeline.judge(Project(cfg), progress=QUIET)
    assert report.ok and report.judges["gpt"].reasks == 1


def _anthropic_usage(value: Any) -> Any:
    def hook(req: RecordedRequest, payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "usage": value}

    return hook


ANTHROPIC_BODIES = {
    "string input tokens": _anthropic_usage({"input_tokens": "lots", "output_tokens": 1}),
    "usage is a string": _anthropic_usage("none"),
    "float output tokens": _anthropic_usage({"input_tokens": 1, "output_tokens": math.pi}),
    "content not a list": lambda req, p: {**p, "content": "text"},
    "text block without text": lambda req, p: {**p, "content": [{"type": "text", "text": 5}]},
    "nested 100,000 deep": lambda req, p: b'{"content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("case", list(ANTHROPIC_BODIES))
def test_anthropic_bad_body_is_a_recorded_failure(
    tmp_path: Path, fake_llm: FakeLLMServer, case: str
) -> None:
    judges = openai_judge(fake_llm.anthropic_base_url, "claude", provider="anthropic")
    cfg = load_config(write_project(tmp_path, judges))
    fake_llm.reply_hook = ANTHROPIC_BODIES[case]
    report = pipeline.judge(Project(cfg), progress=QUIET)
    s = report.judges["claude"]
    assert s.judged == 0 and s.failures and len(s.failures) + s.unfinished == TOTAL_CALLS
    assert {f.kind for f in s.failures} == {"bad_output"} and s.stopped


def _held_texts() -> list[str]:
    out = []
    for r in RUBRICS:
        for item in r["items"]:
            out += [item.get("text", ""), *item.get("members", []), *item.get("aspects", [])]
    return [t for t in out if t]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_held_rubrics_provider_errors_print_and_store_class_and_status_only(
    tmp_path: Path, fake_llm: FakeLLMServer, provider: str
) -> None:
    base = fake_llm.openai_base_url if provider == "openai" else fake_llm.anthropic_base_url
    cfg_path = write_project(
        tmp_path, openai_judge(base, provider=provider, retries=0), public=False
    )
    fake_llm.fault_fn = lambda req: "400_echo"
    result = CliRunner().invoke(main, ["judge", "--config", str(cfg_path)])
    assert result.exit_code == 1
    # the provider did quote the prompt back ...
    assert any("Identifies the dish as pad thai." in r.text for r in fake_llm.requests)
    logged = result.output + (result.stderr if result.stderr_bytes else "")
    assert "BadRequestError, HTTP 400" in logged
    stored = b"".join(  # the working index, the ledger and anything else the run wrote
        p.read_bytes()
        for p in tmp_path.rglob("*")
        if p.is_file() and not {"rubrics", "submissions"} & set(p.parts)
    )
    for text in _held_texts():  # ... yet no held text is printed or stored
        assert text not in logged, text
        assert text.encode() not in stored, text
    # a rerun (the failures are retried) prints the same, still without them
    again = CliRunner().invoke(main, ["judge", "--config", str(cfg_path)])
    assert again.exit_code == 1 and "Identifies the dish" not in again.output


def test_public_rubrics_keep_the_providers_message(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = load_config(
        write_project(tmp_path, openai_judge(fake_llm.openai_base_url, retries=0), public=True)
    )
    fake_llm.queue_faults("400_echo")
    report = pipeline.judge(Project(cfg), progress=QUIET)
    assert any("cannot process this prompt" in f.message for f in report.failures)
