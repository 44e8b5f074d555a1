"""Config problems are reported all at once before any call; the API key never leaks."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut import pipeline
from gamut.cli import main
from gamut.config import load_config
from gamut.project import Project
from scoring.errors import ProblemsError
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.conftest import FAKE_KEY
from tests.judge.project import openai_judge, write_project
from tests.judge.store import failures


def test_unknown_key_missing_env_and_two_primaries_all_reported(
    tmp_path: Path, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GAMUT_TEST_KEY")
    toml = openai_judge(fake_llm.openai_base_url, "a", extra="temprature = 0") + openai_judge(
        fake_llm.openai_base_url, "b"
    )
    cfg_path = write_project(tmp_path, toml)
    with pytest.raises(ProblemsError) as err:
        load_config(cfg_path, require_keys=True)
    text = str(err.value)
    assert "judges.a.temprature" in text and "remove the key" in text
    assert "judges.a.api_key_env: environment variable GAMUT_TEST_KEY is not set" in text
    assert "judges.b.api_key_env" in text
    assert "exactly one judge must have primary = true (found: a, b)" in text
    assert len(err.value.problems) == 4
    result = CliRunner().invoke(main, ["judge", "--config", str(cfg_path)])
    assert result.exit_code == 1
    for needle in ("temprature", "GAMUT_TEST_KEY is not set", "found: a, b"):
        assert needle in result.output
    assert fake_llm.requests == []


def test_missing_key_stops_judge_all_before_any_call(
    tmp_path: Path, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    monkeypatch.setenv("GAMUT_TEST_KEY", "")
    with pytest.raises(ProblemsError, match="GAMUT_TEST_KEY is not set"):
        pipeline.judge(Project(cfg), progress=NullProgress())
    with pytest.raises(ProblemsError, match="no judge named 'nope'"):
        pipeline.judge(Project(cfg), judges=["nope"], progress=NullProgress())
    assert fake_llm.requests == []


def test_api_key_never_appears_in_output_errors_or_cache(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg_path = write_project(tmp_path, openai_judge(fake_llm.openai_base_url, concurrency=1))
    fake_llm.queue_faults("401", "400", "prose", "prose", "prose")
    result = CliRunner().invoke(main, ["judge", "--config", str(cfg_path)])
    assert result.exit_code == 1
    # the provider echoed the key in its 401 message: it was sent, and it was redacted
    assert any(FAKE_KEY in (r.headers.get("authorization", "")) for r in fake_llm.requests)
    assert "invalid credential" in result.output and "***" in result.output
    assert FAKE_KEY not in result.output
    for f in (tmp_path / ".gamut").rglob("*"):
        assert f.is_dir() or FAKE_KEY.encode() not in f.read_bytes(), f
    kinds = sorted(str(r["kind"]) for r in failures(tmp_path).values())
    assert kinds == ["bad_output", "rejected", "rejected"]
    assert "3 check(s) failed" in result.output


def test_replay_judge_needs_its_file(tmp_path: Path) -> None:
    toml = (
        '[judges.r]\nprovider = "replay"\nmodel = "m"\nfamily = "f"\nprimary = true\n'
        '[judges.o]\nprovider = "openai"\nmodel = "m"\nfamily = "f"\nreplay = "x.parquet"\n'
        'api_key_env = "GAMUT_TEST_KEY"\n'
    )
    with pytest.raises(ProblemsError) as err:
        load_config(write_project(tmp_path, toml))
    text = str(err.value)
    assert "judges.r: provider 'replay' needs replay" in text
    assert "judges.o: 'replay' applies only to provider 'replay'" in text
