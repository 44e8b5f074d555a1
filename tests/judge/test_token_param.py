"""The output-token limit goes under the name the endpoint expects: ``max_completion_tokens``
by default (OpenAI's current name; its reasoning models refuse ``max_tokens``), ``max_tokens``
when the judge says so, in direct and batch bodies; the fakes read either."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.pacing import BREAK_REJECTED
from scoring.judge.progress import NullProgress
from scoring.judge.spec import JudgeConfig
from tests.fakes.batch_server import FakeBatchServer
from tests.fakes.llm_server import FakeLLMServer, token_limit
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project
from tests.judge.test_batch import batch_judge

QUIET = NullProgress()
REASONING = ("max_completion_tokens",)  # what OpenAI's reasoning models accept


def test_by_default_the_limit_is_max_completion_tokens_which_a_reasoning_model_takes(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.token_params = REASONING
    cfg = write_project(tmp_path, openai_judge(fake_llm.openai_base_url, extra="max_tokens = 321"))
    report = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
    assert report.ok and report.judges["gpt"].judged == TOTAL_CALLS
    assert len(fake_llm.requests) == TOTAL_CALLS
    for r in fake_llm.requests:
        assert r.body["max_completion_tokens"] == 321 and "max_tokens" not in r.body
        assert r.token_limit == 321


def test_max_tokens_param_sends_the_old_name_which_vllm_reads(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    extra = 'max_tokens = 123\nmax_tokens_param = "max_tokens"'
    cfg = write_project(tmp_path, openai_judge(fake_llm.openai_base_url, extra=extra))
    report = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
    assert report.ok and report.judges["gpt"].judged == TOTAL_CALLS
    for r in fake_llm.requests:
        assert r.body["max_tokens"] == 123 and "max_completion_tokens" not in r.body
        assert r.token_limit == 123


def test_the_old_name_sent_to_a_reasoning_model_is_refused_not_retried(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.token_params = REASONING
    extra = 'max_tokens_param = "max_tokens"'
    cfg = write_project(tmp_path, openai_judge(fake_llm.openai_base_url, extra=extra))
    report = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
    s = report.judges["gpt"]
    assert not report.ok and s.judged == 0
    # a 400 is final, and BREAK_REJECTED of them in a row stop the judge, naming the parameter
    assert len(fake_llm.requests) == BREAK_REJECTED
    assert "'max_tokens'" in s.stopped and s.unfinished == TOTAL_CALLS - BREAK_REJECTED


@pytest.mark.parametrize(
    ("param", "key"),
    [(None, "max_completion_tokens"), ('"max_tokens"', "max_tokens")],
    ids=["default", "max_tokens"],
)
def test_batch_bodies_carry_the_same_name(
    tmp_path: Path, batch_srv: FakeBatchServer, param: str | None, key: str
) -> None:
    kw = {"max_tokens": "222"} | ({"max_tokens_param": param} if param else {})
    cfg = write_project(tmp_path, batch_judge(batch_srv, **kw))
    first = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
    assert first.judges["gpt"].submitted == TOTAL_CALLS
    bodies = [body for _, body in batch_srv.bodies()]
    assert len(bodies) == TOTAL_CALLS
    other = {"max_tokens", "max_completion_tokens"} - {key}
    assert all(b[key] == 222 and not other & set(b) and token_limit(b) == 222 for b in bodies)
    second = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
    assert second.ok and second.judges["gpt"].judged == TOTAL_CALLS


def test_max_tokens_param_is_refused_for_anthropic() -> None:
    with pytest.raises(
        ValidationError,
        match="'max_tokens_param' applies to OpenAI-compatible providers, not 'anthropic'",
    ):
        JudgeConfig(
            provider="anthropic", model="m", family="f", max_tokens_param="max_completion_tokens"
        )
    with pytest.raises(ValidationError):
        JudgeConfig(provider="openai", model="m", family="f", max_tokens_param="max_output")  # type: ignore[arg-type]


def test_the_name_is_not_part_of_the_judges_identity(tmp_path: Path) -> None:
    """Changing the name asks nothing again: the limit is the same under either name."""
    ids = []
    for param in ("", '\nmax_tokens_param = "max_tokens"'):
        cfg = write_project(
            tmp_path / str(len(ids)), openai_judge("http://127.0.0.1:9", extra=param)
        )
        (judge,) = Project(load_config(cfg)).judges(need_keys=False)
        ids.append(judge.identity)
    assert ids[0] == ids[1]
