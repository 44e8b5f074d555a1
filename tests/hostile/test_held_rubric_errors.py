"""With held rubrics, a broken rubric is named by question, item and rule, never by its text."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamut.cli import main
from tests.judge.project import RUBRICS, openai_judge, write_project

SECRET = "THE EASTERN HIMALAYAS"


def _broken() -> list[dict[str, object]]:
    rubrics = copy.deepcopy(RUBRICS)
    items = rubrics[0]["items"]
    assert isinstance(items, list)
    items[1]["members"] = [SECRET, SECRET.lower(), "rice noodles"]  # members must be distinct
    items[0]["tier"] = f"{SECRET} tier"  # an unknown tier, quoted back by the validator
    return rubrics


@pytest.mark.parametrize("command", [["judge"], ["score"], ["run", "--no-site"]])
def test_held_rubric_errors_name_question_item_and_rule_only(
    tmp_path: Path, command: list[str]
) -> None:
    cfg = write_project(
        tmp_path, openai_judge("http://127.0.0.1:9/v1"), public=False, rubrics=_broken()
    )
    result = CliRunner().invoke(main, [*command, "--config", str(cfg)])
    assert result.exit_code == 1, result.output
    out = result.output
    assert "question food-0001, item I2" in out and "must be distinct" in out
    assert "question food-0001, item I1" in out
    assert SECRET.casefold() not in out.casefold()


def test_public_rubric_errors_still_quote_the_repeated_members(tmp_path: Path) -> None:
    cfg = write_project(
        tmp_path, openai_judge("http://127.0.0.1:9/v1"), public=True, rubrics=_broken()
    )
    result = CliRunner().invoke(main, ["judge", "--config", str(cfg)])
    assert result.exit_code == 1
    assert SECRET in result.output
