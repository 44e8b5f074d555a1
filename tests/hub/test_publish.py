"""Publishing results: the files and commit operations built, checked without any network."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import CommitOperationAdd, CommitOperationDelete

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from gamut.publish import build_publish_operations, publish_files, publish_results
from scoring.errors import GamutError
from tests.hub.conftest import write_config
from tests.tables.conftest import main_project
from tests.tables.project import CHECKS

SECRET = "Identifies the dish as pad thai."
RATIONALE = "It says pad thai."
REPO = "gamut-bench/results"
#: ``gamut export verdicts`` columns plus the question's domain.
PUBLISHED = ["submission_id", "setting", "judge", "judge_id", "question_id", "domain", "check_id",
             "kind", "tier", "secondary", "verdict"]  # fmt: skip


def _project(root: Path, public: bool) -> Project:
    """A scored project whose verdicts carry check text and rationales."""
    config = main_project().write(root / "project")
    if public:
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("[benchmark]\n", "[benchmark]\nrubrics_public = true\n"))
    path = root / "project" / "results" / "verdicts.parquet"
    verdicts = pq.read_table(path)
    n = verdicts.num_rows
    verdicts = verdicts.append_column("rationale", pa.array([RATIONALE] * n))
    pq.write_table(verdicts.append_column("check_text", pa.array([SECRET] * n)), path)
    project = Project(load_config(config))
    pipeline.score(project)
    return project


def _files(tmp_path: Path, public: bool) -> dict[str, bytes]:
    return {f.path_in_repo: f.data for f in publish_files(_project(tmp_path, public), REPO)}


def test_layout_and_dataset_card(tmp_path: Path) -> None:
    files = _files(tmp_path, public=False)
    assert {
        "README.md",
        "croissant.json",
        "every_eval_ever.jsonl",
        "leaderboard.parquet",
        "leaderboard.csv",
        "provenance.json",
        "questions.parquet",
        "responses.parquet",
        "by_domain.parquet",
        "verdicts.parquet",
        "verdicts/alpha.parquet",
        "verdicts/beta.parquet",
    } <= set(files)
    assert not any(name.startswith("data/") for name in files)
    card = files["README.md"].decode()
    assert card.startswith("---\n")
    header = yaml.safe_load(card.split("---\n")[1])
    configs = {c["config_name"]: c for c in header["configs"]}
    assert configs["leaderboard"]["default"] is True
    assert configs["leaderboard"]["data_files"] == [
        {"split": "train", "path": "leaderboard.parquet"}
    ]
    assert configs["verdicts"]["data_files"][0]["path"] == "verdicts.parquet"
    assert {"leaderboard", "verdicts", "by_domain", "questions", "responses"} <= set(configs)
    assert "held" in card and f'load_dataset("{REPO}", "leaderboard"' in card


def test_held_rubrics_never_leave(tmp_path: Path) -> None:
    files = _files(tmp_path, public=False)
    for name, data in files.items():
        assert SECRET.encode() not in data, name
        assert RATIONALE.encode() not in data, name
    v = pd.read_parquet(io.BytesIO(files["verdicts/alpha.parquet"]))
    assert list(v.columns) == PUBLISHED
    assert len(v) and set(v["check_id"]) <= {c for cs in CHECKS.values() for c in cs}


def test_public_rubrics_keep_text_columns(tmp_path: Path) -> None:
    files = _files(tmp_path, public=True)
    v = pd.read_parquet(io.BytesIO(files["verdicts/beta.parquet"]))
    assert len(v) and set(v["check_text"]) == {SECRET}
    assert set(v["rationale"]) == {RATIONALE}


def test_tables_are_plain_typed_and_carry_provenance(tmp_path: Path) -> None:
    files = _files(tmp_path, public=False)
    table = pq.read_table(io.BytesIO(files["leaderboard.parquet"]))
    assert str(table.schema.field("submission_id").type) == "string"
    meta = table.schema.metadata or {}
    provenance = json.loads(files["provenance.json"])
    assert json.loads(meta[b"gamut.provenance"])["rubric_version"] == provenance["rubric_version"]
    scored = pd.read_parquet(tmp_path / "project" / "results" / "leaderboard.parquet")
    assert table.to_pandas()["gamut"].tolist() == scored["gamut"].tolist()


def test_operations_add_everything_and_delete_only_stale_data(tmp_path: Path) -> None:
    files = publish_files(_project(tmp_path, public=False), REPO)
    existing = [
        "README.md",
        ".gitattributes",
        "data/verdicts/gone.parquet",
        "data/leaderboard.parquet",
        "verdicts/gone.parquet",
        "gone.csv",
        "notes/keep.md",
    ]
    ops = build_publish_operations(files, existing)
    adds = [o for o in ops if isinstance(o, CommitOperationAdd)]
    deletes = [o for o in ops if isinstance(o, CommitOperationDelete)]
    assert [o.path_in_repo for o in adds] == [f.path_in_repo for f in files]
    assert [o.path_in_repo for o in deletes] == [
        "data/leaderboard.parquet",
        "data/verdicts/gone.parquet",
        "gone.csv",
        "verdicts/gone.parquet",
    ]
    assert len(ops) == len(files) + 4
    readme = next(o for o in adds if o.path_in_repo == "README.md")
    assert readme.path_or_fileobj == next(f.data for f in files if f.path_in_repo == "README.md")


def test_missing_results_name_the_command(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path, "rubrics"))
    with pytest.raises(GamutError, match="gamut score"):
        publish_files(Project(cfg), REPO)


def test_publish_needs_a_token_and_a_repo_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = load_config(write_config(tmp_path, "rubrics"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(GamutError, match="set HF_TOKEN"):
        publish_results(Project(cfg), "gamut/results")
    with pytest.raises(GamutError, match="ORG/NAME"):
        publish_results(Project(cfg), "not a repo")
