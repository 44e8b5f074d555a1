"""The published dataset as ``datasets`` sees it: every config of the layout, written to a local
folder, loads offline with the rows and columns its card documents."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from gamut.publish import publish_files
from generator.downloads import Download, dataset_card, write_downloads
from generator.tables import load_tables
from scoring.tables.columns import TABLES
from tests.dataset_loading import card_configs, load_configs, read_everywhere
from tests.tables.conftest import main_project

REPO = "gamut-bench/results"
pytestmark = pytest.mark.slow


def _write_layout(root: Path, project: Project | None = None) -> tuple[Path, str]:
    """The folder ``gamut publish`` would upload, of ``project`` (default: a scored project
    under ``root/project``)."""
    if project is None:
        project = Project(load_config(main_project().write(root / "project")))
        pipeline.score(project)
    out = root / "dataset"
    for f in publish_files(project, REPO):
        path = out / f.path_in_repo
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f.data)
    return out, (out / "README.md").read_text(encoding="utf-8")


def test_every_config_loads_with_datasets_offline(tmp_path: Path) -> None:
    folder, card = _write_layout(tmp_path)
    header = yaml.safe_load(card.split("---\n")[1])
    names = [c["config_name"] for c in header["configs"]]
    assert {"leaderboard", "verdicts", "questions", "question_scores", "by_domain", "by_kind",
            "modality", "judge_kappa", "judge_kappa_by_kind", "judge_tau",
            "judge_leniency"} <= set(names)  # fmt: skip
    loaded = load_configs(folder, tmp_path / "hf-cache", names)
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


def test_the_site_and_the_hub_copies_share_one_schema(tmp_path: Path) -> None:
    project = Project(load_config(main_project().write(tmp_path / "project")))
    pipeline.score(project)
    folder, _ = _write_layout(tmp_path, project)
    docs = tmp_path / "docs"
    dl = write_downloads(
        load_tables(project.results_layout.root),
        docs,
        public=project.rubrics_public,
        questions=project.questions,
    )
    site = docs / "downloads"
    main: list[object] = list(dl["main"])  # type: ignore[call-overload]
    listed = [d for d in (dl["verdicts"], *main) if isinstance(d, Download)]
    card = dataset_card(listed, load_tables(project.results_layout.root).provenance,
                        title="T", description="D", public=project.rubrics_public)  # fmt: skip
    (site / "README.md").write_text(card, encoding="utf-8")
    lb = pq.read_table(project.results_layout.table("leaderboard"))
    empty_text = [f.name for f in lb.schema if pa.types.is_null(f.type)]
    assert empty_text, "the fixture has no all-empty text column: this test would prove nothing"
    (one,) = sorted((folder / "data" / "verdicts").glob("*.parquet"))[:1]
    pairs = [(p, site / p.name) for p in sorted((folder / "data").glob("*.parquet"))]
    pairs.append((one, site / "verdicts.parquet"))
    compared = 0
    for hub_file, site_file in pairs:
        if not site_file.is_file():  # the responses come with the full build
            continue
        hub, ours = pq.read_schema(hub_file), pq.read_schema(site_file)
        assert ours.remove_metadata() == hub.remove_metadata(), site_file.name
        assert not any(pa.types.is_null(f.type) for f in ours), site_file.name
        compared += 1
    assert compared >= 10
    board = pq.read_schema(site / "leaderboard.parquet")
    assert all(board.field(c).type == pa.string() for c in empty_text)
    # the site's folder loads too; a zero-row table is no config (datasets loads none) but
    # pandas, pyarrow and DuckDB read it
    assert read_everywhere(site / "incomplete.parquet") == 0
    configs = card_configs(site)
    assert "incomplete" not in configs and "`incomplete`" in card.split("## Loading")[1]
    loaded = load_configs(site, tmp_path / "hf-site", sorted(configs))
    assert {n: g["rows"] for n, g in loaded.items()} == {
        n: pq.read_metadata(site / files[0]).num_rows for n, files in configs.items()
    }
