"""Every JSON Lines file the project reads goes through the one reader: lines end at ``\\n``
only, so a raw U+2028 or U+2029 inside a string (what ``json.dumps(..., ensure_ascii=False)``
writes) is text, and problems name the file and the right line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.errors import ProblemsError, RubricError
from scoring.questions import load_questions
from scoring.rubric_io import load_rubrics
from tests.judge.project import QUESTIONS, RUBRICS

#: What str.splitlines() splits on and json.dumps(ensure_ascii=False) writes raw.
SEPARATORS = ["\u2028", "\u2029", "\x85"]


def _line(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(c):04X}" for c in SEPARATORS])
def test_questions_keep_a_raw_line_separator_inside_a_string(tmp_path: Path, sep: str) -> None:
    first = {**QUESTIONS[0], "question": f"What is{sep}this dish?"}
    path = tmp_path / "questions.jsonl"
    path.write_text(_line(first) + "\n" + _line(QUESTIONS[1]), encoding="utf-8")
    assert sep in path.read_text(encoding="utf-8")  # raw, not escaped
    got = load_questions(path)
    assert [q.question for q in got] == [first["question"], QUESTIONS[1]["question"]]


def test_a_bad_question_line_is_named_by_its_line_after_a_raw_separator(tmp_path: Path) -> None:
    path = tmp_path / "questions.jsonl"
    first = {**QUESTIONS[0], "question": "What\u2028is\u2029this?"}
    path.write_text(_line(first) + '{"question_id": \n', encoding="utf-8")
    with pytest.raises(ProblemsError) as exc:
        load_questions(path)
    (p,) = exc.value.problems
    assert (p.file, p.line) == (str(path), 2) and p.message.startswith("not valid JSON")
    assert p.fix


@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(c):04X}" for c in SEPARATORS])
def test_rubric_jsonl_keeps_a_raw_line_separator_inside_a_string(tmp_path: Path, sep: str) -> None:
    rubric = json.loads(json.dumps(RUBRICS[0]))
    rubric["items"][0]["text"] = f"Identifies{sep}the dish."
    path = tmp_path / "rubrics.jsonl"
    path.write_text(_line(rubric) + _line(RUBRICS[1]), encoding="utf-8")
    got = load_rubrics([path])
    assert sorted(got) == sorted(r["question_id"] for r in RUBRICS[:2])
    assert got[rubric["question_id"]].items[0].text == f"Identifies{sep}the dish."  # type: ignore[union-attr]


def test_rubric_jsonl_problems_name_file_and_line_in_line_order(tmp_path: Path) -> None:
    rubric = json.loads(json.dumps(RUBRICS[0]))
    rubric["items"][0]["text"] = "one\u2028two"
    bad_item = json.loads(json.dumps(RUBRICS[1]))
    bad_item["items"][0]["tier"] = "critical"
    path = tmp_path / "rubrics.jsonl"
    path.write_text(_line(rubric) + "[1,\n" + "\n" + _line(bad_item), encoding="utf-8")
    with pytest.raises(RubricError) as exc:
        load_rubrics([path])
    where = [(p.file, p.line) for p in exc.value.problems]
    assert where == [(str(path), 2), (str(path), 4)]
    assert exc.value.problems[0].message.startswith("not valid JSON")


def test_a_rubric_line_nested_too_deeply_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "rubrics.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(RubricError) as exc:
        load_rubrics([path])
    (p,) = exc.value.problems
    assert p.line == 1 and "nested" in p.message


def test_questions_export_escapes_line_separators(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gamut.cli import main
    from tests.judge.project import openai_judge, write_project

    cfg = write_project(tmp_path, openai_judge("http://127.0.0.1:9"))
    qs = tmp_path / "questions.jsonl"
    first = {**QUESTIONS[0], "question": "What\u2028is this?"}
    qs.write_text(_line(first) + _line(QUESTIONS[1]), encoding="utf-8")
    out = tmp_path / "export.jsonl"
    args = [
        "questions",
        "export",
        "--setting",
        "multimodal",
        "--out",
        str(out),
        "--config",
        str(cfg),
    ]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    assert "\u2028" not in text and len(text.splitlines()) == 2
    assert json.loads(text.splitlines()[0])["question"] == "What\u2028is this?"
