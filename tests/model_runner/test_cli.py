"""``gamut generate`` on the command line: exit codes, summary, and the key never shown."""

from __future__ import annotations

import click
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
