"""The published dataset as ``datasets`` sees it: every config of the layout, written to a local
folder, loads offline with the rows and columns its card documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from gamut.publish import publish_files
from scoring.tables.columns import TABLES
from tests.tables.conftest import main_project

REPO = "gamut-bench/results"
#: Loads every config in a fresh interpreter with the Hub switched off (both libraries read the
#: switch at import), printing rows and columns per config as JSON.
LOADER = """
import json, sys
import datasets
folder, cache, names = sys.argv[1], sys.argv[2], sys.argv[3:]
out = {}
for name in names:
    ds = datasets.load_dataset(folder, name, split="train", cache_dir=cache)
    out[name] = {"rows": ds.num_rows, "columns": ds.column_names,
                 "judge_id": sorted(set(ds["judge_id"])) if name == "verdicts" else []}
print(json.dumps(out))
"""

pytestmark = pytest.mark.slow


def _write_layout(root: Path) -> tuple[Path, str]:
    cfg = load_config(main_project().write(root / "project"))
    pipeline.score(Project(cfg))
    out = root / "dataset"
    for f in publish_files(Project(cfg), REPO):
        path = out / f.path_in_repo
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f.data)
    return out, (out / "README.md").read_text(encoding="utf-8")


def _load_all(folder: Path, cache: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HOME": str(cache / "home")}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", LOADER, str(folder), str(cache), *names],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_every_config_loads_with_datasets_offline(tmp_path: Path) -> None:
    folder, card = _write_layout(tmp_path)
    header = yaml.safe_load(card.split("---\n")[1])
    names = [c["config_name"] for c in header["configs"]]
    assert {"leaderboard", "verdicts", "questions", "question_scores", "by_domain", "by_kind",
            "modality", "judge_kappa", "judge_kappa_by_kind", "judge_tau",
            "judge_leniency"} <= set(names)  # fmt: skip
    loaded = _load_all(folder, tmp_path / "hf-cache", names)
    assert sorted(loaded) == sorted(names)
    for name, got in loaded.items():
        assert got["rows"] > 0, name
        row = next(ln for ln in card.splitlines() if ln.startswith(f"| `{name}` | `"))
        assert row.rstrip(" |").endswith(f"| {got['rows']}"), name
        section = card.split(f"### `{name}`\n")[1].split("\n### ")[0]
        for col in got["columns"]:
            assert f"| `{col}` |" in section, (name, col)
            assert TABLES[name][col][1] in section, (name, col)
    verdicts = loaded["verdicts"]
    assert "domain" in verdicts["columns"] and "judge_id" in verdicts["columns"]
    prov = json.loads((folder / "provenance.json").read_text())
    (template,) = {j["prompt_template"] for j in prov["judges"].values()}
    assert template and verdicts["judge_id"] == [f"replay:j{i}-model@{template}" for i in (1, 2)]


def test_empty_tables_are_left_out_and_named(tmp_path: Path) -> None:
    folder, card = _write_layout(tmp_path)
    assert not (folder / "data" / "incomplete.parquet").exists()
    header = yaml.safe_load(card.split("---\n")[1])
    assert "incomplete" not in {c["config_name"] for c in header["configs"]}
    assert "not published" in card and "`incomplete`" in card


def test_the_card_names_the_repo_licence_categories_and_citation(tmp_path: Path) -> None:
    _, card = _write_layout(tmp_path)
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["size_categories"] == ["n<1K"] or header["size_categories"][0].endswith("K")
    assert header["task_categories"] and header["language"] == ["en"]
    assert header["license"] == "apache-2.0"
    assert f'load_dataset("{REPO}", "leaderboard"' in card
    assert f"hf://datasets/{REPO}/" in card
    licence = card.split("## Licence\n")[1].split("\n## ")[0]
    assert "Apache License 2.0" in licence and "third-party" in licence
    assert "replay:j1-model" in licence
    citation = card.split("## Citation\n")[1]
    assert "```bibtex" in citation and "@misc{" in citation and REPO in citation
    assert "unique only within its question" in card
    assert "Secondary (extra-credit) checks count" in card
