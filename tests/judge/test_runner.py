"""judge_all against the fake provider over real HTTP, with a real SQLite cache."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.progress import NullProgress
from scoring.verdicts import VERDICT_COLUMNS
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import (
    CHECKS,
    RUBRICS,
    TOTAL_CALLS,
    TOTAL_CHECKS,
    check_of,
    openai_judge,
    write_project,
)

QUIET = NullProgress()


def test_judges_everything_then_rerun_makes_zero_calls(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    report = pipeline.judge(Project(cfg), progress=QUIET)
    s = report.judges["gpt"]
    assert report.ok
    assert (s.checks, s.empty, s.judged, s.calls, s.cache_hits) == (
        TOTAL_CHECKS,
        3,
        TOTAL_CALLS,
        TOTAL_CALLS,
        0,
    )
    assert len(fake_llm.requests) == TOTAL_CALLS
    assert s.tokens_in > 0 and s.tokens_out > 0 and s.tokens_cached > 0
    body = fake_llm.requests[0].body
    assert body["temperature"] == 0 and body["response_format"]["type"] == "json_schema"
    again = pipeline.judge(Project(cfg), progress=QUIET)
    assert len(fake_llm.requests) == TOTAL_CALLS
    assert again.judges["gpt"].cache_hits == TOTAL_CALLS and again.judges["gpt"].calls == 0

    df = pd.read_parquet(pipeline.write_verdicts(Project(cfg)))
    assert list(df.columns[:9]) == list(VERDICT_COLUMNS)
    assert len(df) == TOTAL_CHECKS
    empty = df[(df.submission_id == "beta") & (df.question_id == "plants-0001")]
    assert len(empty) == CHECKS["plants-0001"] and set(empty.verdict) == {"missing"}
    assert set(df.verdict) == {"meets", "missing"}


def test_held_rubrics_keep_text_out_of_the_table(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url), public=False))
    pipeline.judge(Project(cfg), progress=QUIET)
    path = pipeline.write_verdicts(Project(cfg))
    df = pd.read_parquet(path)
    assert "rationale" not in df.columns and "check_text" not in df.columns
    raw = path.read_bytes()
    assert b"tamarind" not in raw and b"Stated plainly" not in raw


def test_editing_one_check_rejudges_exactly_that_check(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    cfg_path = write_project(tmp_path, openai_judge(fake_llm.openai_base_url))
    pipeline.judge(Project(load_config(cfg_path)), progress=QUIET)
    fake_llm.reset()
    edited = json.loads(json.dumps(RUBRICS))
    edited[0]["items"][0]["text"] = "Identifies the dish as pad thai (Thai fried noodles)."
    write_project(tmp_path, openai_judge(fake_llm.openai_base_url), rubrics=edited)
    report = pipeline.judge(Project(load_config(cfg_path)), progress=QUIET)
    # food-0001 has a non-empty response in alpha/mm, alpha/text_only and beta/mm
    assert report.judges["gpt"].calls == 3
    assert {check_of(r.body) for r in fake_llm.requests} == {
        "Identifies the dish as pad thai (Thai fried noodles)."
    }


def test_dry_run_calls_nothing(
    tmp_path: Path, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GAMUT_TEST_KEY")
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    report = pipeline.judge(Project(cfg), dry_run=True, progress=QUIET)
    s = report.judges["gpt"]
    assert s.planned == TOTAL_CALLS and s.est_tokens_in > 100 * TOTAL_CALLS
    assert fake_llm.requests == []
    assert not (tmp_path / "results").exists()


def test_filters_by_submission_and_setting(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    from scoring.questions import Setting

    r = pipeline.judge(
        Project(cfg), submissions=["alpha"], settings=[Setting.TEXT_ONLY], progress=QUIET
    )
    assert r.judges["gpt"].calls == 10
    assert all("pad thai?" in x.text or "monstera?" in x.text for x in fake_llm.requests)


def test_cost_when_prices_are_configured(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    prices = "price_in_per_mtok = 2.0\nprice_cached_in_per_mtok = 0.5\nprice_out_per_mtok = 8.0"
    cfg = load_config(write_project(tmp_path, openai_judge(fake_llm.openai_base_url, extra=prices)))
    s = pipeline.judge(Project(cfg), progress=QUIET).judges["gpt"]
    expected = (
        (s.tokens_in - s.tokens_cached) * 2.0 + s.tokens_cached * 0.5 + s.tokens_out * 8.0
    ) / 1e6
    assert s.cost is not None and s.cost == pytest.approx(expected) and s.cost > 0
