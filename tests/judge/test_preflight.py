"""The preflight: one request per judge on a fixed public check before a run spends anything;
a judge that gives no usable verdict is stopped after at most 3 requests, with the server's own
text, what it means and the key to change, and the other judges go on."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut import pipeline
from gamut.cli import main
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.pacing import BREAK_REJECTED
from scoring.judge.preflight import CHECK, MAX_REQUESTS, preflight
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMServer, prompt_text
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project

QUIET = NullProgress()


def _judges(tmp_path: Path, *tables: str) -> Project:
    return Project(load_config(write_project(tmp_path, "".join(tables))))


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def test_a_judge_that_answers_passes_with_one_request_on_the_public_check(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    project = _judges(tmp_path, openai_judge(fake_llm.openai_base_url, preflight=True))
    (result,) = preflight(project.judges(need_keys=True)).values()
    assert result.ok and result.verdict == "meets" and result.requests == 1
    (req,) = fake_llm.requests
    assert CHECK in prompt_text(req.body)


@pytest.mark.parametrize(
    ("fault", "requests", "said"),
    [
        # llama-cpp-python's 500 for a response format it does not know: final at once
        ("500_invalid", 1, "literal_error"),
        # a reply that is no verdict object: asked again, at most 3 times
        ("prose", MAX_REQUESTS, "not with a verdict object"),
        # a transient error: the SDK's retries are off, so 3 requests in all
        ("500", MAX_REQUESTS, "boom (fake)"),
    ],
)
def test_a_judge_without_a_usable_verdict_stops_within_three_requests(
    tmp_path: Path, fake_llm: FakeLLMServer, fault: str, requests: int, said: str
) -> None:
    fake_llm.fault_fn = lambda r: fault
    fake_llm.retry_after = 0
    table = openai_judge(fake_llm.openai_base_url, retries=4, preflight=True)
    (result,) = preflight(_judges(tmp_path, table).judges(need_keys=True)).values()
    assert not result.ok and result.requests == requests
    assert len(fake_llm.requests) == requests
    assert said in str(result)
    assert "judges.gpt." in result.meaning


def test_the_meaning_names_the_dialect_key_for_a_refused_response_format(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.fault_fn = lambda r: "500_invalid"
    table = openai_judge(fake_llm.openai_base_url, preflight=True)
    (result,) = preflight(_judges(tmp_path, table).judges(need_keys=True)).values()
    assert "judges.gpt.dialect" in result.meaning and "llama-cpp-python" in result.meaning


def test_an_invalid_request_500_is_not_retried_in_a_run(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    """The SDK retries a 500 unless told otherwise: a body that says the request is invalid
    tells it (and the failure is final, not transient)."""
    fake_llm.fault_fn = lambda r: "500_invalid"
    project = _judges(tmp_path, openai_judge(fake_llm.openai_base_url, retries=3))
    report = pipeline.judge(project, progress=QUIET)
    assert report.judges["gpt"].judged == 0
    # one per check, none retried, until the breaker stops the judge
    assert len(fake_llm.requests) == BREAK_REJECTED
    assert {f.kind for f in report.failures} == {"rejected"}


def test_a_run_stops_the_failing_judge_and_the_other_goes_on(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    """The fake serves OpenAI's shape only: the judge set to llama-cpp-python's is refused."""
    good = openai_judge(fake_llm.openai_base_url, "good", preflight=True)
    bad = openai_judge(
        fake_llm.openai_base_url,
        "bad",
        primary=False,
        preflight=True,
        extra='dialect = "llama-cpp-python"',
    )
    cfg = str(write_project(tmp_path, good + bad))
    code, out = _run("judge", "--config", cfg)
    assert code == 1
    assert "stopped before judging: bad: no usable verdict after 1 request(s)" in out
    assert "only json_schema is served here" in out and "judges.bad.dialect" in out
    assert f"{TOTAL_CALLS} judged with {TOTAL_CALLS} calls" in out  # the good judge
    assert len(fake_llm.requests) == 2 + TOTAL_CALLS  # two preflights, then the good judge only
    code, out = _run("judge", "--config", cfg, "--check")
    assert code == 1 and len(fake_llm.requests) == 4 + TOTAL_CALLS
    assert "good: usable verdict 'meets' after 1 request(s)" in out
    assert "bad: no usable verdict" in out
    code, out = _run("judge", "--config", cfg, "--check", "--judge", "good")
    assert code == 0 and "good: usable verdict" in out


def test_a_dry_run_and_preflight_false_make_no_preflight_request(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = str(write_project(tmp_path, openai_judge(fake_llm.openai_base_url, preflight=True)))
    code, _ = _run("judge", "--config", cfg, "--dry-run")
    assert code == 0 and fake_llm.requests == []
    off = str(write_project(tmp_path / "off", openai_judge(fake_llm.openai_base_url)))
    code, out = _run("judge", "--config", off, "--check")
    assert code == 0 and "no judge calls out" in out and fake_llm.requests == []
