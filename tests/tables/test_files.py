"""Reading inputs and writing files: determinism and every input error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.errors import GamutError, ProblemsError
from scoring.tables import tables as tables_module
from scoring.tables import write as write_module
from scoring.tables.registry import score_tables
from tests.tables.conftest import main_project, main_verdict


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_two_runs_write_identical_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    cfg = load_config(main_project().write(tmp_path))
    first = pipeline.score(Project(cfg))
    before = _snapshot(first.out_dir)
    pipeline.score(Project(cfg))
    assert _snapshot(first.out_dir) == before
    assert json.loads(before["provenance.json"])["generated_at"] == "2026-01-01T00:00:00Z"


def test_a_table_that_fails_to_build_leaves_the_results_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = main_project().write(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    out = pipeline.score(Project(load_config(config))).out_dir
    before = _snapshot(out)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767229200")  # a file written again would differ
    encoded: list[str] = []
    real = write_module.parquet_bytes

    def counting(table: pa.Table, prov: dict[str, Any]) -> bytes:
        encoded.append(table.schema.names[0])
        return real(table, prov)

    def broken(_scores: Any) -> Any:
        raise GamutError("the last table cannot be built")

    monkeypatch.setattr(write_module, "parquet_bytes", counting)
    monkeypatch.setattr(tables_module, "incomplete", broken)  # the last table built
    with pytest.raises(GamutError, match="cannot be built"):
        pipeline.score(Project(load_config(config)))
    assert len(encoded) == len(score_tables()) - 1  # those before it were encoded as they came
    assert _snapshot(out) == before  # ... and none was written


def test_new_rubric_check_without_verdict_makes_submissions_incomplete(tmp_path: Path) -> None:
    config = main_project().write(tmp_path)
    pipeline.score(Project(load_config(config)))
    rubric = tmp_path / "rubrics" / "food-2.json"
    obj = json.loads(rubric.read_text())
    obj["items"].append({"id": "I3", "type": "fact", "tier": "context", "text": "Adds one."})
    rubric.write_text(json.dumps(obj))
    t = pipeline.score(Project(load_config(config)))
    assert set(t.leaderboard["status"]) == {"incomplete"}
    assert set(t["incomplete"]["n_missing"]) == {1}


def test_stale_rows_are_counted_and_ignored(tmp_path: Path) -> None:
    config = main_project(models={"alpha": "acme"}).write(tmp_path)
    path = tmp_path / "results" / "verdicts.parquet"
    table = pq.read_table(path)
    extra = table.slice(0, 3).set_column(0, "submission_id", pa.array(["gone"] * 3))
    pq.write_table(pa.concat_tables([table, extra]), path)
    t = pipeline.score(Project(load_config(config)))
    assert t.provenance["ignored_verdict_rows"] == 3
    assert set(t.leaderboard["status"]) == {"complete"}


def test_duplicate_and_unknown_verdicts_are_errors(tmp_path: Path) -> None:
    config = main_project().write(tmp_path)
    path = tmp_path / "results" / "verdicts.parquet"
    original = pq.read_table(path)
    pq.write_table(pa.concat_tables([original, original.slice(0, 1)]), path)
    with pytest.raises(GamutError, match="more than one"):
        pipeline.score(Project(load_config(config)))
    bad = original.set_column(8, "verdict", pa.array(["meets"] * (original.num_rows - 1) + ["yes"]))
    pq.write_table(bad, path)
    with pytest.raises(GamutError, match="'yes'"):
        pipeline.score(Project(load_config(config)))
    path.unlink()
    with pytest.raises(GamutError, match="gamut judge"):
        pipeline.score(Project(load_config(config)))


def test_question_without_rubric_is_listed(tmp_path: Path) -> None:
    config = main_project().write(tmp_path)
    (tmp_path / "rubrics" / "plant-3.json").unlink()
    with pytest.raises(ProblemsError) as err:
        pipeline.score(Project(load_config(config)))
    assert [p.question_id for p in err.value.problems] == ["plant-3"]


def test_submission_without_verdicts_at_all_is_incomplete(tmp_path: Path) -> None:
    def verdict(sub: str, setting: str, judge: str, qid: str, cid: str) -> str | None:
        return None if judge == "j2" else main_verdict(sub, setting, judge, qid, cid)

    t = pipeline.score(Project(load_config(main_project(verdict=verdict).write(tmp_path))))
    j2 = t.leaderboard[t.leaderboard["judge"] == "j2"]
    assert len(j2) == 4 and set(j2["status"]) == {"incomplete"}
    assert set(t["incomplete"]["n_judged"]) == {0}
    assert len(t["judge_tau"]) == 2 and t["judge_tau"]["n_models"].eq(0).all()


def test_no_submissions_and_one_judge_give_empty_tables(tmp_path: Path) -> None:
    t = pipeline.score(Project(load_config(main_project(models={}).write(tmp_path / "none"))))
    assert t.leaderboard.empty and t["question_scores"].empty
    assert "gamut_lo" in t.leaderboard.columns and (t.out_dir / "leaderboard.csv").is_file()
    one = pipeline.score(
        Project(load_config(main_project(judges={"j1": "acme"}).write(tmp_path / "one")))
    )
    assert one["judge_tau"].empty and one["judge_kappa"].empty
    assert len(one.leaderboard) == 4 and one["judge_leniency"]["offset"].eq(0).all()


def test_response_length_counts_characters_not_bytes(tmp_path: Path) -> None:
    project = main_project(responses={("alpha", "multimodal", "food-1"): "héllo wörld ☕"})
    t = pipeline.score(Project(load_config(project.write(tmp_path))))
    qs = t["question_scores"]
    mask = (qs["submission_id"] == "alpha") & (qs["setting"] == "multimodal")
    assert sorted(qs.loc[mask & (qs["judge"] == "j1"), "response_chars"]) == [10, 10, 13]
    lb = t.leaderboard.set_index(["submission_id", "setting", "judge"])
    assert lb.loc[("alpha", "multimodal", "j1"), "mean_response_chars"] == 11


def test_a_bad_response_file_is_reported(tmp_path: Path) -> None:
    project = Project(load_config(main_project().write(tmp_path)))
    pipeline.score(project)
    path = tmp_path / "submissions" / "alpha" / "multimodal.jsonl"
    lines = path.read_text("utf-8").splitlines()
    path.write_text("\n".join([*lines, "{not json"]) + "\n", "utf-8")
    with pytest.raises(ProblemsError, match="cannot read the responses") as err:
        pipeline.score(Project(project.cfg))
    assert [p.line for p in err.value.problems] == [len(lines) + 1]
