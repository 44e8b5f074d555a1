"""One bad submission never stops the pipeline (`gamut run`, `gamut judge`, `gamut score`): it
is left out with a named error, the rest published. Duplicate display names and markup in names
never break a table or the terminal."""

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


def test_run_with_left_out_ok_publishes_the_rest_and_warns(
    tmp_path: Path, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    bad = add_submission(tmp_path, "gamma", "Gamma VL")
    (bad / "multimodal.jsonl").write_text('{"question_id": "food-0001", "response": "x"}\nno\n')
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out = _run("run", "--no-site", "--config", str(cfg), "--left-out-ok")
    assert code == 0, out
    assert "warning: 1 submission(s) left out for failing validation" in out and "gamma" in out
    assert "::warning title=GAMUT publish::1 submission(s) left out" in out
    lb = pd.read_parquet(tmp_path / "results" / "leaderboard.parquet")
    assert sorted(set(lb["submission_id"])) == ["alpha", "beta"]
    # without the flag the same run exits 1
    code, _ = _run("run", "--no-site", "--config", str(cfg))
    assert code == 1


def test_run_with_only_valid_submissions_exits_0(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    code, out = _run("run", "--no-site", "--config", str(cfg))
    assert code == 0, out
    assert "left out" not in out


#: A merged file that fails validation (a newer metadata rule, a response file the shared
#: reader refuses), and the validator's problem naming its file and line.
BROKEN = [
    ("submission.yaml", "submissions/beta/submission.yaml:5: open_weights: Input should be"),
    ("multimodal.jsonl", "submissions/beta/multimodal.jsonl:2: not valid JSON"),
]
#: In beta's first response only: its text never reaches the judge while beta is left out.
BETA_TEXT = "likely pad thai"


def _break(folder: Path, name: str) -> None:
    path = folder / name
    if name == "submission.yaml":
        path.write_text(path.read_text().replace("open_weights: false", "open_weights: maybe"))
    else:
        first = path.read_text().splitlines()[0]
        path.write_text(first + "\nnot json\n")


@pytest.mark.parametrize(("name", "problem"), BROKEN)
def test_score_leaves_out_an_invalid_merged_submission_and_scores_the_rest(
    tmp_path: Path, fake_llm: FakeLLMServer, name: str, problem: str
) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    assert _run("judge", "--config", str(cfg))[0] == 0  # both judged while valid
    _break(tmp_path / "submissions" / "beta", name)
    code, out = _run("score", "--config", str(cfg))
    assert code == 1, out
    assert "left out 1 submission(s) that fail validation (not scored): 'beta'" in out
    assert problem in out
    assert "1 submission(s) left out for failing validation (the rest is scored): 'beta'" in out
    lb = pd.read_parquet(tmp_path / "results" / "leaderboard.parquet")
    assert set(lb["submission_id"]) == {"alpha"}
    assert set(lb["status"]) == {"complete"}
    assert "GAMUT leaderboard" in out  # the rest is printed as usual


@pytest.mark.parametrize(("name", "problem"), BROKEN)
def test_judge_leaves_out_an_invalid_submission_and_judges_the_rest(
    tmp_path: Path, fake_llm: FakeLLMServer, name: str, problem: str
) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    _break(tmp_path / "submissions" / "beta", name)
    status = tmp_path / "status.json"
    code, out = _run("judge", "--config", str(cfg), "--status-out", str(status))
    assert code == 1, out
    assert "left out 1 submission(s) that fail validation (not judged): 'beta'" in out
    assert problem in out
    assert "1 submission(s) left out for failing validation (the rest is judged): 'beta'" in out
    assert fake_llm.requests and not any(BETA_TEXT in r.text for r in fake_llm.requests)
    table = pd.read_parquet(tmp_path / "results" / "verdicts.parquet")
    assert set(table["submission_id"]) == {"alpha"}
    assert set(json.loads(status.read_text())["submissions"]) == {"alpha"}


def test_judge_refuses_a_named_submission_that_fails_validation(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    _break(tmp_path / "submissions" / "beta", "submission.yaml")
    _break(tmp_path / "submissions" / "alpha", "multimodal.jsonl")
    code, out = _run("judge", "--config", str(cfg), "--submission", "beta")
    assert code == 1, out
    assert "submission(s) 'beta' fail validation, so they are not judged" in out
    assert BROKEN[0][1] in out
    assert "submissions/alpha/" not in out.split("not judged")[1]  # only beta's problems
    assert fake_llm.requests == []
    assert not (tmp_path / "results" / "verdicts.parquet").exists()


def test_judge_of_a_named_valid_submission_leaves_the_invalid_ones_out_of_the_table(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    _break(tmp_path / "submissions" / "beta", "multimodal.jsonl")
    code, out = _run("judge", "--config", str(cfg), "--submission", "alpha")
    assert code == 1, out
    assert "(the rest is judged): 'beta'" in out
    table = pd.read_parquet(tmp_path / "results" / "verdicts.parquet")
    assert set(table["submission_id"]) == {"alpha"}


def test_judge_and_score_with_only_valid_submissions_exit_0(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    for command in ("judge", "score"):
        code, out = _run(command, "--config", str(cfg))
        assert code == 0, out
        assert "left out" not in out
    lb = pd.read_parquet(tmp_path / "results" / "leaderboard.parquet")
    assert sorted(set(lb["submission_id"])) == ["alpha", "beta"]


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
    from gamut import pipeline
    from gamut.config import load_config
    from gamut.project import Project

    cfg = pipeline_project(tmp_path, fake_llm.openai_base_url)
    write_meta(tmp_path / "submissions" / "beta", "Alpha VL")  # merged without validation
    # the commands leave beta out (the validator refuses the name); the library, given both
    # ids, judges and scores them as they are, so the tables hold the two same names
    project = Project(load_config(cfg))
    both = ["alpha", "beta"]
    pipeline.judge(project, submissions=both)
    pipeline.write_verdicts(project, both)
    pipeline.score(project, both)
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
