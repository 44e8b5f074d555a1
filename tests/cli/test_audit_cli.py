"""``gamut audit sample`` through click's runner, on the tiny project with audit labels."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gamut.cli import main
from tests.tables.test_audit import LINES, audited_project


def test_sample_draws_ids_only_and_skips_audited_responses(tmp_path: Path) -> None:
    config = audited_project(tmp_path / "p", LINES)
    out = tmp_path / "draw.jsonl"
    args = ["audit", "sample", "--n", "5", "--out", str(out), "--seed", "4", "--config"]
    result = CliRunner().invoke(main, [*args, str(config)])
    assert result.exit_code == 0, result.output
    drawn = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(drawn) == 5 and "drew 5 of 9 responses" in " ".join(result.output.split())
    assert all(set(d) == {"submission_id", "setting", "question_id", "domain"} for d in drawn)
    # alpha's multimodal responses have labels (all three questions): never drawn again
    assert not [d for d in drawn if (d["submission_id"], d["setting"]) == ("alpha", "multimodal")]
    again = tmp_path / "again.jsonl"
    CliRunner().invoke(main, ["audit", "sample", "--n", "5", "--out", str(again), "--seed", "4",
                              "--config", str(config)])  # fmt: skip
    assert again.read_text() == out.read_text()


def test_sample_refuses_bad_labels_with_every_problem(tmp_path: Path) -> None:
    config = audited_project(tmp_path / "p", ['{"submission_id": "alpha"}', "not json"])
    result = CliRunner().invoke(
        main, ["audit", "sample", "--n", "2", "--out", str(tmp_path / "x.jsonl"), "--config",
               str(config)],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "team.jsonl:1" in result.output and "team.jsonl:2" in result.output
    assert not (tmp_path / "x.jsonl").exists()
