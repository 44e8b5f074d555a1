"""The published dataset as ``datasets`` sees it: every config of the layout, written to a local
folder, loads offline with the rows and columns its card documents; the layout is the site's
downloads folder, with the Every Eval Ever export and a Croissant description that validates."""

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
from scoring.tables.columns import TABLES
from tests.dataset_loading import load_configs, read_everywhere
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


def test_empty_tables_are_published_but_no_config(tmp_path: Path) -> None:
    folder, card = _write_layout(tmp_path)
    assert read_everywhere(folder / "incomplete.parquet") == 0
    header = yaml.safe_load(card.split("---\n")[1])
    assert "incomplete" not in {c["config_name"] for c in header["configs"]}
    assert "not a config" in card and "`incomplete`" in card.split("## Loading")[1]


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


def test_the_hub_layout_is_the_sites_downloads_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mlcroissant as mlc

    project = Project(load_config(main_project().write(tmp_path / "project")))
    pipeline.score(project)
    folder, _ = _write_layout(tmp_path, project)
    site = pipeline.build_site(project) / "downloads"
    hub = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    ours = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    assert hub == ours and {"every_eval_ever.jsonl", "croissant.json"} <= set(hub)
    compared = 0
    for name in hub:
        if name.endswith(".parquet"):
            hub_schema, site_schema = pq.read_schema(folder / name), pq.read_schema(site / name)
            assert hub_schema.remove_metadata() == site_schema.remove_metadata(), name
            assert not any(pa.types.is_null(f.type) for f in hub_schema), name
            compared += 1
        elif name not in ("README.md", "croissant.json"):  # the card names the repo
            assert (folder / name).read_bytes() == (site / name).read_bytes(), name
    assert compared >= 10
    lb = pq.read_table(project.results_layout.table("leaderboard"))
    empty_text = [f.name for f in lb.schema if pa.types.is_null(f.type)]
    assert empty_text, "the fixture has no all-empty text column: this test would prove nothing"
    board = pq.read_schema(folder / "leaderboard.parquet")
    assert all(board.field(c).type == pa.string() for c in empty_text)
    assert f'load_dataset("{REPO}", "leaderboard"' not in (site / "README.md").read_text()
    # the Croissant description validates and reads every table (offline)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    dataset = mlc.Dataset(jsonld=folder / "croissant.json")
    issues = dataset.metadata.ctx.issues
    assert not issues.errors and not issues.warnings, issues.report()
    for record_set in dataset.metadata.record_sets:
        rows = sum(1 for _ in dataset.records(record_set=record_set.uuid))
        assert rows == pq.read_metadata(folder / f"{record_set.name}.parquet").num_rows
