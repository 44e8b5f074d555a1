"""A real kill (SIGKILL, mid-run) and a rerun: exactly one complete line per question."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm_server import FakeLLMServer
from tests.model_runner.project import answer_responder, make_project

N = 60


def _cmd(config: Path, srv: FakeLLMServer, provider: str) -> list[str]:
    url = srv.anthropic_base_url if provider == "anthropic" else srv.openai_base_url
    return [
        str(Path(sys.executable).parent / "gamut"),
        "generate",
        "--config",
        str(config),
        "--submission",
        "killed",
        "--model",
        "fake-model-1",
        "--provider",
        provider,
        "--base-url",
        url,
        "--api-key-env",
        "GAMUT_TEST_KEY",
        "--concurrency",
        "6",
    ]


def _count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _wait_for_lines(proc: subprocess.Popen[Any], path: Path, n: int) -> None:
    """Wait until ``path`` has ``n`` lines or the process ends (start-up is slow on a busy host)."""
    give_up = time.monotonic() + 180
    while _count_lines(path) < n and proc.poll() is None and time.monotonic() < give_up:
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_resume_after_sigkill_gives_one_line_per_question(tmp_path: Path, provider: str) -> None:
    project = make_project(tmp_path / "proj", n=N)
    env = {**os.environ, "GAMUT_TEST_KEY": "sk-test"}
    out = project.folder("killed") / "multimodal.jsonl"
    with FakeLLMServer(responder=answer_responder, latency=0.1) as srv:
        log = tmp_path / "first-run.log"
        with log.open("w") as log_file:
            proc = subprocess.Popen(
                _cmd(project.config_path, srv, provider),
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        try:
            # Kill once some answers are on disk and many calls are in flight.
            _wait_for_lines(proc, out, 12)
            assert proc.poll() is None, "the run finished before it could be killed"
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        killed_at = _count_lines(out) + _count_lines(out.with_name("text_only.jsonl"))
        assert 0 < killed_at < 2 * N, (killed_at, log.read_text())
    # A fresh server for the rerun: requests the killed run left in the old one's buffers
    # must not be counted.
    with FakeLLMServer(responder=answer_responder) as srv2:
        done = subprocess.run(
            _cmd(project.config_path, srv2, provider),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        # The rerun asked only for what was missing (in both settings).
        assert len(srv2.requests) == 2 * N - killed_at, (killed_at, len(srv2.requests))
    for setting in ("multimodal", "text_only"):
        data = (project.folder("killed") / f"{setting}.jsonl").read_bytes()
        assert data.endswith(b"\n")
        ids = [json.loads(line)["question_id"] for line in data.decode().splitlines()]
        assert sorted(ids) == [q["question_id"] for q in project.questions], setting


@pytest.mark.slow
def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_saves_what_arrived_and_says_how_to_continue(tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj", n=N)
    env = {**os.environ, "GAMUT_TEST_KEY": "sk-test"}
    out = project.folder("killed") / "multimodal.jsonl"
    with FakeLLMServer(responder=answer_responder, latency=0.25) as srv:
        proc = subprocess.Popen(
            _cmd(project.config_path, srv, "openai"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # a shell's background job (`make test &`) starts with SIGINT ignored, and a child
            # inherits that: give the child the default disposition, as a terminal would
            preexec_fn=_default_sigint,
        )
        _wait_for_lines(proc, out, 6)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "rerun the same command to continue" in err
    data = out.read_bytes()
    assert data.endswith(b"\n")
    ids = [json.loads(line)["question_id"] for line in data.decode().splitlines()]
    assert len(ids) == len(set(ids)) > 0
