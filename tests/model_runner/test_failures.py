"""Faults end with every question answered or listed; checks come before any call."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from gamut.model_runner.plan import GenerateOptions, GenerateResult
from gamut.model_runner.runner import generate
from scoring.errors import GamutError, ProblemsError
from scoring.questions import Setting
from tests.fakes.llm_server import FakeLLMServer, RecordedRequest, random_faults
from tests.model_runner.project import Project, answer_responder, base_url


def _options(srv: FakeLLMServer, provider: str = "openai", **kw: Any) -> GenerateOptions:
    kw.setdefault("concurrency", 4)
    return GenerateOptions(
        submission_id=kw.pop("sid", "test-model"),
        model="fake-model-1",
        provider=provider,  # type: ignore[arg-type]
        base_url=kw.pop("url", base_url(srv, provider)),
        api_key_env="GAMUT_TEST_KEY",
        **kw,
    )


def _assert_partition(project: Project, result: GenerateResult) -> None:
    """Every question is either answered exactly once on disk, or listed as a failure."""
    for setting in result.stats:
        lines = project.lines("test-model", setting.value)
        answered = [x["question_id"] for x in lines]
        assert len(answered) == len(set(answered))
        assert all(x["response"].strip() for x in lines)
        failed = {f.question_id for f in result.failures if f.setting is setting}
        assert not failed & set(answered)
        assert failed | set(answered) == {q["question_id"] for q in project.questions}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_429_500_drops_and_timeouts_are_retried(
    provider: str, project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    server.queue_faults("429", "500", "drop", "hang", "429", "500")
    opts = _options(server, provider, timeout_s=1.5, max_retries=4)
    result = generate(project.deployment, opts, environ=env)
    _assert_partition(project, result)
    assert result.ok, result.failures
    assert server.fault_counts == {"429": 2, "500": 2, "drop": 1, "hang": 1}


def test_random_faults_end_answered_or_listed_then_a_rerun_completes(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    server.fault_fn = random_faults(0.4, kinds=("429", "500", "drop", "malformed_json"), seed=3)
    result = generate(project.deployment, _options(server, max_retries=1), environ=env)
    _assert_partition(project, result)
    assert sum(server.fault_counts.values()) > 0
    server.fault_fn = None
    again = generate(project.deployment, _options(server), environ=env)
    assert again.ok
    _assert_partition(project, again)


def test_a_question_that_always_fails_is_listed_not_written(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    def fault(req: RecordedRequest) -> str | None:
        return "500" if "number 3?" in req.text or "item-3?" in req.text else None

    server.fault_fn = fault
    result = generate(project.deployment, _options(server, max_retries=2), environ=env)
    _assert_partition(project, result)
    assert {(f.setting, f.question_id) for f in result.failures} == {
        (Setting.MULTIMODAL, "q-0003"),
        (Setting.TEXT_ONLY, "q-0003"),
    }
    assert all("HTTP 500 (boom (fake))" in f.reason for f in result.failures)
    assert server.fault_counts["500"] == 2 * 3  # first try and two retries, per setting


def test_an_empty_reply_is_a_failure_never_an_empty_line(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    def responder(body: dict[str, Any]) -> str:
        return " \n" if "number 5?" in str(body) else answer_responder(body)

    server.responder = responder
    result = generate(
        project.deployment, _options(server, settings=(Setting.MULTIMODAL,)), environ=env
    )
    _assert_partition(project, result)
    [failure] = result.failures
    assert failure.question_id == "q-0005" and "empty reply" in failure.reason
    assert sum("number 5?" in r.text for r in server.requests) == 3


def test_the_deadline_stops_the_run_and_lists_what_is_left(
    project: Project, env: dict[str, str]
) -> None:
    with FakeLLMServer(responder=answer_responder, hang_s=30) as srv:
        srv.fault_fn = lambda req: "hang"
        opts = _options(srv, deadline_s=0.5, timeout_s=60, concurrency=3)
        result = generate(project.deployment, opts, environ=env)
    assert len(result.failures) == 2 * project.n_questions
    assert {f.reason for f in result.failures} == {"not answered before the deadline"}
    assert project.lines("test-model", "multimodal") == []


def test_an_endpoint_that_refuses_everything_stops_the_run(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    opts = _options(server, url=server.url + "/wrong/v1", concurrency=2)
    with pytest.raises(GamutError, match="not found"):
        generate(project.deployment, opts, environ=env)
    assert len(server.requests) <= 2 * project.n_questions


def test_every_problem_is_listed_before_any_call(project: Project, server: FakeLLMServer) -> None:
    (project.root / "images" / "a.png").write_bytes(b"broken")
    (project.root / "images" / "b.jpg").unlink()
    folder = project.folder("test-model")
    folder.mkdir(parents=True)
    (folder / "text_only.jsonl").write_text(
        '{"question_id": "zzz", "response": "a"}\n', encoding="utf-8"
    )
    with pytest.raises(ProblemsError) as info:
        generate(project.deployment, _options(server), environ={})
    problems = info.value.problems
    text = str(info.value)
    assert "GAMUT_TEST_KEY" in text and "no call made" in text
    assert "unknown question_id 'zzz'" in text
    image_qs = sorted(p.question_id or "" for p in problems if "image" in p.message)
    # a.png serves questions 0 and 5, b.jpg questions 1 and 6.
    assert image_qs == ["q-0000", "q-0001", "q-0005", "q-0006"]
    assert server.requests == []
    assert not (folder / "multimodal.jsonl").exists()
    assert not (folder / "submission.yaml").exists()


def test_text_only_needs_no_images(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    (project.root / "images" / "a.png").unlink()
    result = generate(
        project.deployment, _options(server, settings=(Setting.TEXT_ONLY,)), environ=env
    )
    assert result.ok


def test_answers_from_another_model_are_not_mixed_in(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    assert generate(project.deployment, _options(server, limit=2), environ=env).ok
    other = GenerateOptions(
        submission_id="test-model",
        model="another-model",
        base_url=server.openai_base_url,
        api_key_env="GAMUT_TEST_KEY",
    )
    server.reset()
    with pytest.raises(ProblemsError, match="produced differently"):
        generate(project.deployment, other, environ=env)
    assert server.requests == []
    hotter = _options(server, temperature=0.7)
    with pytest.raises(ProblemsError, match=r"temperature 0\.7"):
        generate(project.deployment, hotter, environ=env)


def test_two_runs_never_write_one_submission_at_once(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    folder = project.folder("test-model")
    folder.mkdir(parents=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running gamut generate holds it
        with pytest.raises(GamutError, match="another gamut generate is writing"):
            generate(project.deployment, _options(server), environ=env)
        assert server.requests == []
    finally:
        os.close(fd)
    assert generate(project.deployment, _options(server, limit=1), environ=env).ok


def test_a_failed_check_leaves_no_empty_folder_behind(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    (project.root / "images" / "a.png").unlink()
    with pytest.raises(ProblemsError):
        generate(project.deployment, _options(server, sid="brand-new"), environ=env)
    assert not project.folder("brand-new").exists()


def test_answers_from_elsewhere_are_not_described_as_ours(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    folder = project.folder("test-model")
    folder.mkdir(parents=True)
    (folder / "text_only.jsonl").write_text(
        '{"question_id": "q-0000", "response": "from my own pipeline"}\n', encoding="utf-8"
    )
    opts = _options(server, settings=(Setting.MULTIMODAL,))
    with pytest.raises(ProblemsError, match="no record of producing"):
        generate(project.deployment, opts, environ=env)
    assert server.requests == []
    assert not (folder / "submission.yaml").exists()


@contextlib.contextmanager
def _plain_http_port() -> Iterator[int]:
    """A port that answers every connection with plain HTTP bytes at once (no TLS)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield srv.getsockname()[1]
    finally:
        srv.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("http://127.0.0.1:{port}/v1", "connection refused"),
        ("http://no-such-host.invalid/v1", "DNS: the host name does not resolve"),
        ("https://127.0.0.1:{http_port}/v1", "TLS: the secure connection failed"),
    ],
)
def test_a_connection_that_cannot_succeed_names_host_and_cause(
    project: Project,
    server: FakeLLMServer,
    env: dict[str, str],
    provider: str,
    url: str,
    cause: str,
) -> None:
    with _plain_http_port() as http_port:
        url = url.format(port=_free_port(), http_port=http_port)
        host = url.split("//", 1)[1].split("/", 1)[0]
        opts = _options(server, provider, url=url, max_retries=0, concurrency=1, limit=2)
        with pytest.raises(GamutError) as info:
            generate(project.deployment, opts, environ=env)
    message = str(info.value)
    assert f"at {host}:" in message and cause in message, message
    assert project.lines("test-model", "multimodal") == []


def test_a_timeout_names_host_and_cause(
    project: Project, server: FakeLLMServer, env: dict[str, str]
) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        host = f"127.0.0.1:{silent.getsockname()[1]}"
        opts = _options(server, url=f"http://{host}/v1", max_retries=0, timeout_s=0.3, limit=1,
                        settings=(Setting.TEXT_ONLY,), reply_retries=0)  # fmt: skip
        result = generate(project.deployment, opts, environ=env)
    (failure,) = result.failures
    assert f"at {host}: timeout: no answer in time" in failure.reason, failure.reason
