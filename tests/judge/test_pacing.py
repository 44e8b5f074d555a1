"""A judge that fails the same way on every request is stopped after a few requests while the
others go on; a judge against a provider's rate limit ends with every verdict and no storm of
429s; every decoding setting is sent as configured, or refused by name.

Error bodies are the providers' own shapes: OpenAI's ``{"error": {"message", "type", "param",
"code"}}`` (openai-python 3.63's ``APIError`` reads these four fields) and llama-cpp-python
0.3's ``RouteErrorHandler`` (``llama_cpp/server/errors.py``), which answers a request its
pydantic model refuses with a 500 whose message is the validation error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.errors import ProblemsError
from scoring.judge.pacing import BREAK_REJECTED, Limiter, Outcome
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMServer, RateLimits
from tests.judge.project import QUESTIONS, RESPONSES, TOTAL_CALLS, openai_judge, write_project

QUIET = NullProgress()
#: Checks per response of the big project: one list of this many members (plus its fact).
MEMBERS = 150


def _big_rubrics(n: int = MEMBERS) -> list[dict[str, Any]]:
    members = [f"ingredient number {i}" for i in range(n)]
    item = {"id": "I1", "type": "strict_list", "tier": "answer_critical", "topic": "t"}
    return [
        {"question_id": q["question_id"], "snippets": [], "items": [{**item, "members": members}]}
        for q in QUESTIONS
    ]


#: Judge calls of the big project: 5 non-empty responses, MEMBERS checks each.
BIG_CALLS = 5 * MEMBERS

UNSUPPORTED = (
    400,
    {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    },
)
NO_MODEL = (
    404,
    {
        "error": {
            "message": "The model `judge-model` does not exist or you do not have access to it.",
            "type": "invalid_request_error",
            "param": None,
            "code": "model_not_found",
        }
    },
)
BAD_KEY = (
    401,
    {
        "error": {
            "message": "Incorrect API key provided: sk-te****. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    },
)
VALIDATION_500 = (
    500,
    {
        "error": {
            "message": "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
            "  Input should be 'text' or 'json_object' [type=literal_error, "
            "input_value='json_schema', input_type=str]\n    For further information visit "
            "https://errors.pydantic.dev/2.11/v/literal_error",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    },
)


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (UNSUPPORTED, "'max_tokens'"),
        (NO_MODEL, "judges.bad.model"),
        (BAD_KEY, "$GAMUT_TEST_KEY"),
        (VALIDATION_500, "refuses the request itself"),
    ],
    ids=["400-unsupported-parameter", "404-no-model", "401-bad-key", "500-validation"],
)
def test_a_judge_failing_every_request_the_same_way_stops_within_ten_requests(
    tmp_path: Path, fake_llm: FakeLLMServer, error: tuple[int, dict[str, Any]], says: str
) -> None:
    with FakeLLMServer(latency=0.05) as bad:
        bad.error_reply = error
        judges = openai_judge(fake_llm.openai_base_url, "good", concurrency=32) + openai_judge(
            bad.openai_base_url, "bad", primary=False, concurrency=256, retries=4
        )
        cfg = write_project(tmp_path, judges, rubrics=_big_rubrics())
        report = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
        n_bad = len(bad.requests)
    assert n_bad <= 10, f"{n_bad} requests to a judge that fails every one"
    s = report.judges["bad"]
    assert s.stopped.startswith("judge 'bad' stopped") and "rejected" in s.stopped
    assert says in s.stopped, s.stopped
    assert s.judged == 0 and len(s.failures) + s.unfinished == BIG_CALLS
    assert len(s.failures) <= 10 and {f.kind for f in s.failures} == {"rejected"}
    assert any(s.stopped in line for line in report.summary_lines())
    good = report.judges["good"]
    assert good.judged == BIG_CALLS and not good.failures and not good.stopped


def test_every_unusable_reply_stops_the_judge_too(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda body: "Meets, I would say."
    cfg = write_project(tmp_path, openai_judge(fake_llm.openai_base_url, concurrency=64))
    report = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
    assert len(fake_llm.requests) <= 10
    s = report.judges["gpt"]
    assert "unusable replies" in s.stopped and "structured_output" in s.stopped
    assert s.judged == 0 and len(s.failures) + s.unfinished == TOTAL_CALLS


def test_the_stop_message_of_a_held_rubric_judge_quotes_no_provider_text(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.queue_faults(*["400_echo"] * 40)  # the provider quotes the prompt back
    cfg = write_project(tmp_path, openai_judge(fake_llm.openai_base_url), public=False)
    report = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
    s = report.judges["gpt"]
    assert len(fake_llm.requests) == BREAK_REJECTED
    assert all(w in s.stopped for w in ("BadRequestError", "HTTP 400", "invalid_request_error"))
    assert "pad thai" not in s.stopped.lower() and "prompt" not in s.stopped


def test_a_server_error_not_about_the_request_is_retried(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.queue_faults("500", "500", "500")  # {"type": "api_error"}: transient
    cfg = write_project(tmp_path, openai_judge(fake_llm.openai_base_url, concurrency=1, retries=4))
    report = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
    assert report.ok and len(fake_llm.requests) == TOTAL_CALLS + 3
    assert not report.judges["gpt"].stopped


#: The provider's limit in the pacing tests: 2,400 requests a minute (40 a second, enforced
#: over each second), answering in 0.3 s; 60 checks a response, 300 in all.
RPM, PACED_CALLS = 2400, 5 * 60


def _paced_run(tmp_path: Path, extra: str) -> tuple[Any, RateLimits, float]:
    """The run's report, the provider's counts, and the rate it received requests at (per
    second, from the first to the last)."""
    limits = RateLimits(rpm=RPM)
    with FakeLLMServer(latency=0.3, limits=limits) as srv:
        judge = openai_judge(srv.openai_base_url, concurrency=128, retries=4, extra=extra)
        cfg = write_project(tmp_path, judge, rubrics=_big_rubrics(60))
        report = pipeline.judge(Project(load_config(cfg)), progress=QUIET)
        times = [r.received_at for r in srv.requests]
    return report, limits, (len(times) - 1) / (max(times) - min(times))


def test_a_judge_told_the_limit_keeps_under_it_with_no_failure(tmp_path: Path) -> None:
    report, limits, rate = _paced_run(tmp_path, f"requests_per_minute = {RPM}")
    s = report.judges["gpt"]
    assert report.ok and s.judged == PACED_CALLS
    assert sum(limits.refused.values()) <= 3, limits.refused
    # never above the limit but by the burst the provider allows (a second's worth); how near
    # it the judge keeps is benchmarks/bench_pacing.py's to measure
    assert rate <= 1.05 * RPM / 60, rate


def test_a_judge_not_told_the_limit_backs_off_with_no_failure_and_no_storm(
    tmp_path: Path,
) -> None:
    report, limits, _ = _paced_run(tmp_path, "")
    s = report.judges["gpt"]
    assert report.ok and s.judged == PACED_CALLS
    refused = sum(limits.refused.values())
    assert 0 < refused <= PACED_CALLS // 5, refused  # it found the limit, without a storm
    assert s.rate_limited == refused


def test_the_window_halves_once_per_round_trip_and_climbs_back() -> None:
    now = [0.0]
    lim = Limiter("j", 64, clock=lambda: now[0])
    assert lim.window == 4
    lim.useful()
    for _ in range(20):
        lim.in_flight += 1
        lim.release(0.0, Outcome.OK)
    assert lim.window == 24  # slow start: one more per success
    now[0] = 1.0
    for _ in range(5):  # a burst of 429s for requests sent before the first of them came back
        lim.in_flight += 1
        lim.release(0.5, Outcome.SLOW_DOWN, 2.0)
    assert lim.window == 12 and lim.hold_until == 3.0
    for _ in range(12):
        lim.in_flight += 1
        lim.release(1.5, Outcome.OK)
    assert 12.9 < lim.window < 13.1  # past the cut: about one more per window of successes


def test_openai_judges_send_temperature_and_seed_as_configured(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    extra = "temperature = 0.3\nseed = 7"
    cfg = write_project(tmp_path, openai_judge(fake_llm.openai_base_url, extra=extra))
    project = Project(load_config(cfg))
    assert pipeline.judge(project, progress=QUIET).ok
    assert {(r.body["temperature"], r.body["seed"]) for r in fake_llm.requests} == {(0.3, 7)}


def test_the_seed_is_part_of_the_judge_identity(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    url = fake_llm.openai_base_url
    cfg = write_project(tmp_path / "a", openai_judge(url))
    assert pipeline.judge(Project(load_config(cfg)), progress=QUIET).ok
    write_project(tmp_path / "a", openai_judge(url, extra="seed = 7"))
    fake_llm.reset()
    assert pipeline.judge(Project(load_config(cfg)), progress=QUIET).ok
    assert len(fake_llm.requests) == TOTAL_CALLS  # a new judge: asked again


def test_anthropic_judges_send_no_sampling_parameter(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    judge = openai_judge(fake_llm.anthropic_base_url, provider="anthropic")
    cfg = write_project(tmp_path, judge, responses={"alpha": RESPONSES["alpha"]})
    assert pipeline.judge(Project(load_config(cfg)), progress=QUIET).ok
    assert fake_llm.requests and all(r.protocol == "anthropic" for r in fake_llm.requests)
    for r in fake_llm.requests:
        assert not {"temperature", "seed", "top_p", "top_k"} & set(r.body)


@pytest.mark.parametrize("extra", ["temperature = 0.0", "seed = 1", "temperature = 0.2\nseed = 1"])
def test_anthropic_judges_refuse_sampling_parameters_by_name(tmp_path: Path, extra: str) -> None:
    judge = openai_judge("http://127.0.0.1:9", provider="anthropic", extra=extra)
    with pytest.raises(ProblemsError) as err:
        load_config(write_project(tmp_path, judge))
    text = str(err.value)
    for key in ("temperature", "seed"):
        assert (key in text) == (key in extra), text
    assert "judges.gpt" in text and "remove it" in text
