"""Every provider fault ends in exactly one stored verdict or one listed failure, never both."""

from __future__ import annotations

from pathlib import Path

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMServer, prompt_text, verdict_responder
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project
from tests.judge.store import failures as open_failures
from tests.judge.store import verdict_keys

QUIET = NullProgress()


def _keys(root: Path) -> tuple[set[bytes], set[bytes]]:
    keys = verdict_keys(root)
    assert len(keys) == len(set(keys)), "a verdict was stored twice"
    return set(keys), set(open_failures(root))


def _setup(tmp_path: Path, srv: FakeLLMServer, **kw: float) -> Path:
    return write_project(tmp_path, openai_judge(srv.openai_base_url, **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("fault", ["429", "500", "drop", "malformed_json", "bad_verdict", "prose"])
def test_recoverable_fault_still_ends_in_one_verdict(
    tmp_path: Path, fake_llm: FakeLLMServer, fault: str
) -> None:
    cfg = load_config(_setup(tmp_path, fake_llm))
    fake_llm.queue_faults(fault, fault)  # two faults in a row: within both retry budgets
    report = pipeline.judge(Project(cfg), progress=QUIET)
    assert report.ok, report.failures
    verdicts, failures = _keys(cfg.root)
    assert len(verdicts) == TOTAL_CALLS and not failures
    assert len(fake_llm.requests) == TOTAL_CALLS + 2
    s = report.judges["gpt"]
    if fault in ("malformed_json", "bad_verdict", "prose"):
        assert s.reasks == 2 and s.calls == TOTAL_CALLS + 2  # re-asked by the judge
    else:
        assert s.reasks == 0 and s.calls == TOTAL_CALLS  # retried inside the SDK


def test_reask_carries_the_bad_reply_and_says_what_was_wrong(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = load_config(_setup(tmp_path, fake_llm, concurrency=1))
    fake_llm.queue_faults("bad_verdict")
    pipeline.judge(Project(cfg), progress=QUIET)
    reask = fake_llm.requests[1].body["messages"]
    assert reask[-2]["role"] == "assistant" and "excellent" in reask[-2]["content"]
    assert "verdict" in reask[-1]["content"] and "could not be used" in reask[-1]["content"]


def test_hang_past_timeout_is_a_listed_failure_then_retried(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = load_config(_setup(tmp_path, fake_llm, timeout=0.5, retries=0))
    fake_llm.queue_faults("hang")
    report = pipeline.judge(Project(cfg), progress=QUIET)
    assert [f.kind for f in report.failures] == ["api_error"]
    assert "Timeout" in report.failures[0].message
    verdicts, failures = _keys(cfg.root)
    assert len(verdicts) == TOTAL_CALLS - 1 and len(failures) == 1 and not verdicts & failures
    fake_llm.reset()
    again = pipeline.judge(Project(cfg), progress=QUIET)
    assert again.ok and len(fake_llm.requests) == 1
    verdicts, failures = _keys(cfg.root)
    assert len(verdicts) == TOTAL_CALLS and not failures


def test_unusable_replies_fail_after_two_reasks_with_raw_text(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    # one check of three responses gets prose (fewer unusable replies in a row than stop a judge)
    good = verdict_responder("meets")
    fake_llm.responder = lambda body: (
        "Meets, I would say." if "dish as pad thai" in prompt_text(body) else good(body)
    )
    cfg = load_config(_setup(tmp_path, fake_llm))
    report = pipeline.judge(Project(cfg), progress=QUIET)
    assert len(fake_llm.requests) == TOTAL_CALLS - 3 + 3 * 3
    assert len(report.failures) == 3
    assert {f.kind for f in report.failures} == {"bad_output"}
    assert {f.raw for f in report.failures} == {"Meets, I would say."}
    verdicts, failures = _keys(cfg.root)
    assert len(verdicts) == TOTAL_CALLS - 3 and len(failures) == 3  # never a default verdict
    assert not report.judges["gpt"].stopped
    assert {r["raw"] for r in open_failures(cfg.root).values()} == {"Meets, I would say."}
    fake_llm.responder = verdict_responder("contradicts")
    assert pipeline.judge(Project(cfg), progress=QUIET).ok
    verdicts, failures = _keys(cfg.root)
    assert len(verdicts) == TOTAL_CALLS and not failures


def test_other_4xx_is_not_retried(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = load_config(_setup(tmp_path, fake_llm, concurrency=1))
    fake_llm.queue_faults("400")
    report = pipeline.judge(Project(cfg), progress=QUIET)
    assert [f.kind for f in report.failures] == ["rejected"]
    assert len(fake_llm.requests) == TOTAL_CALLS  # the rejected request was sent once


def test_random_faults_every_check_gets_exactly_one_outcome(tmp_path: Path) -> None:
    from tests.fakes.llm_server import random_faults

    with FakeLLMServer(latency=0.01) as srv:
        srv.fault_fn = random_faults(0.3, seed=7)
        cfg = load_config(_setup(tmp_path, srv, concurrency=16, retries=4))
        report = pipeline.judge(Project(cfg), progress=QUIET)
    verdicts, failures = _keys(cfg.root)
    assert len(verdicts) + len(failures) == TOTAL_CALLS and not verdicts & failures
    assert len(report.failures) == len(failures)
