"""Every verdict row the project writes validates against ``verdict-row.schema.json``:
``gamut export verdicts`` in each format it writes, and the published verdict table."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from gamut.cli import main
from scoring.tables.published import judge_ids, verdict_table
from scoring.verdicts import VERDICT_ROW_COLUMNS
from tests.fakes.llm_server import FakeLLMServer
from tests.judge.project import QUESTIONS, TOTAL_CHECKS, openai_judge, write_project
from tests.schema_tally import errors, validate_file, written

SCHEMA = "verdict-row.schema.json"


def _json_value(v: Any) -> Any:
    """A cell as the JSON value it stands for (NaN and pandas' missing values are null)."""
    if isinstance(v, float) and math.isnan(v):
        return None
    return v.item() if hasattr(v, "item") else v


def _rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {k: _json_value(v) for k, v in row.items()} for row in df.astype(object).to_dict("records")
    ]


def _read(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".parquet":
        return _rows(pd.read_parquet(path))
    if path.suffix == ".csv":  # every cell is text: read it as the CSV's reader would type it
        return _rows(pd.read_csv(path, keep_default_na=False, dtype={"secondary": bool}))
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


@pytest.mark.parametrize("public", [True, False], ids=["public", "held"])
def test_exported_and_published_verdict_rows_validate_against_the_schema(
    tmp_path: Path, fake_llm: FakeLLMServer, public: bool
) -> None:
    cfg = str(write_project(tmp_path, openai_judge(fake_llm.openai_base_url), public=public))
    runner = CliRunner()
    assert runner.invoke(main, ["judge", "--config", cfg]).exit_code == 0
    for ext in ("parquet", "csv", "jsonl"):
        out = tmp_path / f"verdicts.{ext}"
        r = runner.invoke(main, ["export", "verdicts", "--out", str(out), "--config", cfg])
        assert r.exit_code == 0, r.output
        written()
        rows = _read(out)
        assert all(row["judge_id"] for row in rows)
        assert validate_file(SCHEMA, str(out), rows) == TOTAL_CHECKS
    source = tmp_path / "results" / "verdicts.parquet"
    assert validate_file(SCHEMA, str(source), _rows(pd.read_parquet(source))) == TOTAL_CHECKS
    domains = {q["question_id"]: q["domain"] for q in QUESTIONS}
    ids = judge_ids({"judges": {"gpt": {"provider": "openai", "model": "judge-model"}}})
    published = verdict_table(source, public, ids, domains)
    path = tmp_path / "published.parquet"
    pq.write_table(published, path)
    rows = _rows(pd.read_parquet(path))
    assert {row["domain"] for row in rows} == set(domains.values())
    assert validate_file(SCHEMA, "the published verdict table", rows) == TOTAL_CHECKS
    assert set(published.column_names) <= set(VERDICT_ROW_COLUMNS)


def test_the_schema_refuses_a_row_with_a_column_no_table_has() -> None:
    row = {
        "submission_id": "alpha",
        "setting": "multimodal",
        "judge": "j",
        "question_id": "q",
        "check_id": "I1",
        "kind": "fact",
        "tier": "valuable",
        "secondary": False,
        "verdict": "meets",
    }
    assert errors(SCHEMA, row) == []
    assert errors(SCHEMA, {**row, "judge_id": "openai:m@v1", "domain": "food"}) == []
    assert errors(SCHEMA, {**row, "score": 1})
    assert errors(SCHEMA, {**row, "secondary": "false"})


def test_exported_json_lines_escape_line_separators_in_rationales(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.responder = lambda body: json.dumps(
        {"verdict": "meets", "rationale": "One\u2028two\u2029three."}, ensure_ascii=False
    )
    cfg = str(write_project(tmp_path, openai_judge(fake_llm.openai_base_url)))
    runner = CliRunner()
    assert runner.invoke(main, ["judge", "--config", cfg]).exit_code == 0
    out = tmp_path / "v.jsonl"
    assert (
        runner.invoke(main, ["export", "verdicts", "--out", str(out), "--config", cfg]).exit_code
        == 0
    )
    text = out.read_text(encoding="utf-8")
    assert "\u2028" not in text and "\u2029" not in text
    assert len(text.splitlines()) == TOTAL_CHECKS  # any line splitter reads one row a line
    rows = [json.loads(line) for line in text.splitlines()]
    assert "One\u2028two\u2029three." in {r["rationale"] for r in rows}  # and empty responses
    validate_file(SCHEMA, str(out), rows)
