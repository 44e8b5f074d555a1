"""Joining questions, checks and responses; problems in response files, all at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from gamut.config import load_config
from gamut.project import Project
from scoring.errors import GamutError, ProblemsError
from scoring.questions import Setting
from tests.judge.project import CHECKS, openai_judge, write_project


def test_units_use_the_settings_form_of_the_question(tmp_path: Path) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1")))
    units = Project(cfg).units(["alpha"]).units
    by = {(u.setting, u.question_id): u for u in units}
    assert by[(Setting.MULTIMODAL, "food-0001")].question == "What is this dish?"
    assert by[(Setting.TEXT_ONLY, "food-0001")].question == "What is pad thai?"
    assert len(by[(Setting.TEXT_ONLY, "plants-0001")].checks) == CHECKS["plants-0001"]
    assert Project(cfg).rubrics_path == tmp_path / "rubrics"


def test_every_bad_response_line_and_unknown_submission(tmp_path: Path) -> None:
    cfg = load_config(write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1")))
    bad = tmp_path / "submissions" / "beta" / "multimodal.jsonl"
    bad.write_text(
        '{"question_id": "food-0001", "response": "x"}\nnot json\n'
        '{"question_id": "food-0001", "response": "again"}\n{"question_id": 3}\n'
    )
    with pytest.raises(ProblemsError) as err:
        Project(cfg).units()
    # the validator's own reader: line 4 lacks a response and has a numeric id
    assert [p.line for p in err.value.problems] == [2, 3, 4, 4]
    with pytest.raises(ProblemsError, match="no submission 'gamma'"):
        Project(cfg).units(["gamma"])


def test_hub_rubrics_go_through_the_hub_module(tmp_path: Path) -> None:
    cfg_path = write_project(tmp_path, openai_judge("http://127.0.0.1:9/v1"))
    text = cfg_path.read_text().replace('rubrics = "rubrics"', 'rubrics = "hf://datasets/x"')
    cfg_path.write_text(text)
    with pytest.raises(GamutError):
        _ = Project(load_config(cfg_path)).rubrics_path
