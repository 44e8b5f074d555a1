"""Publishing results: the files and commit operations built, checked without any network."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import CommitOperationAdd, CommitOperationDelete

from gamut.config import load_config
from gamut.hub import HubError
from gamut.project import Project
from gamut.publish import build_publish_operations, publish_files, publish_results
from tests.hub.conftest import write_config

SECRET = "Identifies the dish as pad thai."
REPO = "gamut-bench/results"


def _results(root: Path) -> None:
    res = root / "results"
    res.mkdir(parents=True)
    lb = pd.DataFrame(
        {
            "submission_id": pd.Categorical(["m-one", "m-two"]),
            "setting": ["multimodal", "multimodal"],
            "judge": ["j1", "j1"],
            "gamut": [41.5, 12.0],
            "rank": [1, 2],
        }
    )
    lb.to_parquet(res / "leaderboard.parquet")
    pd.DataFrame({"submission_id": ["m-one"], "domain": ["food"], "gamut": [41.5]}).to_parquet(
        res / "by_domain.parquet"
    )
    verdicts = pd.DataFrame(
        {
            "submission_id": pd.Categorical(["m-one", "m-one", "m-two"]),
            "setting": ["multimodal"] * 3,
            "judge": ["j1"] * 3,
            "question_id": ["food-0001"] * 3,
            "check_id": ["I1", "I2.m1", "I1"],
            "kind": ["fact", "member", "fact"],
            "tier": ["answer_critical", "valuable", "answer_critical"],
            "secondary": [False, False, False],
            "verdict": ["meets", "missing", "contradicts"],
            "rationale": ["It says pad thai."] * 3,
            "check_text": [SECRET, "Mentions rice noodles.", SECRET],
        }
    )
    verdicts.to_parquet(res / "verdicts.parquet")
    (res / "provenance.json").write_text(
        json.dumps(
            {
                "rubric_version": "abc123",
                "primary_judge": "j1",
                "judges": {"j1": {"provider": "replay", "model": "m1", "prompt_version": "v1"}},
            }
        )
    )
    question = {"question_id": "food-0001", "image_id": "img-1", "image": None, "domain": "food",
                "popularity": "head", "egocentric": True, "question": "What is this dish?",
                "text_only_question": "What is pad thai?"}  # fmt: skip
    (root / "questions.jsonl").write_text(json.dumps(question) + "\n")


def _files(tmp_path: Path, public: bool) -> dict[str, bytes]:
    _results(tmp_path)
    cfg = load_config(write_config(tmp_path, "rubrics", public=public))
    return {f.path_in_repo: f.data for f in publish_files(Project(cfg), REPO)}


def test_layout_and_dataset_card(tmp_path: Path) -> None:
    files = _files(tmp_path, public=False)
    assert sorted(files) == [
        "README.md",
        "data/by_domain.parquet",
        "data/leaderboard.parquet",
        "data/questions.parquet",
        "data/verdicts/m-one.parquet",
        "data/verdicts/m-two.parquet",
        "provenance.json",
    ]
    card = files["README.md"].decode()
    assert card.startswith("---\n")
    header = yaml.safe_load(card.split("---\n")[1])
    configs = {c["config_name"]: c for c in header["configs"]}
    assert configs["leaderboard"]["default"] is True
    assert configs["leaderboard"]["data_files"] == [
        {"split": "train", "path": "data/leaderboard.parquet"}
    ]
    assert configs["verdicts"]["data_files"][0]["path"] == "data/verdicts/*.parquet"
    assert set(configs) == {"leaderboard", "verdicts", "by_domain", "questions"}
    assert "held" in card


def test_held_rubrics_never_leave(tmp_path: Path) -> None:
    files = _files(tmp_path, public=False)
    for name, data in files.items():
        assert SECRET.encode() not in data, name
        assert b"It says pad thai" not in data, name
    v = pd.read_parquet(io.BytesIO(files["data/verdicts/m-one.parquet"]))
    assert list(v.columns) == [
        "submission_id",
        "setting",
        "judge",
        "judge_id",
        "question_id",
        "domain",
        "check_id",
        "kind",
        "tier",
        "secondary",
        "verdict",
    ]
    assert v["check_id"].tolist() == ["I1", "I2.m1"]


def test_public_rubrics_keep_text_columns(tmp_path: Path) -> None:
    files = _files(tmp_path, public=True)
    v = pd.read_parquet(io.BytesIO(files["data/verdicts/m-two.parquet"]))
    assert v["check_text"].tolist() == [SECRET]
    assert "rationale" in v.columns


def test_tables_are_plain_typed_and_carry_provenance(tmp_path: Path) -> None:
    files = _files(tmp_path, public=False)
    table = pq.read_table(io.BytesIO(files["data/leaderboard.parquet"]))
    assert str(table.schema.field("submission_id").type) == "string"
    meta = table.schema.metadata or {}
    assert json.loads(meta[b"gamut.provenance"])["rubric_version"] == "abc123"
    lb = table.to_pandas()
    assert lb["gamut"].tolist() == [41.5, 12.0]


def test_operations_add_everything_and_delete_only_stale_data(tmp_path: Path) -> None:
    _results(tmp_path)
    files = publish_files(Project(load_config(write_config(tmp_path, "rubrics"))), REPO)
    existing = [
        "README.md",
        ".gitattributes",
        "data/verdicts/gone.parquet",
        "data/leaderboard.parquet",
        "notes/keep.md",
    ]
    ops = build_publish_operations(files, existing)
    adds = [o for o in ops if isinstance(o, CommitOperationAdd)]
    deletes = [o for o in ops if isinstance(o, CommitOperationDelete)]
    assert [o.path_in_repo for o in adds] == [f.path_in_repo for f in files]
    assert [o.path_in_repo for o in deletes] == ["data/verdicts/gone.parquet"]
    assert len(ops) == len(files) + 1
    readme = next(o for o in adds if o.path_in_repo == "README.md")
    assert readme.path_or_fileobj == next(f.data for f in files if f.path_in_repo == "README.md")


def test_missing_results_name_the_command(tmp_path: Path) -> None:
    cfg = load_config(write_config(tmp_path, "rubrics"))
    with pytest.raises(HubError, match="gamut score"):
        publish_files(Project(cfg), REPO)


def test_publish_needs_a_token_and_a_repo_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _results(tmp_path)
    cfg = load_config(write_config(tmp_path, "rubrics"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(HubError, match="set HF_TOKEN"):
        publish_results(Project(cfg), "gamut/results")
    with pytest.raises(HubError, match="ORG/NAME"):
        publish_results(Project(cfg), "not a repo")
