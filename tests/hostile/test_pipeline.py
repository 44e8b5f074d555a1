"""One bad submission never stops the pipeline: it is left out with a named error, the rest
published. Duplicate display names and markup in names never break a table or the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.fakes.llm_server import FakeLLMServer
from tests.hostile.project import add_submission, pipeline_project, write_meta

EVIL = "<img src=x onerror=alert(99)>"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_run_leaves_out_an_invalid_folder_and_publishes_the_rest(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    add_submission(tmp_path, EVIL, "Evil VL", {"food-0001": "EVIL-A", "plants-0001": "EVIL-B"})
    bad = add_submission(tmp_path, "gamma", "Gamma VL")
    (bad / "multimodal.jsonl").write_text(
        '{"question_id": "food-0001", "response": "x"}\nnot json\n'
    )
    code, out = _run("run", "--no-site", "--config", str(cfg))
    assert code == 1
    assert "left out 2 submission(s)" in out
    assert "not a valid submission id" in out and EVIL in out
    assert "submissions/gamma/multimodal.jsonl:2: not valid JSON" in out
    lb = pd.read_parquet(tmp_path / "results" / "leaderboard.parquet")
    assert sorted(set(lb["submission_id"])) == ["alpha", "beta"]
    assert set(pd.read_parquet(tmp_path / "results" / "verdicts.parquet")["submission_id"]) == {
        "alpha",
        "beta",
    }
    assert not any("EVIL-" in r.text for r in fake_llm.requests)  # never even judged


def test_run_with_only_valid_submissions_exits_0(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    code, out = _run("run", "--no-site", "--config", str(cfg))
    assert code == 0, out
    assert "left out" not in out


def test_the_validator_rejects_a_display_name_taken_case_and_space_insensitively(
    tmp_path: Path,
) -> None:
    cfg = pipeline_project(tmp_path, "http://127.0.0.1:9/v1")
    add_submission(tmp_path, "gamma", "  alpha   vl ")
    code, out = _run(
        "submission", "validate", "--config", str(cfg), str(tmp_path / "submissions" / "gamma")
    )
    assert code == 1
    assert "submissions/gamma/submission.yaml:1: model_name 'alpha   vl' is already" in out
    assert "'alpha'" in out


@pytest.mark.slow
def test_two_submissions_with_one_display_name_still_build_the_site(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    write_meta(tmp_path / "submissions" / "beta", "Alpha VL")  # merged without validation
    assert _run("judge", "--config", str(cfg))[0] == 0
    assert _run("score", "--config", str(cfg))[0] == 0
    code, out = _run("site", "build", "--config", str(cfg))
    assert code == 0, out
    index = next(tmp_path.rglob("index.html")).read_text(encoding="utf-8")
    assert "Alpha VL (alpha)" in index and "Alpha VL (beta)" in index


def test_markup_in_a_model_name_prints_as_text(
    tmp_path: Path, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gamut.cli import _common

    monkeypatch.setattr(_common.out_console.console, "width", 300)  # one table row per line
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    name = "[/bold] [link=https://evil.example]Alpha[/link] [red]VL"
    write_meta(tmp_path / "submissions" / "alpha", name)
    assert _run("judge", "--config", str(cfg))[0] == 0
    code, out = _run("score", "--config", str(cfg))
    assert code == 0, out
    assert name in out  # printed literally: no MarkupError, no hyperlink
    assert "\x1b]8;" not in out
    board = json.loads((tmp_path / "results" / "leaderboard.json").read_text())
    assert any(r.get("model_name") == name for r in board) or name in json.dumps(board)
