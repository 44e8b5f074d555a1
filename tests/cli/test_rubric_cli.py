"""`gamut rubric lint | compile | show` and `gamut schema`, through click's runner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from gamut.cli import main

FIXTURES = Path(__file__).parents[1] / "scoring" / "fixtures"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_lint_clean_rubric(tmp_path: Path) -> None:
    code, out = run("rubric", "lint", str(FIXTURES / "pad_thai.json"))
    assert code == 0, out
    assert "1 valid rubric(s), 21 checks; 0 error(s), 0 warning(s)" in out


def test_lint_reports_every_problem_in_every_file(tmp_path: Path) -> None:
    good = json.loads((FIXTURES / "pad_thai.json").read_text())
    bad1 = json.loads(json.dumps(good)) | {"question_id": "bad-1"}
    bad1["items"][2]["baselines"] = [9]
    bad2 = json.loads(json.dumps(good)) | {"question_id": "bad-2"}
    bad2["items"][0]["cites"] = ["S7"]
    (tmp_path / "a.json").write_text(json.dumps(bad1))
    (tmp_path / "b.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad2) + "\n{oops\n")
    code, out = run("rubric", "lint", str(tmp_path))
    assert code == 1
    assert "a.json: question bad-1, item I3: baselines [9]" in out
    assert "b.jsonl:2: question bad-2, item I1: cites: unknown snippet 'S7'" in out
    assert "b.jsonl:3: not valid JSON" in out
    assert "3 error(s)" in out


def test_lint_warns_about_uncited_items_and_unused_snippets(tmp_path: Path) -> None:
    r = json.loads((FIXTURES / "pad_thai.json").read_text())
    r["items"][4]["cites"] = []
    (tmp_path / "r.json").write_text(json.dumps(r))
    code, out = run("rubric", "lint", str(tmp_path / "r.json"))
    assert code == 0
    assert "question food-0007, item I5: warning: item cites no snippet" in out
    assert "warning: snippet S2 is never cited" in out


def test_lint_missing_path_is_an_error(tmp_path: Path) -> None:
    code, out = run("rubric", "lint", str(tmp_path / "nope"))
    assert code == 1 and "no such file or folder" in out


def test_duplicate_question_across_files(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "pad_thai.json", tmp_path / "a.json")
    shutil.copy(FIXTURES / "pad_thai.json", tmp_path / "b.json")
    code, out = run("rubric", "lint", str(tmp_path))
    assert code == 1 and "a second rubric for question 'food-0007'" in out


def test_compile_writes_json_lines(tmp_path: Path) -> None:
    out_file = tmp_path / "checks.jsonl"
    code, out = run("rubric", "compile", str(FIXTURES / "pad_thai.json"), "-o", str(out_file))
    assert code == 0, out
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 21
    assert rows[0] == {
        "question_id": "food-0007",
        "check_id": "I1",
        "item_id": "I1",
        "kind": "fact",
        "tier": "answer_critical",
        "secondary": False,
        "text": "Identifies the dish as pad thai.",
        "cites": ["S1"],
    }


def test_compile_invalid_rubric_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"question_id": "x", "items": []}')
    out_file = tmp_path / "checks.jsonl"
    code, out = run("rubric", "compile", str(tmp_path / "r.json"), "-o", str(out_file))
    assert code == 1 and "items: List should have at least 1 item" in out
    assert not out_file.exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "r.json"]


def test_show_groups_checks_by_tier() -> None:
    result = CliRunner().invoke(
        main,
        ["rubric", "show", str(FIXTURES / "pad_thai.json"), "--question", "food-0007"],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    for heading in ("answer_critical (", "valuable (", "context ("):
        assert heading in result.output
    assert "I4.seq_all *" in result.output
    code, out = run("rubric", "show", str(FIXTURES / "pad_thai.json"), "--question", "nope")
    assert code == 1 and "no rubric for question 'nope'" in out


def test_usage_error_exits_2() -> None:
    code, _ = run("rubric", "show", str(FIXTURES / "pad_thai.json"))
    assert code == 2


def test_schema_writes_every_format(tmp_path: Path) -> None:
    code, out = run("schema", str(tmp_path))
    assert code == 0, out
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(
        [
            "audit-label.schema.json",
            "check.schema.json",
            "meta-rubric.schema.json",
            "question.schema.json",
            "response-line.schema.json",
            "submission.schema.json",
            "verdict-row.schema.json",
        ]
    )
    rubric_schema = json.loads((tmp_path / "meta-rubric.schema.json").read_text())
    assert {"question_id", "items"} <= set(rubric_schema["required"])
