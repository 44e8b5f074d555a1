"""``gamut generate`` on the command line: exit codes, summary, and the key never shown."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from gamut.cli import main
from tests.fakes.llm_server import FakeLLMServer, RecordedRequest
from tests.model_runner.project import Project

KEY = "sk-test-SECRET-value-123"


def _args(project: Project, srv: FakeLLMServer, *extra: str) -> list[str]:
    return [
        "generate",
        "--config",
        str(project.config_path),
        "--submission",
        "cli-model",
        "--model",
        "fake-model-1",
        "--base-url",
        srv.openai_base_url,
        "--api-key-env",
        "GAMUT_TEST_KEY",
        *extra,
    ]


def test_every_option_has_help() -> None:
    cmd = main.get_command(click.Context(main), "generate")
    assert cmd is not None
    assert cmd.help
    for param in cmd.params:
        if isinstance(param, click.Option):
            assert param.help, param.name


def test_success_prints_files_and_tokens(project: Project, server: FakeLLMServer) -> None:
    res = CliRunner().invoke(
        main, _args(project, server, "--concurrency", "3"), env={"GAMUT_TEST_KEY": KEY}
    )
    assert res.exit_code == 0, res.output
    assert "multimodal: 10 answered now" in res.output
    assert "text_only: 10 answered now" in res.output
    assert "tokens used:" in res.output
    assert KEY not in res.output
    assert len(server.requests) == 20
    # The plain progress lines (not a terminal) name each setting.
    assert "answered, 0 failed" in res.output


@pytest.mark.parametrize(
    ("extra", "key"),
    [((), "max_completion_tokens"), (("--max-tokens-param", "max_tokens"), "max_tokens")],
    ids=["default", "max_tokens"],
)
def test_the_token_limit_goes_under_the_key_the_endpoint_expects(
    project: Project, server: FakeLLMServer, extra: tuple[str, ...], key: str
) -> None:
    args = _args(project, server, "--max-tokens", "99", "--limit", "1", *extra)
    res = CliRunner().invoke(main, args, env={"GAMUT_TEST_KEY": KEY})
    assert res.exit_code == 0, res.output
    assert len(server.requests) == 2
    other = {"max_tokens", "max_completion_tokens"} - {key}
    for req in server.requests:
        assert req.body[key] == 99 and not other & set(req.body)


def test_unanswered_questions_are_listed_with_exit_1(
    project: Project, server: FakeLLMServer
) -> None:
    def fault(req: RecordedRequest) -> str | None:
        return "500" if "number 7?" in req.text else None

    server.fault_fn = fault
    res = CliRunner().invoke(
        main,
        _args(project, server, "--max-retries", "0", "--setting", "multimodal"),
        env={"GAMUT_TEST_KEY": KEY},
    )
    assert res.exit_code == 1
    assert "1 question(s) left unanswered" in res.output
    assert "multimodal q-0007: InternalServerError: HTTP 500 (boom (fake))" in res.output
    assert KEY not in res.output


def test_input_problems_exit_1_and_usage_errors_exit_2(
    project: Project, server: FakeLLMServer
) -> None:
    res = CliRunner().invoke(main, _args(project, server), env={"GAMUT_TEST_KEY": ""})
    assert res.exit_code == 1
    assert "GAMUT_TEST_KEY" in res.output and "environment variable not set" in res.output
    assert server.requests == []
    res = CliRunner().invoke(main, [*_args(project, server), "--provider", "nope"])
    assert res.exit_code == 2
    res = CliRunner().invoke(main, [*_args(project, server), "--setting", "audio"])
    assert res.exit_code == 2


def test_on_a_terminal_the_leaderboard_name_is_asked_for(
    project: Project, server: FakeLLMServer
) -> None:
    """A real pseudo-terminal: the prompt appears, the answer lands in submission.yaml."""
    master, slave = os.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["GAMUT_TEST_KEY"] = KEY
    gamut = str(Path(sys.executable).parent / "gamut")
    proc = subprocess.Popen(
        [gamut, *_args(project, server, "--limit", "1", "--setting", "text_only")],
        stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    seen = b""
    try:
        while b"Name to show on the leaderboard" not in seen:
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, f"no prompt: {seen!r}"
            seen += os.read(master, 4096)
        os.write(master, b"Fake Model One\n")
        while proc.poll() is None:
            if select.select([master], [], [], 1)[0]:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
        assert proc.wait(timeout=60) == 0, seen.decode(errors="replace")
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    meta = yaml.safe_load((project.folder("cli-model") / "submission.yaml").read_text())
    assert meta["model_name"] == "Fake Model One"


def test_without_a_terminal_model_name_is_left_for_a_person(
    project: Project, server: FakeLLMServer
) -> None:
    res = CliRunner().invoke(
        main, _args(project, server, "--limit", "1"), env={"GAMUT_TEST_KEY": KEY}
    )
    assert res.exit_code == 0, res.output
    assert "Name to show" not in res.output
    meta = yaml.safe_load((project.folder("cli-model") / "submission.yaml").read_text())
    assert meta["model_name"] == "TODO"
    assert "model_name is the name people know the model by" in " ".join(res.output.split())
